/*
 * src/objref.c - a tunnel or session as the operator names it: by ID or by
 * name.  When there is none, the message says what there is, so the next
 * try can be right: the closest name ("did you mean"), then the names (the
 * ID of an unnamed object) of the first OBJREF_LIST_MAX, and how many more.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "l2tpv3d.h"
#include "usl/suggest.h"

#define OBJREF_LIST_MAX	10

/* What exists, gathered while walking the objects. */
struct known {
	const char *typed;		/* the name not found, or NULL (an ID) */
	char first[OBJREF_LIST_MAX][CFG_NAME_MAX];	/* the first in natural order */
	unsigned listed, more;
	unsigned best;			/* distance of closest */
	char closest[CFG_NAME_MAX];
};

/* The closest name so far; of two as close, the first in natural order. */
static void known_suggest(struct known *k, const char *name)
{
	unsigned d = k->best == UINT_MAX ? UINT_MAX : k->best + 1;

	if (!usl_suggest_close(k->typed, name, &d))
		return;
	if (d == k->best && strverscmp(name, k->closest) > 0)
		return;
	k->best = d;
	snprintf(k->closest, sizeof(k->closest), "%s", name);
}

/* Keeps the first OBJREF_LIST_MAX in natural order ("x2" before "x10"): a stable message. */
static void known_add(struct known *k, const char *name, uint32_t id)
{
	char idbuf[16];
	unsigned i;

	if (name != NULL && k->typed != NULL)
		known_suggest(k, name);
	if (name == NULL) {
		snprintf(idbuf, sizeof(idbuf), "%u", id);
		name = idbuf;
	}
	if (k->listed == OBJREF_LIST_MAX) {
		k->more++;
		if (strverscmp(name, k->first[OBJREF_LIST_MAX - 1]) >= 0)
			return;
		k->listed--;	/* the last one drops out */
	}
	for (i = k->listed; i > 0 && strverscmp(name, k->first[i - 1]) < 0; i--)
		memcpy(k->first[i], k->first[i - 1], sizeof(k->first[i]));
	snprintf(k->first[i], sizeof(k->first[i]), "%s", name);
	k->listed++;
}

static void known_join(const struct known *k, char *out, size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	for (unsigned i = 0; i < k->listed && used < len; i++) {
		int w = snprintf(out + used, len - used, "%s%s", i ? ", " : "", k->first[i]);

		if (w < 0)
			break;
		used += (size_t)w;
	}
}

/* "no tunnel named 'x' (did you mean 'y'? valid: y, z and 3 more)" */
static void known_format(const struct known *k, const char *what, uint32_t id,
			 char *err, size_t errlen)
{
	char head[CFG_NAME_MAX + 64], mean[CFG_NAME_MAX + 32] = "", more[32] = "";
	char list[OBJREF_LIST_MAX * (CFG_NAME_MAX + 2)];

	if (k->typed != NULL)
		snprintf(head, sizeof(head), "no %s named '%s'", what, k->typed);
	else
		snprintf(head, sizeof(head), "no %s with id %u", what, id);
	if (k->listed == 0) {
		snprintf(err, errlen, "%s (there are no %ss)", head, what);
		return;
	}
	if (k->closest[0])
		snprintf(mean, sizeof(mean), "did you mean '%s'? ", k->closest);
	if (k->more)
		snprintf(more, sizeof(more), " and %u more", k->more);
	known_join(k, list, sizeof(list));
	snprintf(err, errlen, "%s (%svalid: %s%s)", head, mean, list, more);
}

static void known_init(struct known *k, const char *name)
{
	memset(k, 0, sizeof(*k));
	k->typed = name;
	k->best = UINT_MAX;
}

struct tunnel *objref_tunnel(uint32_t id, const char *name, char *err, size_t errlen)
{
	struct tunnel *t = id ? tunnel_find(id) : tunnel_find_name(name);
	struct usl_rb_node *n;
	struct known k;

	if (t != NULL)
		return t;
	known_init(&k, id ? NULL : name);
	for (n = usl_rb_first(&l2tpd.tunnel_order); n != NULL; n = usl_rb_next(n)) {
		t = usl_rb_entry(n, struct tunnel, by_order);
		known_add(&k, t->name, t->id);
	}
	known_format(&k, "tunnel", id, err, errlen);
	return NULL;
}

struct session *objref_session(uint32_t id, const char *name, char *err, size_t errlen)
{
	struct session *s = id ? session_find(id) : session_find_name(name);
	struct usl_rb_node *n;
	struct usl_list *pos;
	struct known k;

	if (s != NULL)
		return s;
	known_init(&k, id ? NULL : name);
	for (n = usl_rb_first(&l2tpd.tunnel_order); n != NULL; n = usl_rb_next(n)) {
		usl_list_foreach(pos, &usl_rb_entry(n, struct tunnel, by_order)->sessions) {
			s = usl_container_of(pos, struct session, tunnel_link);
			known_add(&k, s->name, s->id);
		}
	}
	known_format(&k, "session", id, err, errlen);
	return NULL;
}
