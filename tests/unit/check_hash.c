/* tests/unit/check_hash.c - usl/hash: lookups, growth, shrink, two indexes. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "usl/hash.h"

struct obj {
	uint32_t id;		/* key of the first index */
	char name[16];		/* key of the second index */
	struct usl_hnode by_id;
	struct usl_hnode by_name;
};

static bool eq_id(const struct usl_hnode *n, const void *key)
{
	return usl_hash_entry(n, struct obj, by_id)->id == *(const uint32_t *)key;
}

static bool eq_name(const struct usl_hnode *n, const void *key)
{
	return strcmp(usl_hash_entry(n, struct obj, by_name)->name, key) == 0;
}

static uint32_t hash_name(const char *s)
{
	return usl_hash_bytes(s, strlen(s), 0xdeadbeef);
}

static struct obj *find_id(const struct usl_hash *h, uint32_t id)
{
	struct usl_hnode *n = usl_hash_lookup(h, &id, usl_hash_u32(id));

	return n ? usl_hash_entry(n, struct obj, by_id) : NULL;
}

START_TEST(test_many_keys)
{
	enum { N = 100000 };
	struct obj *objs = calloc(N, sizeof(*objs));
	struct usl_hash h;
	size_t i, peak;
	uint32_t absent;

	ck_assert_ptr_nonnull(objs);
	ck_assert_int_eq(usl_hash_init(&h, 16, eq_id), 0);
	ck_assert_uint_eq(h.nbuckets, 16);
	for (i = 0; i < N; i++) {
		/* Spread-out ids, as CCIDs and session ids are random 32-bit. */
		objs[i].id = (uint32_t)(i * 2654435761U);
		usl_hash_insert(&h, &objs[i].by_id, usl_hash_u32(objs[i].id));
		/* Load factor never passes 1 once a grow was possible. */
		ck_assert_uint_le(usl_hash_count(&h), h.nbuckets);
	}
	ck_assert_uint_eq(usl_hash_count(&h), N);
	ck_assert_uint_ge(h.nbuckets, N);
	ck_assert_uint_eq(h.nbuckets & (h.nbuckets - 1), 0);
	peak = h.nbuckets;
	for (i = 0; i < N; i++)
		ck_assert_ptr_eq(find_id(&h, objs[i].id), &objs[i]);
	/* Odd multiples of the multiplier were never inserted. */
	for (i = 0; i < 1000; i++) {
		absent = (uint32_t)((N + i) * 2654435761U);
		ck_assert_ptr_null(find_id(&h, absent));
	}

	/* Remove in a different order than inserted; lookups stay right. */
	for (i = 0; i < N; i++) {
		size_t j = (i * 7919) % N;

		usl_hash_remove(&h, &objs[j].by_id);
		if (i % 1000 == 0)
			ck_assert_ptr_null(find_id(&h, objs[j].id));
	}
	ck_assert_uint_eq(usl_hash_count(&h), 0);
	ck_assert_uint_eq(h.nbuckets, 16);
	ck_assert_uint_lt(h.nbuckets, peak);
	ck_assert_ptr_null(usl_hash_first(&h));
	usl_hash_destroy(&h);
	free(objs);
}
END_TEST

START_TEST(test_shrink_hysteresis)
{
	enum { N = 1024 };
	static struct obj objs[N];
	struct usl_hash h;
	size_t i, nb;

	ck_assert_int_eq(usl_hash_init(&h, 4, eq_id), 0);
	for (i = 0; i < N; i++) {
		objs[i].id = (uint32_t)i;
		usl_hash_insert(&h, &objs[i].by_id, usl_hash_u32((uint32_t)i));
	}
	nb = h.nbuckets;
	ck_assert_uint_eq(nb, 1024);
	/* Down to an eighth of the buckets nothing shrinks. */
	for (i = N; i > nb / 8; i--)
		usl_hash_remove(&h, &objs[i - 1].by_id);
	ck_assert_uint_eq(h.nbuckets, nb);
	usl_hash_remove(&h, &objs[nb / 8 - 1].by_id);
	ck_assert_uint_eq(h.nbuckets, nb / 2);
	for (i = 0; i < nb / 8 - 1; i++)
		ck_assert_ptr_eq(find_id(&h, (uint32_t)i), &objs[i]);
	usl_hash_destroy(&h);
}
END_TEST

START_TEST(test_iterate)
{
	enum { N = 5000 };
	static struct obj objs[N];
	static bool seen[N];
	struct usl_hash h;
	struct usl_hnode *n;
	size_t i, count = 0;

	ck_assert_int_eq(usl_hash_init(&h, 1, eq_id), 0);
	ck_assert_ptr_null(usl_hash_first(&h));
	for (i = 0; i < N; i++) {
		objs[i].id = (uint32_t)i;
		usl_hash_insert(&h, &objs[i].by_id, usl_hash_u32((uint32_t)i));
	}
	for (n = usl_hash_first(&h); n; n = usl_hash_next(&h, n)) {
		struct obj *o = usl_hash_entry(n, struct obj, by_id);

		ck_assert(!seen[o->id]);
		seen[o->id] = true;
		count++;
	}
	ck_assert_uint_eq(count, N);
	usl_hash_destroy(&h);
}
END_TEST

START_TEST(test_two_tables)
{
	enum { N = 2000 };
	static struct obj objs[N];
	struct usl_hash ids, names;
	struct usl_hnode *n;
	size_t i;

	ck_assert_int_eq(usl_hash_init(&ids, 8, eq_id), 0);
	ck_assert_int_eq(usl_hash_init(&names, 8, eq_name), 0);
	for (i = 0; i < N; i++) {
		objs[i].id = (uint32_t)(i + 1);
		snprintf(objs[i].name, sizeof(objs[i].name), "tun%zu", i);
		usl_hash_insert(&ids, &objs[i].by_id, usl_hash_u32(objs[i].id));
		usl_hash_insert(&names, &objs[i].by_name, hash_name(objs[i].name));
	}
	for (i = 0; i < N; i++) {
		ck_assert_ptr_eq(find_id(&ids, objs[i].id), &objs[i]);
		n = usl_hash_lookup(&names, objs[i].name, hash_name(objs[i].name));
		ck_assert_ptr_eq(n, &objs[i].by_name);
	}
	/* Leaving one index does not disturb the other. */
	for (i = 0; i < N; i += 2)
		usl_hash_remove(&ids, &objs[i].by_id);
	for (i = 0; i < N; i++) {
		n = usl_hash_lookup(&names, objs[i].name, hash_name(objs[i].name));
		ck_assert_ptr_eq(n, &objs[i].by_name);
		if (i % 2)
			ck_assert_ptr_eq(find_id(&ids, objs[i].id), &objs[i]);
		else
			ck_assert_ptr_null(find_id(&ids, objs[i].id));
	}
	ck_assert_ptr_null(usl_hash_lookup(&names, "nope", hash_name("nope")));
	ck_assert_uint_eq(usl_hash_count(&ids), N / 2);
	ck_assert_uint_eq(usl_hash_count(&names), N);
	usl_hash_destroy(&ids);
	usl_hash_destroy(&names);
}
END_TEST

START_TEST(test_equal_hashes)
{
	/* Colliding hashes are told apart by eq(). */
	static struct obj a = { .id = 1 }, b = { .id = 2 };
	struct usl_hash h;

	ck_assert_int_eq(usl_hash_init(&h, 8, eq_id), 0);
	usl_hash_insert(&h, &a.by_id, 77);
	usl_hash_insert(&h, &b.by_id, 77);
	ck_assert_ptr_eq(usl_hash_lookup(&h, &a.id, 77), &a.by_id);
	ck_assert_ptr_eq(usl_hash_lookup(&h, &b.id, 77), &b.by_id);
	usl_hash_remove(&h, &a.by_id);
	ck_assert_ptr_null(usl_hash_lookup(&h, &a.id, 77));
	ck_assert_ptr_eq(usl_hash_lookup(&h, &b.id, 77), &b.by_id);
	usl_hash_destroy(&h);
}
END_TEST

START_TEST(test_hash_functions)
{
	uint32_t i, ones = 0, x;
	static const char k1[] = "10.0.0.1:1701", k2[] = "10.0.0.2:1701";

	/* Deterministic for a seed, and the seed matters. */
	ck_assert_uint_eq(usl_hash_bytes(k1, 13, 1), usl_hash_bytes(k1, 13, 1));
	ck_assert_uint_ne(usl_hash_bytes(k1, 13, 1), usl_hash_bytes(k1, 13, 2));
	ck_assert_uint_ne(usl_hash_bytes(k1, 13, 1), usl_hash_bytes(k2, 13, 1));
	ck_assert_uint_ne(usl_hash_bytes(k1, 0, 1), usl_hash_bytes(k1, 1, 1));
	ck_assert_uint_ne(usl_hash_u32(1), usl_hash_u32(2));
	/* Avalanche: flipping one input bit flips about half the output bits. */
	for (i = 0; i < 1024; i++) {
		x = usl_hash_u32(i) ^ usl_hash_u32(i ^ 1);
		ones += (uint32_t)__builtin_popcount(x);
	}
	ck_assert_uint_gt(ones, 1024 * 12);
	ck_assert_uint_lt(ones, 1024 * 20);
}
END_TEST

static Suite *hash_suite(void)
{
	Suite *s = suite_create("hash");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_many_keys);
	tcase_add_test(tc, test_shrink_hysteresis);
	tcase_add_test(tc, test_iterate);
	tcase_add_test(tc, test_two_tables);
	tcase_add_test(tc, test_equal_hashes);
	tcase_add_test(tc, test_hash_functions);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(hash_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
