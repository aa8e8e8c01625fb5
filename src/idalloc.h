/*
 * src/idalloc.h - "lowest free id" allocator in O(log n).
 *
 * Used for the per-peer SNMP config_id: the free ids are kept as ranges in
 * an rbtree ordered by start, so the lowest free id is the first range
 * (O(1) via the cached leftmost) and taking or returning an id touches one
 * or two ranges (O(log n)).  Never a walk over the ids in use.
 * An empty allocator holds the single range [1, max].
 */
#ifndef L2TPD_IDALLOC_H
#define L2TPD_IDALLOC_H

#include <stdbool.h>
#include <stdint.h>
#include "usl/rbtree.h"

struct idalloc {
	struct usl_rb_root free;	/* struct idrange, by start */
	uint32_t max;
	uint32_t used;
	bool ready;
};

/* Prepares ids 1..max.  -1 with errno on allocation failure. */
int idalloc_init(struct idalloc *a, uint32_t max);
void idalloc_destroy(struct idalloc *a);
/* The lowest free id, now taken; 0 when none is left (or ENOMEM). */
uint32_t idalloc_get(struct idalloc *a);
/* Returns id to the pool; ids not taken are ignored. */
void idalloc_put(struct idalloc *a, uint32_t id);
/* Takes that id (a restart's handed-over one); false when taken already or out of range. */
bool idalloc_take(struct idalloc *a, uint32_t id);
/* Number of free ranges (tests, fragmentation). */
unsigned idalloc_ranges(const struct idalloc *a);

#endif
