/*
 * src/statics.c - the static tunnels and sessions the configuration lists,
 * kept up: started when the daemon starts and when a reload adds them
 * (reload.c decides which), and started again after a backoff when one
 * goes down on its own.
 *
 * Like the control socket, this module learns of tunnels and sessions
 * from the event fan-out only: tunnel.c and session.c know nothing of it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "l2tpv3d.h"
#include "usl/escape.h"
#include "usl/log.h"

/*
 * Static tunnels and sessions are the operator's standing order: when one
 * goes down for any reason but a delete, a reload or shutdown, it is
 * started again after a backoff (5 s doubling to 5 min), for as long as
 * the config lists it.  A tunnel that had been up a while and is closed by
 * its peer (a restarted LNS) opens its new connection at once instead: the
 * StopCCN hold concerns the old Control Connection ID only.  A tunnel
 * through an LNS pool opens its new connection at once too, on another
 * member (the failed one is held down), until every member has had its
 * turn or is held down: then the backoff applies.
 */
#define STATIC_RETRY_FIRST_S	5
#define STATIC_RETRY_MAX_S	300

struct static_retry {
	struct usl_list link;
	struct usl_timer timer;
	char *name;		/* the static tunnel */
	char *sess;		/* a static session of it, or NULL for the tunnel */
	unsigned attempts;
	usl_time next_try;
	char why[160];		/* why it went down last ("" when not known) */
};

static struct usl_list retries = USL_LIST_INIT(retries);

/*
 * Why the last static object went down: its down and deleted events (or a
 * failed start) come before static_*_lost(), which files it with the retry.
 */
static struct {
	char tunnel[CFG_NAME_MAX], sess[CFG_NAME_MAX];
	char why[160];
} last_down;

static void note_down(const char *tunnel, const char *sess, const char *why)
{
	snprintf(last_down.tunnel, sizeof(last_down.tunnel), "%s", tunnel ? tunnel : "");
	snprintf(last_down.sess, sizeof(last_down.sess), "%s", sess ? sess : "");
	/* a longer reason is cut: it is the log's to keep whole */
	snprintf(last_down.why, sizeof(last_down.why), "%.*s", (int)sizeof(last_down.why) - 1,
		 why ? why : "");
}

/* Notes why the object of a down or deleted event went down. */
static void note_event(const struct l2tpd_event *ev)
{
	char msg[96] = "", why[160];
	const struct l2tp_result *r = ev->why;
	bool sess = ev->kind == EV_SESSION_DOWN || ev->kind == EV_SESSION_DELETED;

	if ((ev->kind != EV_TUNNEL_DOWN && ev->kind != EV_TUNNEL_DELETED && !sess) ||
	    ev->t == NULL || ev->t->name == NULL || (sess && ev->s == NULL))
		return;
	if (r == NULL) {
		note_down(ev->t->name, sess ? ev->s->name : NULL, "");
		return;
	}
	if (r->message.len > 0)
		usl_str_escape(msg, sizeof(msg), r->message.p, r->message.len);
	snprintf(why, sizeof(why), "%s %u (%s)%s%s", sess ? "CDN result" : "StopCCN result",
		 r->result, sess ? l2tp_cdn_result_name(r->result) :
		 l2tp_stopccn_result_name(r->result), msg[0] ? ": " : "", msg);
	note_down(ev->t->name, sess ? ev->s->name : NULL, why);
}

/* Its profile, with the session's own interface name when it sets one; false: unknown. */
bool static_session_profile(const struct l2tpd_config *c, const struct static_session *ss,
			    struct session_profile *out)
{
	const struct session_profile *p = config_session_profile(c, ss->profile);

	if (p == NULL)
		return false;
	*out = *p;
	if (ss->ifname[0])
		snprintf(out->ifname, sizeof(out->ifname), "%s", ss->ifname);
	return true;
}

bool static_session_start(struct tunnel *t, const struct l2tpd_config *c,
			  const struct static_session *ss)
{
	struct session_profile p;
	bool known;
	enum ctl_status st;
	char err[256];

	if (ss->shutdown)
		return false;
	known = static_session_profile(c, ss, &p);
	if (!known || session_open(t, &p, ss->name, ss->description, ss->remote_end_id,
				   ORIGIN_CONFIG, &st, err, sizeof(err)) == NULL) {
		log_warnx("static session %s: %s", ss->name, known ? err : "unknown profile");
		note_down(t->name, ss->name, known ? err : "unknown profile");
		return false;
	}
	return true;
}

bool static_session_open(struct tunnel *t, const char *sess)
{
	const struct l2tpd_config *c = l2tpd.conf;

	for (unsigned i = 0; i < c->n_tunnels; i++) {
		const struct static_session *ss = config_static_session(&c->tunnels[i], sess);

		if (ss != NULL)
			return static_session_start(t, c, ss);
	}
	return false;
}

static void static_tunnel_lost(const char *name, bool at_once);

bool static_tunnel_start(const struct l2tpd_config *c, const struct static_tunnel *st)
{
	const struct tunnel_profile *p = config_tunnel_profile(c, st->profile);
	enum ctl_status cs;
	struct tunnel *t;
	char err[256];

	if (st->shutdown)
		return false;
	if (p == NULL) {
		log_warnx("static tunnel %s: unknown profile %s", st->name, st->profile);
		return false;
	}
	if (st->pool[0])
		t = pool_connect(st->pool, &st->local, p, st->name, st->description, NULL,
				 ORIGIN_CONFIG, &cs, err, sizeof(err));
	else
		t = tunnel_connect(&st->peer, &st->local, p, st->name, st->description, NULL,
				   ORIGIN_CONFIG, &cs, err, sizeof(err));
	if (t == NULL) {
		log_warnx("static tunnel %s: %s", st->name, err);
		note_down(st->name, NULL, err);
		static_tunnel_lost(st->name, false);
		return false;
	}
	/* one up through a backup tunnel (pwred.c) stays there until it moves back */
	for (unsigned i = 0; i < st->n_sessions; i++)
		if (session_find_name(st->sessions[i].name) == NULL)
			static_session_start(t, c, &st->sessions[i]);
	return true;
}

static bool sess_name_eq(const char *a, const char *b)
{
	return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

static struct static_retry *retry_find(const char *name, const char *sess)
{
	struct usl_list *pos;

	/* one entry per static object that is down: a handful, not per tunnel */
	usl_list_foreach(pos, &retries) {
		struct static_retry *r = usl_container_of(pos, struct static_retry, link);
		if (strcmp(r->name, name) == 0 && sess_name_eq(r->sess, sess))
			return r;
	}
	return NULL;
}

static void retry_free(struct static_retry *r)
{
	usl_timer_cancel(&r->timer);
	usl_list_del(&r->link);
	free(r->name);
	free(r->sess);
	free(r);
}

static void retry_arm(const char *name, const char *sess, bool at_once);

/* A static session's turn: its tunnel must still be up and lack it. */
static void retry_session(struct static_retry *r)
{
	const struct static_tunnel *st = config_static_tunnel(l2tpd.conf, r->name);
	const struct static_session *ss = st ? config_static_session(st, r->sess) : NULL;
	struct tunnel *t = tunnel_find_name(r->name);

	if (ss == NULL || ss->shutdown || t == NULL || t->closing ||
	    session_find_name(r->sess) != NULL ||
	    l2tp_cc_state(t->cc) != L2TP_CC_ESTABLISHED) {
		retry_free(r);	/* gone, or the tunnel's own restart starts it */
		return;
	}
	log_info("static session %s (tunnel %s): starting again (attempt %u)", r->sess, r->name,
		 r->attempts + 1);
	if (!static_session_start(t, l2tpd.conf, ss))
		retry_arm(r->name, r->sess, false);
}

static void retry_expired(struct usl_timer *t)
{
	struct static_retry *r = usl_container_of(t, struct static_retry, timer);
	const struct static_tunnel *st = config_static_tunnel(l2tpd.conf, r->name);

	if (r->sess != NULL) {
		retry_session(r);
		return;
	}
	if (st == NULL || st->shutdown || tunnel_find_name(r->name) != NULL) {
		retry_free(r);
		return;
	}
	log_info("static tunnel %s: starting again (attempt %u)", r->name, r->attempts + 1);
	static_tunnel_start(l2tpd.conf, st);	/* on failure it re-arms us */
}

/* (Re)arms the retry of a static tunnel, or of one of its sessions. */
static void retry_arm(const char *name, const char *sess, bool at_once)
{
	struct static_retry *r = retry_find(name, sess);
	const struct static_tunnel *st = sess ? NULL : config_static_tunnel(l2tpd.conf, name);
	const char *pool = st != NULL && st->pool[0] ? st->pool : NULL;
	unsigned delay;

	if (r == NULL) {
		r = calloc(1, sizeof(*r));
		if (r == NULL || (r->name = strdup(name)) == NULL ||
		    (sess != NULL && (r->sess = strdup(sess)) == NULL)) {
			if (r != NULL)
				free(r->name);
			free(r);
			return;
		}
		usl_timer_init(&r->timer, retry_expired);
		usl_list_add_tail(&retries, &r->link);
	}
	delay = STATIC_RETRY_FIRST_S << (r->attempts < 6 ? r->attempts : 6);
	if (delay > STATIC_RETRY_MAX_S)
		delay = STATIC_RETRY_MAX_S;
	if (pool != NULL)
		at_once = pool_available(pool) && r->attempts < pool_size(pool);
	if (at_once && (r->attempts == 0 || pool != NULL))
		delay = 0;
	r->attempts++;
	r->next_try = usl_time_add(usl_timerset_now(l2tpd.timers), usl_time_s(delay));
	if (strcmp(last_down.tunnel, name) == 0 && strcmp(last_down.sess, sess ? sess : "") == 0)
		memcpy(r->why, last_down.why, sizeof(r->why));
	if (sess != NULL)
		log_at(r->attempts > 1 ? LOG_LVL_WARN : LOG_LVL_INFO,
		       "static session %s (tunnel %s): down, retrying in %u s", sess, name, delay);
	else if (pool != NULL && delay == 0)
		log_info("static tunnel %s: down, opening a new connection through pool %s now",
			 name, pool);
	else if (pool != NULL)
		log_info("static tunnel %s: down, every member of pool %s %s, retrying in %u s",
			 name, pool, pool_available(pool) ? "tried" : "held down", delay);
	else if (delay == 0)
		log_info("static tunnel %s: closed by its peer, opening a new connection now", name);
	else
		/* still down after a retry: the outage goes on (its loss was logged as such) */
		log_at(r->attempts > 1 ? LOG_LVL_WARN : LOG_LVL_INFO,
		       "static tunnel %s: down, retrying in %u s", name, delay);
	usl_timer_arm(l2tpd.timers, &r->timer, usl_time_s(delay));
}

/* A static tunnel went down on its own: it starts again after a backoff. */
static void static_tunnel_lost(const char *name, bool at_once)
{
	const struct static_tunnel *st = name ? config_static_tunnel(l2tpd.conf, name) : NULL;

	if (st == NULL || st->shutdown || l2tpd.shutting_down)
		return;
	retry_arm(name, NULL, at_once);
}

static void static_session_lost(const char *tunnel, const char *sess)
{
	const struct static_session *ss;
	const struct static_tunnel *st;

	if (tunnel == NULL || sess == NULL || l2tpd.shutting_down)
		return;
	st = config_static_tunnel(l2tpd.conf, tunnel);
	ss = st != NULL && !st->shutdown ? config_static_session(st, sess) : NULL;
	if (ss != NULL && !ss->shutdown)
		retry_arm(tunnel, sess, false);
}

static void static_session_up(const char *tunnel, const char *sess)
{
	struct static_retry *r = tunnel && sess ? retry_find(tunnel, sess) : NULL;

	if (r != NULL)
		retry_free(r);
}

/* A static tunnel lost a tie break: t, the peer's, now bears its name and takes its sessions. */
static void static_tunnel_adopted(struct tunnel *t)
{
	const struct static_tunnel *st = t->name ? config_static_tunnel(l2tpd.conf, t->name) : NULL;

	if (st == NULL)
		return;
	for (unsigned i = 0; i < st->n_sessions; i++)
		static_session_start(t, l2tpd.conf, &st->sessions[i]);
}

static void static_tunnel_up(const char *name)
{
	struct static_retry *r = name ? retry_find(name, NULL) : NULL;

	if (r != NULL)
		retry_free(r);
}

/*
 * Tunnels and sessions as their events tell: an object up needs its retry
 * no more; one lost on its own gets one (a session whose tunnel is going
 * is started again with the tunnel).
 */
static void static_on_event(const struct l2tpd_event *ev, void *arg)
{
	const struct tunnel *t = ev->t;
	const struct session *s = ev->s;
	struct tunnel *heir;

	(void)arg;
	note_event(ev);
	switch (ev->kind) {
	case EV_TUNNEL_UP:
		if (t->origin == ORIGIN_CONFIG)
			static_tunnel_up(t->name);
		break;
	case EV_SESSION_UP:
		if (s->origin == ORIGIN_CONFIG)
			static_session_up(t->name, s->name);
		break;
	case EV_SESSION_DELETED:
		/* one the peer (or a failure) cleared comes back; a lost tunnel restarts its own */
		if (s->origin == ORIGIN_CONFIG && !s->deleted && !t->closing &&
		    l2tp_cc_state(t->cc) == L2TP_CC_ESTABLISHED)
			static_session_lost(t->name, s->name);
		break;
	case EV_TUNNEL_RELEASED:
		static_tunnel_lost(ev->name, ev->at_once);
		break;
	case EV_TUNNEL_INHERITED:
		/* t as the name index holds it: sessions are opened on it, the event's is const */
		if (t->origin == ORIGIN_CONFIG && t->name != NULL &&
		    (heir = tunnel_find_name(t->name)) == t)
			static_tunnel_adopted(heir);
		break;
	default:
		break;
	}
}

void static_tunnels_stop(void)
{
	event_unsubscribe(static_on_event, NULL);
	while (!usl_list_empty(&retries))
		retry_free(usl_container_of(retries.next, struct static_retry, link));
	pool_shutdown();
}

/* The static objects down and waiting for their retry, for `tunnel list` and `session list`. */
json_object *static_retries_json(bool sessions)
{
	json_object *arr = json_object_new_array();
	usl_time now = usl_timerset_now(l2tpd.timers);
	struct usl_list *pos;

	usl_list_foreach(pos, &retries) {
		struct static_retry *r = usl_container_of(pos, struct static_retry, link);
		json_object *o;
		int64_t in_ms;

		if ((r->sess != NULL) != sessions)
			continue;
		o = json_object_new_object();
		in_ms = usl_time_to_ms(usl_time_sub(r->next_try, now));
		json_add_str(o, "name", sessions ? r->sess : r->name);
		if (sessions)
			json_add_str(o, "tunnel", r->name);
		json_add_str(o, "state", "retrying");
		json_add_str(o, "origin", "config");
		json_add_int(o, "attempt", r->attempts);
		json_add_int(o, "next_try_s", in_ms > 0 ? (in_ms + 999) / 1000 : 0);
		json_add_str(o, "last_error", r->why);
		json_object_array_add(arr, o);
	}
	return arr;
}

/* One {name, [tunnel,] state "shutdown", origin, description} row. */
static json_object *shutdown_row(const char *name, const char *tunnel, const char *description)
{
	json_object *o = json_object_new_object();

	json_add_str(o, "name", name);
	if (tunnel != NULL)
		json_add_str(o, "tunnel", tunnel);
	json_add_str(o, "state", "shutdown");
	json_add_str(o, "origin", "config");
	json_add_str(o, "description", description);
	return o;
}

json_object *static_shutdown_json(bool sessions)
{
	const struct l2tpd_config *c = l2tpd.conf;
	json_object *arr = json_object_new_array();

	for (unsigned i = 0; i < c->n_tunnels; i++) {
		const struct static_tunnel *st = &c->tunnels[i];

		if (!sessions) {
			if (st->shutdown)
				json_object_array_add(arr, shutdown_row(st->name, NULL,
									st->description));
			continue;
		}
		for (unsigned j = 0; j < st->n_sessions; j++)
			if (st->sessions[j].shutdown)
				json_object_array_add(arr, shutdown_row(st->sessions[j].name, st->name,
									st->sessions[j].description));
	}
	return arr;
}

void static_tunnels_start(void)
{
	if (!pool_apply(l2tpd.conf))
		fatalx("LNS pools: out of memory");
	event_subscribe(static_on_event, NULL);
	for (unsigned i = 0; i < l2tpd.conf->n_tunnels; i++) {
		const struct static_tunnel *st = &l2tpd.conf->tunnels[i];
		struct tunnel *t = tunnel_find_name(st->name);

		if (t == NULL) {
			static_tunnel_start(l2tpd.conf, st);
			continue;
		}
		/* handed over by a restart: only what it lacks is started */
		tunnel_describe(t, l2tpd.conf);
		for (unsigned j = 0; j < st->n_sessions; j++) {
			struct session *s = session_find_name(st->sessions[j].name);

			if (s == NULL)
				static_session_start(t, l2tpd.conf, &st->sessions[j]);
		}
	}
}

void static_retries_prune(const struct l2tpd_config *c)
{
	struct usl_list *pos, *tmp;

	usl_list_foreach_safe(pos, tmp, &retries) {
		struct static_retry *r = usl_container_of(pos, struct static_retry, link);
		const struct static_tunnel *st = config_static_tunnel(c, r->name);
		const struct static_session *ss = st && r->sess ? config_static_session(st, r->sess)
							       : NULL;

		if (st == NULL || st->shutdown || (r->sess != NULL && (ss == NULL || ss->shutdown)))
			retry_free(r);
	}
}

