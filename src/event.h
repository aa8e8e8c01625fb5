/*
 * src/event.h - tunnel and session events, published once by the domain
 * layer (tunnel.c, session.c) and fanned out to whoever subscribed: the
 * control socket (monitor clients, requests waiting for an object), hooks,
 * SNMP notifications, the restarts of static objects (statics.c).  The
 * domain layer knows no consumer; a new consumer is one subscriber in its
 * own file.
 *
 * The struct is l2tpd_event, not event: libevent's `struct event`
 * (dp_kernel.c, usl/loop.c) would be the same tag, and a file may need both.
 */
#ifndef L2TPD_EVENT_H
#define L2TPD_EVENT_H

#include <stdbool.h>

#include "ctl_proto.h"
#include "proto/msg.h"
#include "usl/list.h"

struct tunnel;
struct session;

enum event_kind {
	EV_TUNNEL_CREATED,
	EV_TUNNEL_UP,		/* established, and in the data plane */
	EV_TUNNEL_DOWN,		/* was up */
	EV_TUNNEL_DELETED,
	EV_SESSION_CREATED,
	EV_SESSION_UP,
	EV_SESSION_DOWN,
	EV_SESSION_DELETED,
	/*
	 * The requests parked in `waiters` (struct ctl_req links, opaque
	 * here) are answered: st CTL_OK when the object (s, else t) is up,
	 * else st/err say why, and why is the peer's result if any.
	 */
	EV_WAITERS,
	/*
	 * The daemon is about to exec or exit for a restart (handover.c), no
	 * object: monitors are told, pending output must go now.
	 */
	EV_RESTARTING,
	/*
	 * A tunnel of the configuration's (origin config) went down, or is
	 * going, on its own: not deleted, not in a shutdown.  Its name (name)
	 * is free for a new connection.  t is the old one, NULL when there is
	 * none (ours lost a tie break and the peer's connection never came).
	 * at_once: it had been up a while when it stopped, so opening the
	 * new one now cannot hammer a peer that clears every connection as
	 * soon as it is made.
	 */
	EV_TUNNEL_RELEASED,
	/*
	 * t, a connection the peer opened, took the name and origin of ours,
	 * which lost the tie break to it: what ours would have carried is to
	 * be opened on t.
	 */
	EV_TUNNEL_INHERITED,
	/*
	 * A recovery connection we opened (RFC 4951) ended, recovered or not:
	 * failover.c may start the next one.
	 */
	EV_RECOVERY_ENDED,
	EV__COUNT
};

struct l2tpd_event {
	enum event_kind kind;
	const struct tunnel *t;
	const struct session *s;
	const struct l2tp_result *why;	/* on the way down: the result code */
	/* EV_WAITERS */
	struct usl_list *waiters;
	enum ctl_status st;
	const char *err;
	/* EV_TUNNEL_RELEASED */
	const char *name;
	bool at_once;
};

/*
 * The names an operator knows an event's objects by, read from the objects
 * while the event is published: after session-deleted the IDs resolve to
 * nothing, so whoever reports an event takes its names from here.  ""
 * where the object has none (a tunnel we opened has no peers entry).
 */
struct event_names {
	const char *tunnel;		/* the tunnel's name */
	const char *session;		/* the session's name; "" for tunnel events */
	const char *peer_entry;		/* the peers entry whose SCCRQ made the tunnel */
	const char *ifname;		/* the session's interface, once the data plane named it */
	const char *pw_type;		/* "eth", "eth_vlan", "ppp"; "" for tunnel events */
	/* the event's object's description (the session's for session events): operator text */
	const char *description;
	char remote_end_id[256];	/* escaped (usl/escape.h), cut between escapes */
};

/* Fills n from t and s (s NULL: a tunnel's names only); never fails. */
void event_names_get(const struct tunnel *t, const struct session *s, struct event_names *n);

/* "tunnel-up", "session-deleted"...: the monitor's names; NULL for the internal ones. */
const char *event_name(enum event_kind k);
/* The kind a monitor name stands for, or -1. */
int event_kind_by_name(const char *name);
/* "tunnel-created, tunnel-up, ...": every monitor name, for messages. */
const char *event_names_list(void);

typedef void (*event_fn)(const struct l2tpd_event *ev, void *arg);
/* Adds a subscriber (called in subscription order).  0, or -1 when full. */
int event_subscribe(event_fn fn, void *arg);
void event_unsubscribe(event_fn fn, void *arg);
void event_publish(const struct l2tpd_event *ev);

/* Up or down of a tunnel or a session: what hooks, metrics and the failover record follow. */
static inline bool event_is_up_down(enum event_kind k)
{
	return k == EV_TUNNEL_UP || k == EV_TUNNEL_DOWN || k == EV_SESSION_UP ||
	       k == EV_SESSION_DOWN;
}

/* The common case: an object changed. */
static inline void event_emit(enum event_kind k, const struct tunnel *t,
			      const struct session *s, const struct l2tp_result *why)
{
	struct l2tpd_event ev = { .kind = k, .t = t, .s = s, .why = why };

	event_publish(&ev);
}

#endif
