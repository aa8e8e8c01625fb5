/*
 * tests/unit/check_rbtree.c - usl/rbtree against a reference model.
 *
 * Random insert/erase sequences (seeded, so failures reproduce) are mirrored
 * in a per-key count array; the tree must validate and match it.
 */
#include <check.h>
#include <stdlib.h>

#include "usl/rbtree.h"

/*
 * check's ck_assert records its location through a pipe on every call; in
 * loops of millions of checks that is most of the run time.  CHECK() only
 * goes through check when the condition fails.
 */
#define CHECK(cond) do { \
	if (!(cond)) \
		ck_abort_msg("check failed: %s", #cond); \
} while (0)

struct item {
	struct usl_rb_node node;
	int key;
	int id;		/* insertion order, to check FIFO among equal keys */
	bool in;
};

static uint64_t rng_state;

static uint64_t rng(void)
{
	/* splitmix64: tiny, deterministic, good enough to drive a model test. */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int item_cmp(const struct usl_rb_node *a, const struct usl_rb_node *b)
{
	int ka = usl_rb_entry(a, struct item, node)->key;
	int kb = usl_rb_entry(b, struct item, node)->key;

	return (ka > kb) - (ka < kb);
}

static int key_cmp(const void *key, const struct usl_rb_node *n)
{
	int k = *(const int *)key;
	int nk = usl_rb_entry(n, struct item, node)->key;

	return (k > nk) - (k < nk);
}

static int key_of(const struct usl_rb_node *n)
{
	return usl_rb_entry(n, struct item, node)->key;
}

/* In-order walk must visit exactly count[k] nodes of each key, in order. */
static void check_against_model(struct usl_rb_root *root, const unsigned *count,
				int nkeys, size_t total)
{
	unsigned *seen = calloc((size_t)nkeys, sizeof(*seen));
	struct usl_rb_node *n, *last = NULL;
	size_t walked = 0;
	int k;

	CHECK(seen != NULL);
	for (n = usl_rb_first(root); n; n = usl_rb_next(n)) {
		if (last)
			CHECK(key_of(last) <= key_of(n));
		seen[key_of(n)]++;
		last = n;
		walked++;
	}
	CHECK(walked == total);
	CHECK(last == usl_rb_last(root));
	for (k = 0; k < nkeys; k++)
		CHECK(seen[k] == count[k]);
	/* Backwards must see as many nodes. */
	for (n = usl_rb_last(root), walked = 0; n; n = usl_rb_prev(n))
		walked++;
	CHECK(walked == total);
	free(seen);
}

/* Random searches: find, find_ge and find_gt agree with the model. */
static void check_searches(struct usl_rb_root *root, const unsigned *count, int nkeys)
{
	struct usl_rb_node *n, *p;
	int i, k;

	for (i = 0; i < 200; i++) {
		k = (int)(rng() % (uint64_t)(nkeys + 2)) - 1;	/* also just outside */
		n = usl_rb_find(root, &k, key_cmp);
		if (k >= 0 && k < nkeys && count[k])
			CHECK(n && key_of(n) == k);
		else
			CHECK(n == NULL);

		n = usl_rb_find_ge(root, &k, key_cmp);
		if (n) {
			CHECK(key_of(n) >= k);
			p = usl_rb_prev(n);
			CHECK(p == NULL || key_of(p) < k);
		} else {
			p = usl_rb_last(root);
			CHECK(p == NULL || key_of(p) < k);
		}

		n = usl_rb_find_gt(root, &k, key_cmp);
		if (n) {
			CHECK(key_of(n) > k);
			p = usl_rb_prev(n);
			CHECK(p == NULL || key_of(p) <= k);
		} else {
			p = usl_rb_last(root);
			CHECK(p == NULL || key_of(p) <= k);
		}
	}
}

/*
 * nslots items with keys below nkeys; ops random toggles (insert when out,
 * erase when in); validate every `every` ops.
 */
static void run_model(size_t nslots, int nkeys, long ops, long every, uint64_t seed)
{
	struct item *items = calloc(nslots, sizeof(*items));
	unsigned *count = calloc((size_t)nkeys, sizeof(*count));
	struct usl_rb_root root = USL_RB_ROOT_INIT;
	size_t total = 0, i;
	struct item *it;
	long op;

	CHECK(items && count);
	rng_state = seed;
	for (i = 0; i < nslots; i++)
		usl_rb_node_clear(&items[i].node);
	for (op = 0; op < ops; op++) {
		it = &items[rng() % nslots];
		if (it->in) {
			usl_rb_erase(&root, &it->node);
			CHECK(!usl_rb_node_linked(&it->node));
			count[it->key]--;
			total--;
		} else {
			it->key = (int)(rng() % (uint64_t)nkeys);
			usl_rb_insert(&root, &it->node, item_cmp);
			CHECK(usl_rb_node_linked(&it->node));
			count[it->key]++;
			total++;
		}
		it->in = !it->in;
		if (op % every == 0)
			CHECK(usl_rb_validate(&root, item_cmp) >= 0);
		if (op % 1000 == 0)
			check_searches(&root, count, nkeys);
	}
	CHECK(usl_rb_validate(&root, item_cmp) >= 0);
	check_against_model(&root, count, nkeys, total);
	check_searches(&root, count, nkeys);

	/* Erasing every node, in random slot order, leaves an empty tree. */
	for (i = 0; i < nslots; i++) {
		it = &items[(i * 7919 + seed) % nslots];
		if (!it->in)
			continue;
		usl_rb_erase(&root, &it->node);
		it->in = false;
		total--;
		if (i % 97 == 0)
			CHECK(usl_rb_validate(&root, item_cmp) >= 0);
	}
	CHECK(total == 0);
	CHECK(usl_rb_empty(&root));
	CHECK(usl_rb_first(&root) == NULL);
	CHECK(usl_rb_last(&root) == NULL);
	CHECK(usl_rb_validate(&root, item_cmp) == 0);
	free(items);
	free(count);
}

START_TEST(test_random_large)
{
	/* 150,000 operations on up to 20,000 nodes with many duplicate keys. */
	run_model(20000, 5000, 150000, 1000, 0x12345678);
}
END_TEST

START_TEST(test_random_small)
{
	/* Small trees hit every rebalancing case often; validate after each op. */
	run_model(16, 8, 100000, 1, 42);
	run_model(64, 1000, 50000, 1, 7);
}
END_TEST

START_TEST(test_sequential)
{
	/* Ascending then descending keys: the classic degenerate-BST inputs. */
	enum { N = 4096 };
	static struct item items[N];
	struct usl_rb_root root;
	struct usl_rb_node *n;
	int i, height;

	usl_rb_init(&root);
	for (i = 0; i < N; i++) {
		items[i].key = i;
		usl_rb_insert(&root, &items[i].node, item_cmp);
		ck_assert_ptr_eq(usl_rb_first(&root), &items[0].node);
	}
	height = usl_rb_validate(&root, item_cmp);
	/* Black height of a red-black tree of n nodes is at most log2(n + 1). */
	ck_assert_int_gt(height, 0);
	ck_assert_int_le(height, 13);
	for (i = 0, n = usl_rb_first(&root); n; n = usl_rb_next(n), i++)
		ck_assert_int_eq(key_of(n), i);
	ck_assert_int_eq(i, N);
	for (i = N - 1, n = usl_rb_last(&root); n; n = usl_rb_prev(n), i--)
		ck_assert_int_eq(key_of(n), i);
	/* Erase from the front: the cached leftmost must follow. */
	for (i = 0; i < N; i++) {
		ck_assert_ptr_eq(usl_rb_first(&root), &items[i].node);
		usl_rb_erase(&root, &items[i].node);
	}
	ck_assert(usl_rb_empty(&root));

	for (i = N - 1; i >= 0; i--) {
		items[i].key = i;
		usl_rb_insert(&root, &items[i].node, item_cmp);
		ck_assert_ptr_eq(usl_rb_first(&root), &items[i].node);
	}
	ck_assert_int_gt(usl_rb_validate(&root, item_cmp), 0);
	for (i = N - 1; i >= 0; i--)
		usl_rb_erase(&root, &items[i].node);
	ck_assert_int_eq(usl_rb_validate(&root, item_cmp), 0);
}
END_TEST

START_TEST(test_ties_fifo)
{
	enum { N = 300 };
	static struct item items[N];
	struct usl_rb_root root = USL_RB_ROOT_INIT;
	struct usl_rb_node *n;
	int i, last_id[3] = { -1, -1, -1 }, key;

	/* Three keys interleaved; within each key, ids must come out in order. */
	for (i = 0; i < N; i++) {
		items[i].key = (i * 7) % 3;
		items[i].id = i;
		usl_rb_insert(&root, &items[i].node, item_cmp);
	}
	ck_assert_int_gt(usl_rb_validate(&root, item_cmp), 0);
	for (n = usl_rb_first(&root); n; n = usl_rb_next(n)) {
		struct item *it = usl_rb_entry(n, struct item, node);

		ck_assert_int_gt(it->id, last_id[it->key]);
		last_id[it->key] = it->id;
	}
	/* A re-inserted node goes after every node already holding its key. */
	usl_rb_erase(&root, &items[0].node);
	usl_rb_insert(&root, &items[0].node, item_cmp);
	key = 0;
	n = usl_rb_find_gt(&root, &key, key_cmp);
	ck_assert_ptr_nonnull(n);
	ck_assert_ptr_eq(usl_rb_prev(n), &items[0].node);
	/* find_ge lands on the first of the equal run. */
	key = 1;
	n = usl_rb_find_ge(&root, &key, key_cmp);
	ck_assert_ptr_nonnull(n);
	ck_assert_int_eq(key_of(n), 1);
	ck_assert_int_eq(key_of(usl_rb_prev(n)), 0);
	ck_assert_int_ge(usl_rb_validate(&root, item_cmp), 0);
}
END_TEST

START_TEST(test_empty_and_single)
{
	struct usl_rb_root root;
	struct item a = { .key = 5 };
	int k = 5;

	usl_rb_init(&root);
	ck_assert(usl_rb_empty(&root));
	ck_assert_ptr_null(usl_rb_first(&root));
	ck_assert_ptr_null(usl_rb_last(&root));
	ck_assert_ptr_null(usl_rb_find(&root, &k, key_cmp));
	ck_assert_ptr_null(usl_rb_find_ge(&root, &k, key_cmp));
	ck_assert_int_eq(usl_rb_validate(&root, item_cmp), 0);

	usl_rb_node_clear(&a.node);
	ck_assert(!usl_rb_node_linked(&a.node));
	usl_rb_insert(&root, &a.node, item_cmp);
	ck_assert(usl_rb_node_linked(&a.node));
	ck_assert_ptr_eq(usl_rb_first(&root), &a.node);
	ck_assert_ptr_eq(usl_rb_last(&root), &a.node);
	ck_assert_ptr_null(usl_rb_next(&a.node));
	ck_assert_ptr_null(usl_rb_prev(&a.node));
	ck_assert_ptr_eq(usl_rb_find(&root, &k, key_cmp), &a.node);
	ck_assert_ptr_null(usl_rb_find_gt(&root, &k, key_cmp));
	k = 4;
	ck_assert_ptr_eq(usl_rb_find_gt(&root, &k, key_cmp), &a.node);
	ck_assert_int_eq(usl_rb_validate(&root, item_cmp), 1);
	usl_rb_erase(&root, &a.node);
	ck_assert(usl_rb_empty(&root));
	ck_assert(!usl_rb_node_linked(&a.node));
}
END_TEST

START_TEST(test_validate_catches_breakage)
{
	enum { N = 64 };
	static struct item items[N];
	struct usl_rb_root root = USL_RB_ROOT_INIT;
	struct usl_rb_node *n, *saved;
	uintptr_t pc;
	int i;

	for (i = 0; i < N; i++) {
		items[i].key = i;
		usl_rb_insert(&root, &items[i].node, item_cmp);
	}
	ck_assert_int_gt(usl_rb_validate(&root, item_cmp), 0);

	/* Flip the root's colour (bit 0): the root must be black. */
	root.node->parent_color ^= 1;
	ck_assert_int_eq(usl_rb_validate(&root, item_cmp), -1);
	root.node->parent_color ^= 1;

	/* Flip a leaf's colour: black heights or red-red break. */
	n = usl_rb_last(&root);
	pc = n->parent_color;
	n->parent_color ^= 1;
	ck_assert_int_eq(usl_rb_validate(&root, item_cmp), -1);
	n->parent_color = pc;

	/* Break ordering without touching the shape. */
	items[10].key = 1000;
	ck_assert_int_eq(usl_rb_validate(&root, item_cmp), -1);
	items[10].key = 10;

	/* A stale cached leftmost. */
	saved = root.leftmost;
	root.leftmost = &items[1].node;
	ck_assert_int_eq(usl_rb_validate(&root, item_cmp), -1);
	root.leftmost = saved;

	ck_assert_int_gt(usl_rb_validate(&root, item_cmp), 0);
}
END_TEST

static Suite *rbtree_suite(void)
{
	Suite *s = suite_create("rbtree");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_empty_and_single);
	tcase_add_test(tc, test_sequential);
	tcase_add_test(tc, test_ties_fifo);
	tcase_add_test(tc, test_random_small);
	tcase_add_test(tc, test_random_large);
	tcase_add_test(tc, test_validate_catches_breakage);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(rbtree_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
