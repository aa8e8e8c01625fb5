/*
 * usl/rbtree.c - intrusive red-black tree.
 *
 * The colour lives in bit 0 of the parent pointer (nodes are at least
 * pointer-aligned, so that bit is free).  A set bit means red.  Absent
 * children (NULL) count as black leaves.
 *
 * Only linking and rebalancing live here; callers own the ordering, which
 * is passed to insert and to the search helpers.
 */
#include "rbtree.h"

#define RB_RED	((uintptr_t)1)

static inline struct usl_rb_node *rb_parent(const struct usl_rb_node *n)
{
	return (struct usl_rb_node *)(n->parent_color & ~RB_RED);
}

static inline bool rb_is_red(const struct usl_rb_node *n)
{
	return n != NULL && (n->parent_color & RB_RED);
}

static inline bool rb_is_black(const struct usl_rb_node *n)
{
	return !rb_is_red(n);
}

static inline void rb_set_parent(struct usl_rb_node *n, struct usl_rb_node *p)
{
	n->parent_color = (uintptr_t)p | (n->parent_color & RB_RED);
}

static inline void rb_set_red(struct usl_rb_node *n)
{
	n->parent_color |= RB_RED;
}

static inline void rb_set_black(struct usl_rb_node *n)
{
	n->parent_color &= ~RB_RED;
}

/* Gives n the colour of from (used when a node takes another's place). */
static inline void rb_copy_color(struct usl_rb_node *n, const struct usl_rb_node *from)
{
	n->parent_color = (n->parent_color & ~RB_RED) | (from->parent_color & RB_RED);
}

/* Points whatever referred to old (parent's child link or the root) at new. */
static void rb_replace_child(struct usl_rb_root *root, struct usl_rb_node *parent,
			     struct usl_rb_node *old, struct usl_rb_node *new)
{
	if (parent == NULL)
		root->node = new;
	else if (parent->left == old)
		parent->left = new;
	else
		parent->right = new;
}

/*
 *     x              y
 *    / \            / \
 *   a   y    ->    x   c
 *      / \        / \
 *     b   c      a   b
 */
static void rb_rotate_left(struct usl_rb_root *root, struct usl_rb_node *x)
{
	struct usl_rb_node *y = x->right;
	struct usl_rb_node *p = rb_parent(x);

	x->right = y->left;
	if (y->left)
		rb_set_parent(y->left, x);
	rb_set_parent(y, p);
	rb_replace_child(root, p, x, y);
	y->left = x;
	rb_set_parent(x, y);
}

/* Mirror image of rb_rotate_left(). */
static void rb_rotate_right(struct usl_rb_root *root, struct usl_rb_node *x)
{
	struct usl_rb_node *y = x->left;
	struct usl_rb_node *p = rb_parent(x);

	x->left = y->right;
	if (y->right)
		rb_set_parent(y->right, x);
	rb_set_parent(y, p);
	rb_replace_child(root, p, x, y);
	y->right = x;
	rb_set_parent(x, y);
}

void usl_rb_init(struct usl_rb_root *root)
{
	root->node = NULL;
	root->leftmost = NULL;
}

/*
 * Restores the colour rules after linking the red node n.  The only
 * possible violation is n and its parent both red.  With G the grandparent,
 * P the parent and U the uncle:
 *  - U red: recolour P and U black, G red, and continue from G;
 *  - U black, n an inner child: rotate at P so n becomes the outer child;
 *  - U black, n an outer child: rotate at G, P takes G's place, black.
 */
static void rb_insert_fixup(struct usl_rb_root *root, struct usl_rb_node *n)
{
	struct usl_rb_node *p, *g, *u;

	while ((p = rb_parent(n)) != NULL && rb_is_red(p)) {
		g = rb_parent(p);	/* exists: a red node is never the root */
		if (p == g->left) {
			u = g->right;
			if (rb_is_red(u)) {
				rb_set_black(p);
				rb_set_black(u);
				rb_set_red(g);
				n = g;
				continue;
			}
			if (n == p->right) {
				rb_rotate_left(root, p);
				n = p;
				p = rb_parent(n);
			}
			rb_set_black(p);
			rb_set_red(g);
			rb_rotate_right(root, g);
		} else {
			u = g->left;
			if (rb_is_red(u)) {
				rb_set_black(p);
				rb_set_black(u);
				rb_set_red(g);
				n = g;
				continue;
			}
			if (n == p->left) {
				rb_rotate_right(root, p);
				n = p;
				p = rb_parent(n);
			}
			rb_set_black(p);
			rb_set_red(g);
			rb_rotate_left(root, g);
		}
	}
	rb_set_black(root->node);
}

void usl_rb_insert(struct usl_rb_root *root, struct usl_rb_node *node, usl_rb_cmp_fn cmp)
{
	struct usl_rb_node **link = &root->node;
	struct usl_rb_node *parent = NULL;
	bool leftmost = true;

	/* Equal nodes go right, so a new node follows the ones already there. */
	while (*link) {
		parent = *link;
		if (cmp(node, parent) < 0) {
			link = &parent->left;
		} else {
			link = &parent->right;
			leftmost = false;
		}
	}
	node->parent_color = (uintptr_t)parent | RB_RED;
	node->left = NULL;
	node->right = NULL;
	*link = node;
	if (leftmost)
		root->leftmost = node;
	rb_insert_fixup(root, node);
}

static struct usl_rb_node *rb_min(struct usl_rb_node *n)
{
	while (n->left)
		n = n->left;
	return n;
}

static struct usl_rb_node *rb_max(struct usl_rb_node *n)
{
	while (n->right)
		n = n->right;
	return n;
}

/* Puts v (possibly NULL) where u was, as a child of u's parent. */
static void rb_transplant(struct usl_rb_root *root, struct usl_rb_node *u, struct usl_rb_node *v)
{
	struct usl_rb_node *p = rb_parent(u);

	rb_replace_child(root, p, u, v);
	if (v)
		rb_set_parent(v, p);
}

/*
 * A black node was removed from the path through x (which may be NULL, so
 * its parent xp is passed too): x carries an "extra black".  With S the
 * sibling:
 *  - S red: rotate at xp so the sibling becomes black, then go on;
 *  - S black with two black children: make S red, push the extra up to xp;
 *  - S black, its far child black: rotate at S so the far child is red;
 *  - S black, its far child red: rotate at xp, recolour, done.
 * A red x simply turns black.
 */
static void rb_erase_fixup(struct usl_rb_root *root, struct usl_rb_node *x,
			   struct usl_rb_node *xp)
{
	struct usl_rb_node *s;

	while (x != root->node && rb_is_black(x)) {
		if (x == xp->left) {
			s = xp->right;
			if (rb_is_red(s)) {
				rb_set_black(s);
				rb_set_red(xp);
				rb_rotate_left(root, xp);
				s = xp->right;
			}
			if (rb_is_black(s->left) && rb_is_black(s->right)) {
				rb_set_red(s);
				x = xp;
				xp = rb_parent(x);
				continue;
			}
			if (rb_is_black(s->right)) {
				rb_set_black(s->left);
				rb_set_red(s);
				rb_rotate_right(root, s);
				s = xp->right;
			}
			rb_copy_color(s, xp);
			rb_set_black(xp);
			rb_set_black(s->right);
			rb_rotate_left(root, xp);
		} else {
			s = xp->left;
			if (rb_is_red(s)) {
				rb_set_black(s);
				rb_set_red(xp);
				rb_rotate_right(root, xp);
				s = xp->left;
			}
			if (rb_is_black(s->left) && rb_is_black(s->right)) {
				rb_set_red(s);
				x = xp;
				xp = rb_parent(x);
				continue;
			}
			if (rb_is_black(s->left)) {
				rb_set_black(s->right);
				rb_set_red(s);
				rb_rotate_left(root, s);
				s = xp->left;
			}
			rb_copy_color(s, xp);
			rb_set_black(xp);
			rb_set_black(s->left);
			rb_rotate_right(root, xp);
		}
		x = root->node;
		break;
	}
	if (x)
		rb_set_black(x);
}

void usl_rb_erase(struct usl_rb_root *root, struct usl_rb_node *node)
{
	struct usl_rb_node *x, *xp, *y;
	bool removed_black;

	if (root->leftmost == node)
		root->leftmost = usl_rb_next(node);

	if (node->left == NULL || node->right == NULL) {
		/* At most one child: it moves up into node's place. */
		x = node->left ? node->left : node->right;
		xp = rb_parent(node);
		removed_black = rb_is_black(node);
		rb_transplant(root, node, x);
	} else {
		/*
		 * Two children: the successor y (leftmost of the right
		 * subtree, so it has no left child) takes node's place and
		 * colour; what is lost is y's colour at y's old position.
		 */
		y = rb_min(node->right);
		removed_black = rb_is_black(y);
		x = y->right;
		if (rb_parent(y) == node) {
			xp = y;
		} else {
			xp = rb_parent(y);
			rb_transplant(root, y, x);
			y->right = node->right;
			rb_set_parent(y->right, y);
		}
		rb_transplant(root, node, y);
		y->left = node->left;
		rb_set_parent(y->left, y);
		rb_copy_color(y, node);
	}
	if (removed_black)
		rb_erase_fixup(root, x, xp);
	node->left = NULL;
	node->right = NULL;
	usl_rb_node_clear(node);
}

struct usl_rb_node *usl_rb_first(const struct usl_rb_root *root)
{
	return root->leftmost;
}

struct usl_rb_node *usl_rb_last(const struct usl_rb_root *root)
{
	return root->node ? rb_max(root->node) : NULL;
}

struct usl_rb_node *usl_rb_next(const struct usl_rb_node *node)
{
	struct usl_rb_node *p;

	if (node->right)
		return rb_min(node->right);
	/* Climb until we come up from a left child. */
	while ((p = rb_parent(node)) != NULL && node == p->right)
		node = p;
	return p;
}

struct usl_rb_node *usl_rb_prev(const struct usl_rb_node *node)
{
	struct usl_rb_node *p;

	if (node->left)
		return rb_max(node->left);
	while ((p = rb_parent(node)) != NULL && node == p->left)
		node = p;
	return p;
}

struct usl_rb_node *usl_rb_find(const struct usl_rb_root *root, const void *key,
				usl_rb_key_cmp_fn cmp)
{
	struct usl_rb_node *n = root->node;
	int c;

	while (n) {
		c = cmp(key, n);
		if (c == 0)
			return n;
		n = c < 0 ? n->left : n->right;
	}
	return NULL;
}

struct usl_rb_node *usl_rb_find_ge(const struct usl_rb_root *root, const void *key,
				   usl_rb_key_cmp_fn cmp)
{
	struct usl_rb_node *n = root->node, *best = NULL;

	while (n) {
		if (cmp(key, n) <= 0) {
			best = n;	/* candidate; look for an earlier one */
			n = n->left;
		} else {
			n = n->right;
		}
	}
	return best;
}

struct usl_rb_node *usl_rb_find_gt(const struct usl_rb_root *root, const void *key,
				   usl_rb_key_cmp_fn cmp)
{
	struct usl_rb_node *n = root->node, *best = NULL;

	while (n) {
		if (cmp(key, n) < 0) {
			best = n;
			n = n->left;
		} else {
			n = n->right;
		}
	}
	return best;
}

/* Black height of the subtree at n (NULL leaves count 0), or -1 if broken. */
static int rb_check_subtree(const struct usl_rb_node *n, const struct usl_rb_node *parent)
{
	int lh, rh;

	if (n == NULL)
		return 0;
	if (rb_parent(n) != parent)
		return -1;
	if (rb_is_red(n) && (rb_is_red(n->left) || rb_is_red(n->right)))
		return -1;
	lh = rb_check_subtree(n->left, n);
	rh = rb_check_subtree(n->right, n);
	if (lh < 0 || rh < 0 || lh != rh)
		return -1;
	return lh + (rb_is_black(n) ? 1 : 0);
}

/* In-order walk with next(): must be non-decreasing, and prev() must undo next(). */
static bool rb_check_order(const struct usl_rb_root *root, usl_rb_cmp_fn cmp)
{
	const struct usl_rb_node *n, *next;

	if (root->node == NULL)
		return true;
	for (n = rb_min(root->node); (next = usl_rb_next(n)) != NULL; n = next) {
		if (cmp(n, next) > 0 || usl_rb_prev(next) != n)
			return false;
	}
	return n == rb_max(root->node);
}

int usl_rb_validate(const struct usl_rb_root *root, usl_rb_cmp_fn cmp)
{
	if (root->node == NULL)
		return root->leftmost == NULL ? 0 : -1;
	if (rb_is_red(root->node) || rb_parent(root->node) != NULL)
		return -1;
	if (root->leftmost != rb_min(root->node))
		return -1;
	if (!rb_check_order(root, cmp))
		return -1;
	return rb_check_subtree(root->node, NULL);
}
