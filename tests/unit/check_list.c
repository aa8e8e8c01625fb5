/* tests/unit/check_list.c - usl/list: the intrusive circular list. */
#include <check.h>
#include <stdlib.h>

#include "usl/list.h"

struct elem {
	int v;
	struct usl_list link;
};

/* Collects values in list order into out; returns how many. */
static int collect(struct usl_list *h, int *out, int max)
{
	struct usl_list *pos;
	int n = 0;

	usl_list_foreach(pos, h) {
		ck_assert_int_lt(n, max);
		out[n++] = usl_list_entry(pos, struct elem, link)->v;
	}
	return n;
}

START_TEST(test_add_head_tail)
{
	struct usl_list h = USL_LIST_INIT(h);
	struct elem e[4] = { { .v = 0 }, { .v = 1 }, { .v = 2 }, { .v = 3 } };
	int out[8], n;

	ck_assert(usl_list_empty(&h));
	usl_list_add_tail(&h, &e[1].link);
	usl_list_add_tail(&h, &e[2].link);
	usl_list_add_head(&h, &e[0].link);
	usl_list_add_tail(&h, &e[3].link);
	ck_assert(!usl_list_empty(&h));
	n = collect(&h, out, 8);
	ck_assert_int_eq(n, 4);
	ck_assert_int_eq(out[0], 0);
	ck_assert_int_eq(out[1], 1);
	ck_assert_int_eq(out[2], 2);
	ck_assert_int_eq(out[3], 3);
	ck_assert_ptr_eq(usl_list_first_entry(&h, struct elem, link), &e[0]);
	/* prev links mirror next links. */
	ck_assert_ptr_eq(h.prev, &e[3].link);
	ck_assert_ptr_eq(e[3].link.prev, &e[2].link);
}
END_TEST

START_TEST(test_del)
{
	struct usl_list h;
	struct elem e[3] = { { .v = 0 }, { .v = 1 }, { .v = 2 } };
	int out[8], n, i;

	usl_list_init(&h);
	for (i = 0; i < 3; i++)
		usl_list_add_tail(&h, &e[i].link);
	usl_list_del(&e[1].link);
	ck_assert(usl_list_empty(&e[1].link));
	/* Deleting twice is harmless: the node points at itself. */
	usl_list_del(&e[1].link);
	n = collect(&h, out, 8);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(out[0], 0);
	ck_assert_int_eq(out[1], 2);
	usl_list_del(&e[0].link);
	usl_list_del(&e[2].link);
	ck_assert(usl_list_empty(&h));
	ck_assert_ptr_eq(h.next, &h);
	ck_assert_ptr_eq(h.prev, &h);
}
END_TEST

START_TEST(test_foreach_safe)
{
	enum { N = 100 };
	struct elem *e = calloc(N, sizeof(*e));
	struct usl_list h, *pos, *tmp;
	int out[N], n, i;

	ck_assert_ptr_nonnull(e);
	usl_list_init(&h);
	for (i = 0; i < N; i++) {
		e[i].v = i;
		usl_list_add_tail(&h, &e[i].link);
	}
	/* Remove every odd element while walking. */
	usl_list_foreach_safe(pos, tmp, &h) {
		if (usl_list_entry(pos, struct elem, link)->v % 2)
			usl_list_del(pos);
	}
	n = collect(&h, out, N);
	ck_assert_int_eq(n, N / 2);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(out[i], 2 * i);
	/* Then everything. */
	usl_list_foreach_safe(pos, tmp, &h)
		usl_list_del(pos);
	ck_assert(usl_list_empty(&h));
	free(e);
}
END_TEST

static Suite *list_suite(void)
{
	Suite *s = suite_create("list");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_add_head_tail);
	tcase_add_test(tc, test_del);
	tcase_add_test(tc, test_foreach_safe);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(list_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
