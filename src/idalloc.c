/*
 * src/idalloc.c - "lowest free id" allocator over free ranges.
 *
 * The tree holds the free ids as maximal ranges [start, end], ordered by
 * start: no two ranges overlap or touch (touching ranges are merged on put),
 * so the tree stays as small as the fragmentation of the pool, not its size.
 * get takes the first range's start; put finds the ranges on either side of
 * the id and grows one of them, joins both, or links a new one.
 */
#include <errno.h>
#include <stdlib.h>

#include "idalloc.h"

struct idrange {
	struct usl_rb_node node;	/* idalloc.free, by start */
	uint32_t start, end;		/* inclusive */
};

static inline struct idrange *node_range(const struct usl_rb_node *n)
{
	return n ? usl_rb_entry(n, struct idrange, node) : NULL;
}

static int range_cmp(const struct usl_rb_node *a, const struct usl_rb_node *b)
{
	uint32_t sa = node_range(a)->start, sb = node_range(b)->start;

	return (sa > sb) - (sa < sb);
}

static int range_key_cmp(const void *key, const struct usl_rb_node *n)
{
	uint32_t id = *(const uint32_t *)key, start = node_range(n)->start;

	return (id > start) - (id < start);
}

static int range_add(struct idalloc *a, uint32_t start, uint32_t end)
{
	struct idrange *r = malloc(sizeof(*r));

	if (r == NULL)
		return -1;
	r->start = start;
	r->end = end;
	usl_rb_insert(&a->free, &r->node, range_cmp);
	return 0;
}

static void range_del(struct idalloc *a, struct idrange *r)
{
	usl_rb_erase(&a->free, &r->node);
	free(r);
}

int idalloc_init(struct idalloc *a, uint32_t max)
{
	usl_rb_init(&a->free);
	a->max = max;
	a->used = 0;
	a->ready = false;
	if (max > 0 && range_add(a, 1, max) < 0) {
		errno = ENOMEM;
		return -1;
	}
	a->ready = true;
	return 0;
}

void idalloc_destroy(struct idalloc *a)
{
	struct usl_rb_node *n;

	/* Teardown only: O(n log n) at worst is fine, and needs no recursion. */
	while ((n = usl_rb_first(&a->free)) != NULL)
		range_del(a, node_range(n));
	a->used = 0;
	a->ready = false;
}

uint32_t idalloc_get(struct idalloc *a)
{
	struct idrange *r;
	uint32_t id;

	if (!a->ready || (r = node_range(usl_rb_first(&a->free))) == NULL)
		return 0;
	id = r->start;
	/* Raising the first range's start cannot reorder it: the tree stays valid. */
	if (r->start == r->end)
		range_del(a, r);
	else
		r->start++;
	a->used++;
	return id;
}

/*
 * Cases, with P the range before id and N the one after:
 *   P.end + 1 == id == N.start - 1   join P and N
 *   P.end + 1 == id                  grow P up
 *   id == N.start - 1                grow N down (still after P: order kept)
 *   otherwise                        new range [id, id]
 * An id inside P is already free: ignored.  When the new range cannot be
 * allocated the id stays taken: losing one id beats failing the caller.
 */
void idalloc_put(struct idalloc *a, uint32_t id)
{
	struct idrange *prev, *next;
	bool join_prev, join_next;

	if (!a->ready || id == 0 || id > a->max)
		return;
	next = node_range(usl_rb_find_gt(&a->free, &id, range_key_cmp));
	prev = node_range(next ? usl_rb_prev(&next->node) : usl_rb_last(&a->free));
	if (prev && prev->end >= id)
		return;
	join_prev = prev && prev->end + 1 == id;
	join_next = next && next->start - 1 == id;
	if (join_prev && join_next) {
		prev->end = next->end;
		range_del(a, next);
	} else if (join_prev) {
		prev->end = id;
	} else if (join_next) {
		next->start = id;
	} else if (range_add(a, id, id) < 0) {
		return;
	}
	a->used--;
}

unsigned idalloc_ranges(const struct idalloc *a)
{
	const struct usl_rb_node *n;
	unsigned count = 0;

	for (n = usl_rb_first(&a->free); n; n = usl_rb_next(n))
		count++;
	return count;
}

/*
 * The range holding id is cut around it: shrunk at either end, dropped when
 * it held id alone, or split in two (the one allocation this may need).
 */
bool idalloc_take(struct idalloc *a, uint32_t id)
{
	struct idrange *r, *next;
	uint32_t end;

	if (!a->ready || id == 0 || id > a->max)
		return false;
	next = node_range(usl_rb_find_gt(&a->free, &id, range_key_cmp));
	r = node_range(next ? usl_rb_prev(&next->node) : usl_rb_last(&a->free));
	if (r == NULL || r->end < id)
		return false;	/* taken already */
	if (r->start == id && r->end == id) {
		range_del(a, r);
	} else if (r->start == id) {
		r->start++;	/* still after its predecessor: order kept */
	} else if (r->end == id) {
		r->end--;
	} else {
		end = r->end;
		if (range_add(a, id + 1, end) < 0)
			return false;
		r->end = id - 1;
	}
	a->used++;
	return true;
}
