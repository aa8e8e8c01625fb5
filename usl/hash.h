/*
 * usl/hash.h - intrusive hash table, power-of-two buckets, grows and shrinks.
 *
 * An object can sit in several tables through several usl_hnode fields.
 * The caller computes the hash (so it is computed once per lookup) and
 * supplies key equality.  Growing doubles the buckets when the load factor
 * passes 1; shrinking halves them below 1/8 (never below min_buckets).
 * A failed grow (ENOMEM) is not an error: the table just stays denser.
 */
#ifndef USL_HASH_H
#define USL_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "rbtree.h"	/* usl_container_of */

struct usl_hnode {
	struct usl_hnode *next;
	uint32_t hash;
};

/* True when node n holds key. */
typedef bool (*usl_hash_eq_fn)(const struct usl_hnode *n, const void *key);

struct usl_hash {
	struct usl_hnode **buckets;
	size_t nbuckets;		/* power of two */
	size_t min_buckets;
	size_t count;
	usl_hash_eq_fn eq;
	/*
	 * A one-bucket table uses this instead of an allocation, so a table
	 * that holds zero or one node (a tunnel's sessions, mostly) costs no
	 * malloc.  A table must therefore not be copied by value once
	 * initialised.
	 */
	struct usl_hnode *bucket0;
};

/*
 * -1 with errno=ENOMEM when the first bucket array cannot be had (never
 * for min_buckets <= 1, which starts on the inline bucket).
 */
int usl_hash_init(struct usl_hash *h, size_t min_buckets, usl_hash_eq_fn eq);
void usl_hash_destroy(struct usl_hash *h);	/* frees buckets, not the objects */

void usl_hash_insert(struct usl_hash *h, struct usl_hnode *n, uint32_t hash);
struct usl_hnode *usl_hash_lookup(const struct usl_hash *h, const void *key, uint32_t hash);
void usl_hash_remove(struct usl_hash *h, struct usl_hnode *n);
static inline size_t usl_hash_count(const struct usl_hash *h) { return h->count; }

/* Iteration (order unspecified); the table must not change meanwhile. */
struct usl_hnode *usl_hash_first(const struct usl_hash *h);
struct usl_hnode *usl_hash_next(const struct usl_hash *h, const struct usl_hnode *n);

#define usl_hash_entry(ptr, type, member) usl_container_of(ptr, type, member)

/* Hash functions: good avalanche, cheap.  Seeded per process against flooding. */
uint32_t usl_hash_u32(uint32_t v);
uint32_t usl_hash_bytes(const void *p, size_t len, uint32_t seed);

#endif
