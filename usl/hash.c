/*
 * usl/hash.c - intrusive chained hash table with power-of-two buckets.
 *
 * Each node keeps the full hash it was inserted with, so resizing never
 * calls back into the owner and lookups skip most key comparisons.
 */
#include <errno.h>
#include <stdlib.h>

#include "hash.h"

static size_t round_pow2(size_t n)
{
	size_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static inline size_t bucket_of(size_t nbuckets, uint32_t hash)
{
	return hash & (nbuckets - 1);
}

/* A bucket array of n: the inline bucket for 1, else an allocation. */
static struct usl_hnode **buckets_alloc(struct usl_hash *h, size_t n)
{
	if (n == 1) {
		h->bucket0 = NULL;
		return &h->bucket0;
	}
	return calloc(n, sizeof(struct usl_hnode *));
}

static void buckets_free(struct usl_hash *h, struct usl_hnode **b)
{
	if (b != &h->bucket0)
		free(b);
}

int usl_hash_init(struct usl_hash *h, size_t min_buckets, usl_hash_eq_fn eq)
{
	h->min_buckets = round_pow2(min_buckets ? min_buckets : 1);
	h->buckets = buckets_alloc(h, h->min_buckets);
	if (h->buckets == NULL) {
		errno = ENOMEM;
		return -1;
	}
	h->nbuckets = h->min_buckets;
	h->count = 0;
	h->eq = eq;
	return 0;
}

void usl_hash_destroy(struct usl_hash *h)
{
	if (h->buckets != NULL)
		buckets_free(h, h->buckets);
	h->buckets = NULL;
	h->nbuckets = 0;
	h->count = 0;
}

/* Moves every node to a new array of n buckets; on ENOMEM keeps the old one. */
static void hash_resize(struct usl_hash *h, size_t n)
{
	struct usl_hnode **old = h->buckets, *chain = NULL, *node, *next;
	size_t i, oldn = h->nbuckets;

	/* unlink everything first: the new array may be the inline bucket */
	for (i = 0; i < oldn; i++) {
		for (node = old[i]; node; node = next) {
			next = node->next;
			node->next = chain;
			chain = node;
		}
	}
	h->buckets = buckets_alloc(h, n);
	if (h->buckets == NULL) {
		/* denser chains are slower, not wrong: put them back */
		h->buckets = old;
		n = oldn;
		for (i = 0; i < oldn; i++)
			old[i] = NULL;
	} else {
		buckets_free(h, old == h->buckets ? NULL : old);
	}
	h->nbuckets = n;
	for (node = chain; node; node = next) {
		next = node->next;
		node->next = h->buckets[bucket_of(n, node->hash)];
		h->buckets[bucket_of(n, node->hash)] = node;
	}
}

void usl_hash_insert(struct usl_hash *h, struct usl_hnode *n, uint32_t hash)
{
	struct usl_hnode **b = &h->buckets[bucket_of(h->nbuckets, hash)];

	n->hash = hash;
	n->next = *b;
	*b = n;
	h->count++;
	if (h->count > h->nbuckets && h->nbuckets <= SIZE_MAX / 2 / sizeof(*b))
		hash_resize(h, h->nbuckets * 2);
}

struct usl_hnode *usl_hash_lookup(const struct usl_hash *h, const void *key, uint32_t hash)
{
	struct usl_hnode *n;

	for (n = h->buckets[bucket_of(h->nbuckets, hash)]; n; n = n->next) {
		if (n->hash == hash && h->eq(n, key))
			return n;
	}
	return NULL;
}

void usl_hash_remove(struct usl_hash *h, struct usl_hnode *n)
{
	struct usl_hnode **link = &h->buckets[bucket_of(h->nbuckets, n->hash)];

	while (*link && *link != n)
		link = &(*link)->next;
	if (*link == NULL)
		return;		/* not in this table */
	*link = n->next;
	n->next = NULL;
	h->count--;
	/* Shrink late (1/8) so a table hovering near a boundary does not thrash. */
	if (h->nbuckets > h->min_buckets && h->count < h->nbuckets / 8)
		hash_resize(h, h->nbuckets / 2);
}

static struct usl_hnode *hash_scan(const struct usl_hash *h, size_t from)
{
	size_t i;

	for (i = from; i < h->nbuckets; i++) {
		if (h->buckets[i])
			return h->buckets[i];
	}
	return NULL;
}

struct usl_hnode *usl_hash_first(const struct usl_hash *h)
{
	return hash_scan(h, 0);
}

struct usl_hnode *usl_hash_next(const struct usl_hash *h, const struct usl_hnode *n)
{
	if (n->next)
		return n->next;
	return hash_scan(h, bucket_of(h->nbuckets, n->hash) + 1);
}

/* The murmur3 32-bit finaliser: every input bit affects every output bit. */
uint32_t usl_hash_u32(uint32_t v)
{
	v ^= v >> 16;
	v *= 0x85ebca6bU;
	v ^= v >> 13;
	v *= 0xc2b2ae35U;
	v ^= v >> 16;
	return v;
}

/*
 * FNV-1a over the bytes, started from a seeded basis, then the finaliser:
 * FNV alone mixes the last bytes poorly into the low bits we index by.
 */
uint32_t usl_hash_bytes(const void *p, size_t len, uint32_t seed)
{
	const uint8_t *b = p;
	uint32_t h = 0x811c9dc5U ^ usl_hash_u32(seed);
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x01000193U;
	}
	return usl_hash_u32(h ^ (uint32_t)len);
}
