/*
 * tests/unit/check_idalloc.c - the free-range id allocator against a plain
 * bitmap model: same ids out, same number of (maximally merged) ranges.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "idalloc.h"

static struct idalloc a;

static void teardown(void)
{
	idalloc_destroy(&a);
}

/* xorshift32: reproducible, so a failure replays the same sequence. */
static uint32_t rng_state;

static uint32_t rng(void)
{
	uint32_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return rng_state = x;
}

/*
 * The model: taken[id] for 1..max, and the lowest id that may be free
 * (every id below hint is taken), so finding the lowest free id is cheap.
 */
enum { MODEL_MAX = 1000 };

struct model {
	bool taken[MODEL_MAX + 2];
	uint32_t max, used, hint;
};

static uint32_t model_get(struct model *m)
{
	while (m->hint <= m->max && m->taken[m->hint])
		m->hint++;
	if (m->hint > m->max)
		return 0;
	m->taken[m->hint] = true;
	m->used++;
	return m->hint++;
}

static void model_put(struct model *m, uint32_t id)
{
	if (id == 0 || id > m->max || !m->taken[id])
		return;
	m->taken[id] = false;
	m->used--;
	if (id < m->hint)
		m->hint = id;
}

/* Free runs in the bitmap: what a fully merged range set must count. */
static unsigned model_runs(const struct model *m)
{
	unsigned runs = 0;
	uint32_t id;

	for (id = 1; id <= m->max; id++) {
		if (!m->taken[id] && (id == 1 || m->taken[id - 1]))
			runs++;
	}
	return runs;
}

static void check_same(const struct model *m)
{
	ck_assert_uint_eq(a.used, m->used);
	ck_assert_uint_eq(idalloc_ranges(&a), model_runs(m));
}

/* Random gets and puts (puts of free, zero and out-of-range ids too). */
static void random_ops(struct model *m, unsigned n, unsigned get_pct)
{
	uint32_t got, want;
	unsigned i;

	for (i = 0; i < n; i++) {
		if (rng() % 100 < get_pct) {
			want = model_get(m);
			got = idalloc_get(&a);
			ck_assert_uint_eq(got, want);
		} else {
			want = rng() % (m->max + 2);
			model_put(m, want);
			idalloc_put(&a, want);
		}
		if (i % 1000 == 0)
			check_same(m);
	}
}

START_TEST(test_random_vs_bitmap)
{
	struct model *m = calloc(1, sizeof(*m));
	uint32_t id, want;

	ck_assert_ptr_nonnull(m);
	m->max = MODEL_MAX;
	m->hint = 1;
	rng_state = 0x2545f491;
	ck_assert_int_eq(idalloc_init(&a, MODEL_MAX), 0);

	/* Filling (often exhausted), then draining (fragmented): 200,000 ops. */
	random_ops(m, 50000, 70);
	random_ops(m, 50000, 50);
	random_ops(m, 50000, 30);
	random_ops(m, 50000, 55);
	check_same(m);

	/* What is left comes out lowest first, exactly the model's free ids. */
	while ((want = model_get(m)) != 0) {
		id = idalloc_get(&a);
		ck_assert_uint_eq(id, want);
	}
	ck_assert_uint_eq(idalloc_get(&a), 0);
	ck_assert_uint_eq(idalloc_ranges(&a), 0);
	ck_assert_uint_eq(a.used, MODEL_MAX);
	free(m);
}
END_TEST

/* Each put names the merge case it exercises and the range count after it. */
static const struct merge_step {
	uint32_t put;
	unsigned ranges;
	const char *why;
} merge_steps[] = {
	{ 5,  2, "no neighbour: new range [5,5]" },
	{ 3,  3, "no neighbour: new range [3,3]" },
	{ 4,  2, "joins both: [3,5]" },
	{ 6,  2, "grows the range below: [3,6]" },
	{ 2,  2, "grows the range above: [2,6]" },
	{ 10, 2, "grows the tail range down: [10,100]" },
	{ 8,  3, "no neighbour: new range [8,8]" },
	{ 9,  2, "joins both: [8,100]" },
	{ 7,  1, "joins both: [2,100]" },
	{ 1,  1, "grows the first range down: [1,100]" },
};

START_TEST(test_merge_cases)
{
	unsigned i;

	ck_assert_int_eq(idalloc_init(&a, 100), 0);
	for (i = 1; i <= 10; i++)
		ck_assert_uint_eq(idalloc_get(&a), i);
	ck_assert_uint_eq(idalloc_ranges(&a), 1);
	for (i = 0; i < sizeof(merge_steps) / sizeof(merge_steps[0]); i++) {
		idalloc_put(&a, merge_steps[i].put);
		ck_assert_msg(idalloc_ranges(&a) == merge_steps[i].ranges,
			      "put %u (%s): %u ranges, want %u", merge_steps[i].put,
			      merge_steps[i].why, idalloc_ranges(&a), merge_steps[i].ranges);
	}
	ck_assert_uint_eq(a.used, 0);
	for (i = 1; i <= 100; i++)
		ck_assert_uint_eq(idalloc_get(&a), i);
	ck_assert_uint_eq(idalloc_get(&a), 0);
}
END_TEST

START_TEST(test_put_ignored)
{
	ck_assert_int_eq(idalloc_init(&a, 10), 0);
	ck_assert_uint_eq(idalloc_get(&a), 1);
	ck_assert_uint_eq(idalloc_get(&a), 2);
	ck_assert_uint_eq(idalloc_get(&a), 3);
	idalloc_put(&a, 2);
	ck_assert_uint_eq(a.used, 2);
	ck_assert_uint_eq(idalloc_ranges(&a), 2);

	idalloc_put(&a, 2);	/* already free */
	idalloc_put(&a, 7);	/* never taken: inside [4,10] */
	idalloc_put(&a, 4);	/* never taken: start of [4,10] */
	idalloc_put(&a, 10);	/* never taken: end of [4,10] */
	idalloc_put(&a, 0);
	idalloc_put(&a, 11);
	idalloc_put(&a, UINT32_MAX);
	ck_assert_uint_eq(a.used, 2);
	ck_assert_uint_eq(idalloc_ranges(&a), 2);

	ck_assert_uint_eq(idalloc_get(&a), 2);
	ck_assert_uint_eq(idalloc_get(&a), 4);
}
END_TEST

START_TEST(test_exhaustion)
{
	uint32_t i;

	ck_assert_int_eq(idalloc_init(&a, 5), 0);
	for (i = 1; i <= 5; i++)
		ck_assert_uint_eq(idalloc_get(&a), i);
	ck_assert_uint_eq(idalloc_get(&a), 0);
	ck_assert_uint_eq(idalloc_get(&a), 0);
	ck_assert_uint_eq(idalloc_ranges(&a), 0);
	ck_assert_uint_eq(a.used, 5);

	idalloc_put(&a, 3);
	ck_assert_uint_eq(idalloc_ranges(&a), 1);
	ck_assert_uint_eq(idalloc_get(&a), 3);
	ck_assert_uint_eq(idalloc_get(&a), 0);
}
END_TEST

START_TEST(test_empty_and_full_range)
{
	ck_assert_int_eq(idalloc_init(&a, 0), 0);
	ck_assert_uint_eq(idalloc_get(&a), 0);
	ck_assert_uint_eq(idalloc_ranges(&a), 0);
	idalloc_put(&a, 1);
	ck_assert_uint_eq(idalloc_ranges(&a), 0);
	idalloc_destroy(&a);

	/* The whole 32-bit space is one range, not four billion entries. */
	ck_assert_int_eq(idalloc_init(&a, UINT32_MAX), 0);
	ck_assert_uint_eq(idalloc_ranges(&a), 1);
	ck_assert_uint_eq(idalloc_get(&a), 1);
	ck_assert_uint_eq(idalloc_get(&a), 2);
	idalloc_put(&a, 1);
	ck_assert_uint_eq(idalloc_ranges(&a), 2);
	idalloc_put(&a, UINT32_MAX);	/* free: ignored, no wrap-around */
	ck_assert_uint_eq(idalloc_ranges(&a), 2);
	idalloc_put(&a, 2);
	ck_assert_uint_eq(idalloc_ranges(&a), 1);
	ck_assert_uint_eq(a.used, 0);
}
END_TEST

START_TEST(test_destroy_frees_all)
{
	uint32_t i;

	ck_assert_int_eq(idalloc_init(&a, 1000), 0);
	for (i = 1; i <= 1000; i++)
		ck_assert_uint_eq(idalloc_get(&a), i);
	for (i = 1; i <= 1000; i += 2)
		idalloc_put(&a, i);
	ck_assert_uint_eq(idalloc_ranges(&a), 500);

	/* valgrind/ASan report any range left behind. */
	idalloc_destroy(&a);
	ck_assert_uint_eq(idalloc_ranges(&a), 0);
	ck_assert_uint_eq(idalloc_get(&a), 0);
	idalloc_put(&a, 2);
	ck_assert_uint_eq(idalloc_ranges(&a), 0);
	idalloc_destroy(&a);
}
END_TEST

/* A zeroed allocator (feature off) must be inert, not crash. */
START_TEST(test_never_initialised)
{
	memset(&a, 0, sizeof(a));
	ck_assert_uint_eq(idalloc_get(&a), 0);
	idalloc_put(&a, 1);
	ck_assert_uint_eq(idalloc_ranges(&a), 0);
}
END_TEST

static Suite *idalloc_suite(void)
{
	Suite *s = suite_create("idalloc");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, NULL, teardown);
	/* 200,000 ops under valgrind take a while. */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_random_vs_bitmap);
	tcase_add_test(tc, test_merge_cases);
	tcase_add_test(tc, test_put_ignored);
	tcase_add_test(tc, test_exhaustion);
	tcase_add_test(tc, test_empty_and_full_range);
	tcase_add_test(tc, test_destroy_frees_all);
	tcase_add_test(tc, test_never_initialised);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(idalloc_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
