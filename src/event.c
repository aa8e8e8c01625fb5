/*
 * src/event.c - the fan-out of tunnel and session events (see event.h).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "event.h"
#include "l2tpv3d.h"
#include "usl/escape.h"

#define MAX_SUBSCRIBERS	8	/* control socket, hooks, SNMP, metrics: a handful */

static struct {
	event_fn fn;
	void *arg;
} subs[MAX_SUBSCRIBERS];
static unsigned n_subs;

static const char *const names[EV__COUNT] = {
	[EV_TUNNEL_CREATED] = "tunnel-created",
	[EV_TUNNEL_UP] = "tunnel-up",
	[EV_TUNNEL_DOWN] = "tunnel-down",
	[EV_TUNNEL_DELETED] = "tunnel-deleted",
	[EV_SESSION_CREATED] = "session-created",
	[EV_SESSION_UP] = "session-up",
	[EV_SESSION_DOWN] = "session-down",
	[EV_SESSION_DELETED] = "session-deleted",
	[EV_WAITERS] = NULL,
	[EV_RESTARTING] = NULL,
	[EV_TUNNEL_RELEASED] = NULL,
	[EV_TUNNEL_INHERITED] = NULL,
};

const char *event_name(enum event_kind k)
{
	return (unsigned)k < EV__COUNT ? names[k] : NULL;
}

int event_kind_by_name(const char *name)
{
	for (unsigned k = 0; name != NULL && k < EV__COUNT; k++)
		if (names[k] != NULL && strcmp(names[k], name) == 0)
			return (int)k;
	return -1;
}

const char *event_names_list(void)
{
	static char list[256];
	size_t used = 0;

	if (list[0] != '\0')
		return list;
	for (unsigned k = 0; k < EV__COUNT; k++)
		if (names[k] != NULL && used < sizeof(list))
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
						 used ? ", " : "", names[k]);
	return list;
}

void event_names_get(const struct tunnel *t, const struct session *s, struct event_names *n)
{
	const uint8_t *rei = NULL;
	uint16_t rei_len = 0;

	n->tunnel = name_str(t->name);
	n->peer_entry = name_str(t->peer_entry);
	n->session = s != NULL ? name_str(s->name) : "";
	n->ifname = s != NULL ? s->ifname : "";
	n->pw_type = "";
	n->remote_end_id[0] = '\0';
	n->description = s != NULL ? name_str(s->description) : name_str(t->description);
	if (s == NULL)
		return;
	/* the engine's copy while it has one: the negotiated type, the peer's REI */
	if (s->sess != NULL) {
		n->pw_type = config_pw_type_name(l2tp_sess_pw_type(s->sess));
		rei = l2tp_sess_remote_end_id(s->sess, &rei_len);
	} else {
		n->pw_type = config_pw_type_name(s->prof->pw_type);
	}
	if (rei != NULL)
		usl_str_escape(n->remote_end_id, sizeof(n->remote_end_id), rei, rei_len);
}

int event_subscribe(event_fn fn, void *arg)
{
	if (n_subs >= MAX_SUBSCRIBERS)
		return -1;
	subs[n_subs].fn = fn;
	subs[n_subs].arg = arg;
	n_subs++;
	return 0;
}

void event_unsubscribe(event_fn fn, void *arg)
{
	for (unsigned i = 0; i < n_subs; i++) {
		if (subs[i].fn != fn || subs[i].arg != arg)
			continue;
		for (unsigned j = i + 1; j < n_subs; j++)
			subs[j - 1] = subs[j];
		n_subs--;
		return;
	}
}

void event_publish(const struct l2tpd_event *ev)
{
	for (unsigned i = 0; i < n_subs; i++)
		subs[i].fn(ev, subs[i].arg);
}
