/*
 * usl/rbtree.h - intrusive red-black tree.
 *
 * The node lives inside its owner and is recovered with usl_container_of(),
 * so inserting never allocates.  The core only links and rebalances; callers
 * supply the ordering.  The root caches the leftmost node so the earliest
 * element (the next timer to expire) is found in O(1).
 *
 * Invariants (checked by usl_rb_validate() in the unit tests):
 *  1. every node is red or black; the root is black;
 *  2. a red node has no red child;
 *  3. every path from a node to its leaves has the same number of black nodes.
 */
#ifndef USL_RBTREE_H
#define USL_RBTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define usl_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

struct usl_rb_node {
	uintptr_t parent_color;		/* parent pointer | colour in bit 0 */
	struct usl_rb_node *left;
	struct usl_rb_node *right;
};

struct usl_rb_root {
	struct usl_rb_node *node;
	struct usl_rb_node *leftmost;	/* cached first node */
};

#define USL_RB_ROOT_INIT { NULL, NULL }
#define usl_rb_entry(ptr, type, member) usl_container_of(ptr, type, member)

/* Orders two nodes: <0, 0, >0 like strcmp.  Equal nodes go right of existing ones. */
typedef int (*usl_rb_cmp_fn)(const struct usl_rb_node *a, const struct usl_rb_node *b);
/* Compares a search key with a node: <0 when key sorts before node. */
typedef int (*usl_rb_key_cmp_fn)(const void *key, const struct usl_rb_node *n);

void usl_rb_init(struct usl_rb_root *root);
/* Links node in order; O(log n).  Ties are placed after existing equal nodes (FIFO). */
void usl_rb_insert(struct usl_rb_root *root, struct usl_rb_node *node, usl_rb_cmp_fn cmp);
/* Unlinks a node that is in the tree; O(log n).  The node is left cleared. */
void usl_rb_erase(struct usl_rb_root *root, struct usl_rb_node *node);

struct usl_rb_node *usl_rb_first(const struct usl_rb_root *root);	/* O(1) */
struct usl_rb_node *usl_rb_last(const struct usl_rb_root *root);
struct usl_rb_node *usl_rb_next(const struct usl_rb_node *node);
struct usl_rb_node *usl_rb_prev(const struct usl_rb_node *node);

/* Exact match (any of several equal nodes), or NULL. */
struct usl_rb_node *usl_rb_find(const struct usl_rb_root *root, const void *key,
				usl_rb_key_cmp_fn cmp);
/* Lower bound: the first node not sorting before key, or NULL. */
struct usl_rb_node *usl_rb_find_ge(const struct usl_rb_root *root, const void *key,
				   usl_rb_key_cmp_fn cmp);
/* Upper bound: the first node sorting strictly after key, or NULL (GETNEXT walks). */
struct usl_rb_node *usl_rb_find_gt(const struct usl_rb_root *root, const void *key,
				   usl_rb_key_cmp_fn cmp);

static inline bool usl_rb_empty(const struct usl_rb_root *root) { return root->node == NULL; }
/* A cleared node is its own parent: that marks "not in any tree". */
static inline void usl_rb_node_clear(struct usl_rb_node *n) { n->parent_color = (uintptr_t)n; }
static inline bool usl_rb_node_linked(const struct usl_rb_node *n)
{
	return n->parent_color != (uintptr_t)n;
}

/*
 * Checks colour rules, parent links, ordering and the cached leftmost.
 * Returns the black height, or -1 when any invariant is broken (tests only).
 */
int usl_rb_validate(const struct usl_rb_root *root, usl_rb_cmp_fn cmp);

#endif
