/* tests/unit/check_suggest.c - usl/suggest: "did you mean" by edit distance. */
#include <check.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "usl/suggest.h"

static const struct {
	const char *a, *b;
	unsigned d;
} distances[] = {
	{ "", "", 0 },
	{ "lac1", "lac1", 0 },
	{ "lac1", "LAC1", 0 },		/* case does not count */
	{ "lac3", "lac1", 1 },		/* substitution */
	{ "lac", "lac1", 1 },		/* insertion */
	{ "lacc1", "lac1", 1 },		/* deletion */
	{ "kitten", "sitting", 3 },
	{ "", "abc", 3 },
};

START_TEST(test_distance)
{
	ck_assert_uint_eq(usl_suggest_distance(distances[_i].a, distances[_i].b), distances[_i].d);
	ck_assert_uint_eq(usl_suggest_distance(distances[_i].b, distances[_i].a), distances[_i].d);
}
END_TEST

START_TEST(test_too_long_is_never_close)
{
	char big[USL_SUGGEST_MAX_LEN + 2];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_uint_eq(usl_suggest_distance(big, "a"), UINT_MAX);
}
END_TEST

/* The closest wins; a tie keeps the first; what is too far is no suggestion. */
START_TEST(test_close)
{
	unsigned best = UINT_MAX;

	ck_assert(usl_suggest_close("tunels", "tunnels", &best));
	ck_assert_uint_eq(best, 1);
	ck_assert(!usl_suggest_close("tunels", "tunnel", &best));	/* 1 again: a tie */
	ck_assert(!usl_suggest_close("tunels", "sessions", &best));
	best = UINT_MAX;
	ck_assert(!usl_suggest_close("xyz", "abc", &best));	/* all of it differs */
	ck_assert(!usl_suggest_close("ab", "b", &best));	/* d 1 = the whole candidate */
	ck_assert(usl_suggest_close("profle", "profile", &best));
}
END_TEST

static Suite *suggest_suite(void)
{
	Suite *s = suite_create("suggest");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_distance, 0, (int)(sizeof(distances) / sizeof(distances[0])));
	tcase_add_test(tc, test_too_long_is_never_close);
	tcase_add_test(tc, test_close);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suggest_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
