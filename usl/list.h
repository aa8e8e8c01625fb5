/* usl/list.h - intrusive circular doubly linked list (head is a sentinel). */
#ifndef USL_LIST_H
#define USL_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include "rbtree.h"	/* usl_container_of */

struct usl_list {
	struct usl_list *next, *prev;
};

#define USL_LIST_INIT(name) { &(name), &(name) }

static inline void usl_list_init(struct usl_list *h) { h->next = h->prev = h; }
static inline bool usl_list_empty(const struct usl_list *h) { return h->next == h; }

static inline void usl_list_link_(struct usl_list *n, struct usl_list *prev, struct usl_list *next)
{
	n->prev = prev;
	n->next = next;
	prev->next = n;
	next->prev = n;
}
static inline void usl_list_add_head(struct usl_list *h, struct usl_list *n) { usl_list_link_(n, h, h->next); }
static inline void usl_list_add_tail(struct usl_list *h, struct usl_list *n) { usl_list_link_(n, h->prev, h); }
/* Unlinks and re-initialises n, so removing twice is harmless. */
static inline void usl_list_del(struct usl_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	usl_list_init(n);
}

#define usl_list_entry(ptr, type, member) usl_container_of(ptr, type, member)
#define usl_list_first_entry(h, type, member) usl_list_entry((h)->next, type, member)
#define usl_list_foreach(pos, h) for ((pos) = (h)->next; (pos) != (h); (pos) = (pos)->next)
#define usl_list_foreach_rev(pos, h) for ((pos) = (h)->prev; (pos) != (h); (pos) = (pos)->prev)
/* Safe against removal of pos. */
#define usl_list_foreach_safe(pos, tmp, h) \
	for ((pos) = (h)->next, (tmp) = (pos)->next; (pos) != (h); (pos) = (tmp), (tmp) = (pos)->next)

#endif
