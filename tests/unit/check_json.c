/* tests/unit/check_json.c - usl/json: the control socket's request reader. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "usl/json.h"

static struct usl_json doc;
static char err[256];

static void setup(void)
{
	usl_json_init(&doc);
	err[0] = '\0';
}

static void teardown(void)
{
	usl_json_free(&doc);
}

/* s is parsed with its length: NUL is data. */
static int parse(const char *s, size_t len)
{
	return usl_json_parse(&doc, s, len, err, sizeof(err));
}

#define PARSE(lit)	parse(lit, sizeof(lit) - 1)

START_TEST(test_request)
{
	const struct usl_json_value *root, *args, *v;

	ck_assert_int_eq(PARSE("{\"id\": 7, \"cmd\": \"tunnel create\", \"args\": {\"peer\": "
			       "\"10.0.0.2\", \"wait\": false, \"hello_interval\": 60}, "
			       "\"quiet\": true}\r\n"), 0);
	root = usl_json_root(&doc);
	ck_assert_ptr_nonnull(root);
	ck_assert_int_eq(root->type, USL_JSON_OBJECT);
	ck_assert_uint_eq(root->n, 4);
	v = usl_json_get(&doc, root, "id");
	ck_assert_int_eq(v->type, USL_JSON_INT);
	ck_assert_int_eq(v->i, 7);
	ck_assert_str_eq(v->text, "7");
	v = usl_json_get(&doc, root, "cmd");
	ck_assert_int_eq(v->type, USL_JSON_STRING);
	ck_assert_str_eq(v->text, "tunnel create");
	ck_assert_uint_eq(v->len, 13);
	args = usl_json_get(&doc, root, "args");
	ck_assert_int_eq(args->type, USL_JSON_OBJECT);
	ck_assert_ptr_null(args->text);
	ck_assert_uint_eq(args->n, 3);
	ck_assert_str_eq(usl_json_get(&doc, args, "peer")->text, "10.0.0.2");
	v = usl_json_get(&doc, args, "wait");
	ck_assert_int_eq(v->type, USL_JSON_BOOL);
	ck_assert(!v->b);
	ck_assert_str_eq(v->text, "false");
	ck_assert(usl_json_get(&doc, root, "quiet")->b);
	ck_assert_ptr_null(usl_json_get(&doc, root, "nosuch"));
	ck_assert_ptr_null(usl_json_get(&doc, v, "peer"));	/* not an object */
	/* members in document order */
	v = usl_json_first(&doc, args);
	ck_assert_str_eq(v->key, "peer");
	ck_assert_str_eq(usl_json_next(&doc, v)->key, "wait");
	ck_assert_str_eq(usl_json_next(&doc, usl_json_next(&doc, v))->key, "hello_interval");
	ck_assert_ptr_null(usl_json_next(&doc, usl_json_next(&doc, usl_json_next(&doc, v))));
}
END_TEST

START_TEST(test_escapes)
{
	static const char want[] = "q\" b\\ s/ \b\f\n\r\t \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \0z";
	const struct usl_json_value *v;

	ck_assert_int_eq(PARSE("\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t \\u00e9 \\u20AC \\ud83d\\ude00 "
			       "\\u0000z\""), 0);
	v = usl_json_root(&doc);
	ck_assert_int_eq(v->type, USL_JSON_STRING);
	ck_assert_uint_eq(v->len, sizeof(want) - 1);
	ck_assert_mem_eq(v->text, want, sizeof(want));		/* NUL-terminated too */
	/* raw UTF-8 and bytes above 0x7f are data */
	ck_assert_int_eq(PARSE("\"caf\xc3\xa9 \xff\""), 0);
	ck_assert_str_eq(usl_json_root(&doc)->text, "caf\xc3\xa9 \xff");
}
END_TEST

START_TEST(test_numbers)
{
	static const struct {
		const char *in;
		enum usl_json_type type;
		int64_t i;
		bool in_range;
		double d;
	} cases[] = {
		{ "0", USL_JSON_INT, 0, true, 0 },
		{ "-0", USL_JSON_INT, 0, true, 0 },
		{ "4294967295", USL_JSON_INT, 4294967295LL, true, 4294967295.0 },
		{ "9223372036854775807", USL_JSON_INT, INT64_MAX, true, 9223372036854775807.0 },
		{ "9223372036854775808", USL_JSON_INT, INT64_MAX, false, 9223372036854775808.0 },
		{ "99999999999999999999999", USL_JSON_INT, INT64_MAX, false, 1e23 },
		{ "-9223372036854775808", USL_JSON_INT, INT64_MIN, true, -9223372036854775808.0 },
		{ "-9223372036854775809", USL_JSON_INT, INT64_MIN, false, -9223372036854775808.0 },
		{ "1.5", USL_JSON_NUMBER, 0, false, 1.5 },
		{ "1e3", USL_JSON_NUMBER, 0, false, 1000 },
		{ "-2.5E-1", USL_JSON_NUMBER, 0, false, -0.25 },
		{ "0.0", USL_JSON_NUMBER, 0, false, 0 },
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const struct usl_json_value *v;

		ck_assert_msg(parse(cases[k].in, strlen(cases[k].in)) == 0, "%s: %s", cases[k].in, err);
		v = usl_json_root(&doc);
		ck_assert_msg(v->type == cases[k].type, "%s: type %d", cases[k].in, v->type);
		ck_assert_str_eq(v->text, cases[k].in);
		ck_assert_msg(v->d == cases[k].d, "%s: d %g", cases[k].in, v->d);
		if (v->type == USL_JSON_INT) {
			ck_assert_msg(v->i == cases[k].i, "%s: i %lld", cases[k].in, (long long)v->i);
			ck_assert_msg(v->in_range == cases[k].in_range, "%s: in_range", cases[k].in);
		}
	}
}
END_TEST

/* json-c keeps the last of a key given twice: so does usl_json_get(). */
START_TEST(test_duplicate_key_last_wins)
{
	const struct usl_json_value *root;

	ck_assert_int_eq(PARSE("{\"a\": 1, \"b\": 2, \"a\": \"x\"}"), 0);
	root = usl_json_root(&doc);
	ck_assert_uint_eq(root->n, 3);
	ck_assert_str_eq(usl_json_get(&doc, root, "a")->text, "x");
}
END_TEST

/* A key holding a NUL is not the name before its NUL. */
START_TEST(test_key_with_nul)
{
	const struct usl_json_value *root;

	ck_assert_int_eq(PARSE("{\"peer\\u0000x\": 1}"), 0);
	root = usl_json_root(&doc);
	ck_assert_uint_eq(root->n, 1);
	ck_assert_uint_eq(usl_json_first(&doc, root)->key_len, 6);
	ck_assert_ptr_null(usl_json_get(&doc, root, "peer"));
}
END_TEST

START_TEST(test_arrays_and_nesting)
{
	const struct usl_json_value *root, *list, *e;

	ck_assert_int_eq(PARSE(" { \"events\" : [ \"session-up\" , 5 , null , [ ] , { } ] } "), 0);
	root = usl_json_root(&doc);
	list = usl_json_get(&doc, root, "events");
	ck_assert_int_eq(list->type, USL_JSON_ARRAY);
	ck_assert_uint_eq(list->n, 5);
	e = usl_json_first(&doc, list);
	ck_assert_str_eq(e->text, "session-up");
	ck_assert_ptr_null(e->key);
	e = usl_json_next(&doc, e);
	ck_assert_int_eq(e->i, 5);
	e = usl_json_next(&doc, e);
	ck_assert_int_eq(e->type, USL_JSON_NULL);
	ck_assert_str_eq(e->text, "null");
	e = usl_json_next(&doc, e);
	ck_assert_int_eq(e->type, USL_JSON_ARRAY);
	ck_assert_uint_eq(e->n, 0);
	ck_assert_ptr_null(usl_json_first(&doc, e));
	e = usl_json_next(&doc, e);
	ck_assert_int_eq(e->type, USL_JSON_OBJECT);
	ck_assert_ptr_null(usl_json_next(&doc, e));
}
END_TEST

/* Every bad document: an error naming the problem and its offset, and an empty document. */
static const struct {
	const char *in;
	const char *want;
} bad[] = {
	{ "", "unexpected end at offset 0" },
	{ "   ", "unexpected end at offset 3" },
	{ "{", "unexpected end at offset 1" },
	{ "{\"a\"}", "expected ':' after a key at offset 4" },
	{ "{\"a\" 1}", "expected ':' after a key at offset 5" },
	{ "{\"a\":}", "unexpected '}' at offset 5" },
	{ "{\"a\":1,}", "trailing comma in an object at offset 7" },
	{ "[1,]", "unexpected ']' at offset 3" },
	{ "{\"a\":1 \"b\":2}", "expected ',' or '}' at offset 7" },
	{ "[1 2]", "expected ',' or ']' at offset 3" },
	{ "{'a':1}", "unexpected ''' at offset 1" },
	{ "{a:1}", "unexpected 'a' at offset 1" },
	{ "01", "leading zero in a number at offset 1" },
	{ "1.", "no digit after '.' at offset 2" },
	{ "1e", "no digit in the exponent at offset 2" },
	{ "-", "bad number at offset 1" },
	{ "+1", "unexpected '+' at offset 0" },
	{ "tru", "unexpected 't' at offset 0" },
	{ "truex", "data after the document at offset 4" },
	{ "NaN", "unexpected 'N' at offset 0" },
	{ "{} x", "data after the document at offset 3" },
	{ "{}{}", "data after the document at offset 2" },
	{ "/* c */ {}", "unexpected '/' at offset 0" },
	{ "\"a\x01\"", "control character in a string (escape it) at offset 2" },
	{ "\"a\nb\"", "control character in a string (escape it) at offset 2" },
	{ "\"abc", "unterminated string at offset 4" },
	{ "\"ab\\", "unterminated string at offset 4" },
	{ "\"\\x\"", "bad escape in a string at offset 2" },
	{ "\"\\u12\"", "short \\u escape at offset 3" },
	{ "\"\\u12g4\"", "bad hex digit in a \\u escape at offset 5" },
	{ "\"\\udc00\"", "lone low surrogate in a \\u escape at offset 7" },
	{ "\"\\ud800\"", "high surrogate without its low surrogate at offset 7" },
	{ "\"\\ud800\\u0041\"", "high surrogate without its low surrogate at offset 13" },
	{ "\x01", "unexpected byte 0x01 at offset 0" },
};

START_TEST(test_bad)
{
	ck_assert_int_eq(PARSE("{\"ok\": 1}"), 0);	/* a good document first: replaced */
	ck_assert_int_eq(parse(bad[_i].in, strlen(bad[_i].in)), -1);
	ck_assert_msg(strstr(err, bad[_i].want) != NULL, "'%s': got \"%s\", want \"%s\"",
		      bad[_i].in, err, bad[_i].want);
	ck_assert_ptr_null(usl_json_root(&doc));
}
END_TEST

/* d levels of [ ... ] */
static void nested(char *buf, int d)
{
	memset(buf, '[', (size_t)d);
	memset(buf + d, ']', (size_t)d);
	buf[2 * d] = '\0';
}

START_TEST(test_depth_bound)
{
	char buf[2 * (USL_JSON_MAX_DEPTH + 1) + 1];

	nested(buf, USL_JSON_MAX_DEPTH);
	ck_assert_msg(parse(buf, strlen(buf)) == 0, "%s", err);
	ck_assert_uint_eq(doc.n, USL_JSON_MAX_DEPTH);
	nested(buf, USL_JSON_MAX_DEPTH + 1);
	ck_assert_int_eq(parse(buf, strlen(buf)), -1);
	ck_assert_str_eq(err, "nested deeper than 32 at offset 33");
}
END_TEST

/* n values: an array of n - 1 one-digit integers. */
static char *values_doc(unsigned n)
{
	char *s = malloc(2 * n + 2), *o = s;

	*o++ = '[';
	for (unsigned k = 0; k + 1 < n; k++) {
		if (k)
			*o++ = ',';
		*o++ = '1';
	}
	*o++ = ']';
	*o = '\0';
	return s;
}

START_TEST(test_values_bound)
{
	char *s = values_doc(USL_JSON_MAX_VALUES);

	ck_assert_msg(parse(s, strlen(s)) == 0, "%s", err);
	ck_assert_uint_eq(doc.n, USL_JSON_MAX_VALUES);
	ck_assert_uint_eq(usl_json_root(&doc)->n, USL_JSON_MAX_VALUES - 1);
	free(s);
	s = values_doc(USL_JSON_MAX_VALUES + 1);
	ck_assert_int_eq(parse(s, strlen(s)), -1);
	ck_assert_msg(strstr(err, "more than 256 values") != NULL, "%s", err);
	free(s);
}
END_TEST

/*
 * The scratch's worst case: one-byte scalars, each with a NUL, and
 * empty strings.  ASan proves the bound; the texts prove the content.
 */
START_TEST(test_scratch_bound)
{
	char s[2 * USL_JSON_MAX_VALUES + 2];
	const struct usl_json_value *e;
	size_t o = 0;

	s[o++] = '[';
	for (unsigned k = 0; k + 1 < USL_JSON_MAX_VALUES; k++) {
		if (k)
			s[o++] = ',';
		s[o++] = (char)('0' + k % 10);
	}
	s[o++] = ']';
	ck_assert_int_eq(parse(s, o), 0);
	e = usl_json_first(&doc, usl_json_root(&doc));
	for (unsigned k = 0; e != NULL; k++, e = usl_json_next(&doc, e))
		ck_assert_int_eq(e->i, k % 10);
	ck_assert_int_eq(PARSE("[\"\",\"\",\"\"]"), 0);
	ck_assert_str_eq(usl_json_first(&doc, usl_json_root(&doc))->text, "");
}
END_TEST

/* A long line grows the scratch; a short one after it reuses it. */
START_TEST(test_reuse)
{
	size_t n = 70000;
	char *s = malloc(n + 3);

	s[0] = '"';
	memset(s + 1, 'x', n);
	s[n + 1] = '"';
	ck_assert_int_eq(parse(s, n + 2), 0);
	ck_assert_uint_eq(usl_json_root(&doc)->len, n);
	free(s);
	ck_assert_int_eq(PARSE("{\"a\": \"b\"}"), 0);
	ck_assert_str_eq(usl_json_get(&doc, usl_json_root(&doc), "a")->text, "b");
	ck_assert_uint_ge(doc.scratch_size, n);
}
END_TEST

static Suite *json_suite(void)
{
	Suite *s = suite_create("json");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_request);
	tcase_add_test(tc, test_escapes);
	tcase_add_test(tc, test_numbers);
	tcase_add_test(tc, test_duplicate_key_last_wins);
	tcase_add_test(tc, test_key_with_nul);
	tcase_add_test(tc, test_arrays_and_nesting);
	tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, test_depth_bound);
	tcase_add_test(tc, test_values_bound);
	tcase_add_test(tc, test_scratch_bound);
	tcase_add_test(tc, test_reuse);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(json_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
