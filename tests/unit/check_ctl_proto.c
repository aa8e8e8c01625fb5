/* tests/unit/check_ctl_proto.c - src/ctl_proto.h: the status line written by hand. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_proto.h"

/* ctl_status_line() writes exactly what CTL_STATUS_LINE_FMT gives, for every status. */
START_TEST(test_status_line_as_snprintf)
{
	static const long long ids[] = { 0, 1, 9, 10, 99, 4242, -1, -10, 123456789012LL,
		INT64_MAX, INT64_MIN, INT64_MIN + 1 };
	char want[256], got[CTL_STATUS_LINE_MAX];

	for (int st = -2; st <= CTL_STATUS__COUNT + 1; st++) {
		for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++) {
			int n = snprintf(want, sizeof(want), CTL_STATUS_LINE_FMT, ids[k], st,
					 ctl_status_name(st));

			ck_assert_int_lt(n, CTL_STATUS_LINE_MAX);
			ck_assert_uint_eq(ctl_status_line(got, ids[k], st), (size_t)n);
			ck_assert_str_eq(got, want);
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ctl_proto");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_status_line_as_snprintf);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
