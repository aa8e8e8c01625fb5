/* tests/unit/check_escape.c - usl/escape: peer byte strings as safe text. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "usl/escape.h"

/* in is given with its length: NUL is data. */
#define IN(s)	s, sizeof(s) - 1

static const struct {
	const char *why;
	const char *in;
	size_t inlen;
	const char *want;
} cases[] = {
	{ "empty", IN(""), "" },
	{ "printable ASCII kept", IN("pw-1 ~ok!"), "pw-1 ~ok!" },
	{ "ESC and BEL", IN("\x1b]0;pwned\a\x1b[2J"), "\\x1b]0;pwned\\x07\\x1b[2J" },
	{ "newline cannot forge a line", IN("a\nb\r"), "a\\x0ab\\x0d" },
	{ "NUL in the middle kept as data", IN("a\0b"), "a\\x00b" },
	{ "trailing NUL", IN("ab\0"), "ab\\x00" },
	{ "backslash doubled", IN("a\\x1b"), "a\\\\x1b" },
	{ "DEL", IN("\x7f"), "\\x7f" },
	{ "2-byte UTF-8 kept", IN("caf\xc3\xa9"), "caf\xc3\xa9" },
	{ "3-byte UTF-8 kept", IN("\xe2\x82\xac 5"), "\xe2\x82\xac 5" },
	{ "4-byte UTF-8 kept", IN("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80" },
	{ "U+00A0 kept (first after C1)", IN("\xc2\xa0"), "\xc2\xa0" },
	{ "U+10FFFF kept", IN("\xf4\x8f\xbf\xbf"), "\xf4\x8f\xbf\xbf" },
	{ "C1 CSI escaped", IN("\xc2\x9b" "2J"), "\\xc2\\x9b2J" },
	{ "C1 U+0080 escaped", IN("\xc2\x80"), "\\xc2\\x80" },
	{ "invalid bytes", IN("\xff\xfe"), "\\xff\\xfe" },
	{ "lone continuation", IN("a\x80z"), "a\\x80z" },
	{ "overlong 2-byte '/'", IN("\xc0\xaf"), "\\xc0\\xaf" },
	{ "overlong 2-byte NUL", IN("\xc1\x80"), "\\xc1\\x80" },
	{ "overlong 3-byte", IN("\xe0\x80\xaf"), "\\xe0\\x80\\xaf" },
	{ "overlong 4-byte", IN("\xf0\x80\x80\xaf"), "\\xf0\\x80\\x80\\xaf" },
	{ "surrogate U+D800", IN("\xed\xa0\x80"), "\\xed\\xa0\\x80" },
	{ "above U+10FFFF", IN("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80" },
	{ "F5 never leads", IN("\xf5\x80\x80\x80"), "\\xf5\\x80\\x80\\x80" },
	{ "truncated 3-byte at end", IN("x\xe2\x82"), "x\\xe2\\x82" },
	{ "truncated 3-byte then ASCII", IN("\xe2\x82" "A"), "\\xe2\\x82A" },
	{ "truncated 4-byte then valid", IN("\xf0\x9f\xc3\xa9"), "\\xf0\\x9f\xc3\xa9" },
	{ "ESC inside a sequence", IN("\xe2\x1b\xac"), "\\xe2\\x1b\\xac" },
	{ "RLO U+202E escaped", IN("a\xe2\x80\xae" "b"), "a\\xe2\\x80\\xaeb" },
	{ "LRE U+202A escaped", IN("\xe2\x80\xaa"), "\\xe2\\x80\\xaa" },
	{ "LRM U+200E escaped", IN("\xe2\x80\x8e"), "\\xe2\\x80\\x8e" },
	{ "RLI U+2067 escaped", IN("\xe2\x81\xa7"), "\\xe2\\x81\\xa7" },
	{ "PDI U+2069 escaped", IN("\xe2\x81\xa9"), "\\xe2\\x81\\xa9" },
	{ "ALM U+061C escaped", IN("\xd8\x9c"), "\\xd8\\x9c" },
	{ "U+2010 hyphen kept", IN("\xe2\x80\x90"), "\xe2\x80\x90" },
	{ "U+202F kept", IN("\xe2\x80\xaf"), "\xe2\x80\xaf" },
};

START_TEST(test_table)
{
	char out[256];
	size_t n = usl_str_escape(out, sizeof(out), cases[_i].in, cases[_i].inlen);

	ck_assert_msg(strcmp(out, cases[_i].want) == 0, "%s: got \"%s\"", cases[_i].why, out);
	ck_assert_uint_eq(n, strlen(cases[_i].want));
	ck_assert_uint_eq(usl_str_escape(NULL, 0, cases[_i].in, cases[_i].inlen), n);
}
END_TEST

/* Every outlen cuts at a unit boundary: a prefix of the whole, no split escape. */
START_TEST(test_truncation_never_splits)
{
	static const char in[] = "a\x1b\xc3\xa9\\\xf0\x9f\x98\x80\xff" "b";
	static const size_t ends[] = { 0, 1, 5, 7, 9, 13, 17, 18 };	/* unit boundaries */
	char whole[64], out[64];
	size_t need = usl_str_escape(whole, sizeof(whole), in, sizeof(in) - 1);

	ck_assert_str_eq(whole, "a\\x1b\xc3\xa9\\\\\xf0\x9f\x98\x80\\xffb");
	ck_assert_uint_eq(need, 18);
	for (size_t outlen = 1; outlen <= need + 1; outlen++) {
		size_t want = 0, len;

		memset(out, 'Z', sizeof(out));
		ck_assert_uint_eq(usl_str_escape(out, outlen, in, sizeof(in) - 1), need);
		len = strlen(out);
		ck_assert_uint_lt(len, outlen);
		for (size_t k = 0; k < sizeof(ends) / sizeof(ends[0]); k++)
			if (ends[k] < outlen)
				want = ends[k];
		ck_assert_msg(len == want, "outlen %zu: %zu bytes, want %zu", outlen, len, want);
		ck_assert(memcmp(out, whole, len) == 0);
		ck_assert(out[len + 1] == 'Z' || len + 1 >= outlen);
	}
}
END_TEST

START_TEST(test_outlen_zero_writes_nothing)
{
	char c = 'Z';

	ck_assert_uint_eq(usl_str_escape(&c, 0, "\x1b", 1), 4);
	ck_assert_int_eq(c, 'Z');
}
END_TEST

/* A later short unit must not slip in after a long one was cut. */
START_TEST(test_truncation_keeps_prefix)
{
	char out[4];

	ck_assert_uint_eq(usl_str_escape(out, sizeof(out), "ab\x01z", 4), 7);
	ck_assert_str_eq(out, "ab");
}
END_TEST

START_TEST(test_keep_backslash)
{
	char out[32];

	usl_str_escape_flags(out, sizeof(out), IN("\\x1b\x1b\\"), USL_ESCAPE_KEEP_BACKSLASH);
	ck_assert_str_eq(out, "\\x1b\\x1b\\");
}
END_TEST

START_TEST(test_dup)
{
	static const char in[] = "id\0\xff\n";
	char *s = usl_str_escape_dup(in, sizeof(in) - 1);

	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, "id\\x00\\xff\\x0a");
	free(s);
	s = usl_str_escape_dup(NULL, 0);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

static Suite *escape_suite(void)
{
	Suite *s = suite_create("escape");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_table, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, test_truncation_never_splits);
	tcase_add_test(tc, test_outlen_zero_writes_nothing);
	tcase_add_test(tc, test_truncation_keeps_prefix);
	tcase_add_test(tc, test_keep_backslash);
	tcase_add_test(tc, test_dup);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(escape_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
