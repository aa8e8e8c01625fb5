/*
 * src/reload.c - applying a configuration to the running daemon.
 *
 * The new config was parsed into its own struct; here the difference is
 * applied per object, as bgpd does: a static tunnel whose settings did not
 * change is kept (and its sessions with it), a changed one is restarted,
 * a removed one deleted, a new one started.  Tunnels created from the CLI
 * or by peers keep the profile copy they were made with, so editing a
 * profile never disturbs them.
 */
#include <stddef.h>
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
 * Why the last static object went down: its deletion's event (or a failed
 * start) comes just before static_*_lost(), which files it with the retry.
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

static void static_on_event(const struct l2tpd_event *ev, void *arg)
{
	char msg[96] = "", why[160];
	const struct l2tp_result *r = ev->why;
	bool sess = ev->kind == EV_SESSION_DOWN || ev->kind == EV_SESSION_DELETED;

	(void)arg;
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

struct reload_counts {
	unsigned kept, started, deleted, restarted, sess_started, sess_deleted;
	unsigned peer_tunnels, peer_sessions;	/* peer-opened ones the new file does not accept */
	unsigned updated;			/* live connections that took new settings */
	json_object *updated_list;		/* [{tunnel, settings}] */
	json_object *restart_why;		/* [{tunnel, setting}]: why each was restarted */
	unsigned shut_down, sess_shut_down;
};

/* Applies the live settings of p to t, or says which one needs a new connection. */
static bool tunnel_update(struct tunnel *t, const struct tunnel_profile *p, struct reload_counts *n)
{
	char changed[256];
	const char *restart;
	json_object *o;
	char id[16];

	if (!tunnel_reconfigure(t, p, changed, sizeof(changed), &restart)) {
		o = json_object_new_object();
		snprintf(id, sizeof(id), "%u", t->id);
		json_add_str(o, "tunnel", t->name ? t->name : id);
		json_add_str(o, "setting", restart);
		json_object_array_add(n->restart_why, o);
		return false;
	}
	if (changed[0] == '\0')
		return true;
	n->updated++;
	log_info("reload: tunnel %s (%u): %s applied to the live connection", name_str(t->name),
		 t->id, changed);
	o = json_object_new_object();
	snprintf(id, sizeof(id), "%u", t->id);
	json_add_str(o, "tunnel", t->name ? t->name : id);
	json_add_str(o, "settings", changed);
	json_object_array_add(n->updated_list, o);
	return true;
}

/* Operator's words for the StopCCN and CDN of an object the configuration shuts down. */
#define ADMIN_DOWN	"administratively down"

static const struct static_tunnel *find_static(const struct l2tpd_config *c, const char *name)
{
	return config_static_tunnel(c, name);
}

static bool addr_same(const union saddr *a, const struct cfg_addr *b)
{
	if (a->sa.sa_family != b->ss.ss_family)
		return false;
	if (a->sa.sa_family == AF_UNSPEC)
		return true;
	return sockaddr_eq_addr(&a->sa, (const struct sockaddr *)&b->ss) &&
	       sockaddr_port(&a->sa) == sockaddr_port((const struct sockaddr *)&b->ss);
}

/* Where t goes is where st (in config c) sends it; through a pool, a member it still lists. */
static bool dest_matches(const struct tunnel *t, const struct l2tpd_config *c,
			 const struct static_tunnel *st)
{
	if (st->pool[0])
		return t->pool != NULL && strcmp(t->pool, st->pool) == 0 &&
		       pool_lists(c, st->pool, &t->dest_cfg.sa);
	return t->pool == NULL && addr_same(&t->dest_cfg, &st->peer);
}

/* Its profile, with the session's own interface name when it sets one; false: unknown. */
static bool static_session_profile(const struct l2tpd_config *c, const struct static_session *ss,
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

static bool session_matches(const struct session *s, const struct l2tpd_config *c,
			    const struct static_session *ss)
{
	struct session_profile p;

	return static_session_profile(c, ss, &p) && session_profile_eq(&p, s->prof);
}

static bool static_session_start(struct tunnel *t, const struct l2tpd_config *c,
				 const struct static_session *ss, struct reload_counts *n)
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
	if (n != NULL)
		n->sess_started++;
	return true;
}

bool static_session_open(struct tunnel *t, const char *sess)
{
	const struct l2tpd_config *c = l2tpd.conf;

	for (unsigned i = 0; i < c->n_tunnels; i++) {
		const struct static_session *ss = config_static_session(&c->tunnels[i], sess);

		if (ss != NULL)
			return static_session_start(t, c, ss, NULL);
	}
	return false;
}

static bool static_tunnel_start(const struct l2tpd_config *c, const struct static_tunnel *st)
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
			static_session_start(t, c, &st->sessions[i], NULL);
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
	const struct static_tunnel *st = find_static(l2tpd.conf, r->name);
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
	if (!static_session_start(t, l2tpd.conf, ss, NULL))
		retry_arm(r->name, r->sess, false);
}

static void retry_expired(struct usl_timer *t)
{
	struct static_retry *r = usl_container_of(t, struct static_retry, timer);
	const struct static_tunnel *st = find_static(l2tpd.conf, r->name);

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
	const struct static_tunnel *st = sess ? NULL : find_static(l2tpd.conf, name);
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

void static_tunnel_lost(const char *name, bool at_once)
{
	const struct static_tunnel *st = name ? find_static(l2tpd.conf, name) : NULL;

	if (st == NULL || st->shutdown || l2tpd.shutting_down)
		return;
	retry_arm(name, NULL, at_once);
}

void static_session_lost(const char *tunnel, const char *sess)
{
	const struct static_session *ss;
	const struct static_tunnel *st;

	if (tunnel == NULL || sess == NULL || l2tpd.shutting_down)
		return;
	st = find_static(l2tpd.conf, tunnel);
	ss = st != NULL && !st->shutdown ? config_static_session(st, sess) : NULL;
	if (ss != NULL && !ss->shutdown)
		retry_arm(tunnel, sess, false);
}

void static_session_up(const char *tunnel, const char *sess)
{
	struct static_retry *r = tunnel && sess ? retry_find(tunnel, sess) : NULL;

	if (r != NULL)
		retry_free(r);
}

void static_tunnel_adopted(struct tunnel *t)
{
	const struct static_tunnel *st = t->name ? find_static(l2tpd.conf, t->name) : NULL;

	if (st == NULL)
		return;
	for (unsigned i = 0; i < st->n_sessions; i++)
		static_session_start(t, l2tpd.conf, &st->sessions[i], NULL);
}

void static_tunnel_up(const char *name)
{
	struct static_retry *r = name ? retry_find(name, NULL) : NULL;

	if (r != NULL)
		retry_free(r);
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
				static_session_start(t, l2tpd.conf, &st->sessions[j], NULL);
		}
	}
}

/* Sessions of a kept static tunnel: keep, restart, delete, or start. */
static void sessions_apply(struct tunnel *t, const struct l2tpd_config *c,
			   const struct static_tunnel *st, struct reload_counts *n)
{
	struct usl_list *pos, *tmp;

	usl_list_foreach_safe(pos, tmp, &t->sessions) {
		struct session *s = usl_container_of(pos, struct session, tunnel_link);
		const struct static_session *ss;

		if (s->origin != ORIGIN_CONFIG || pwred_visiting(s->name, name_str(t->name), c))
			continue;
		ss = config_static_session(st, name_str(s->name));
		if (ss == NULL || !session_matches(s, c, ss)) {
			session_delete(s, L2TP_CDN_ADMIN, "removed from configuration");
			n->sess_deleted++;
		}
	}
	for (unsigned i = 0; i < st->n_sessions; i++) {
		struct session *s = session_find_name(st->sessions[i].name);
		if (s == NULL || (s->sess == NULL && s->tunnel == t))
			static_session_start(t, c, &st->sessions[i], n);
	}
}

/*
 * Static tunnels and sessions the file now holds administratively down:
 * closed with that reason (and, being shut down, not retried).
 */
static void shutdown_apply(const struct l2tpd_config *c, struct reload_counts *n)
{
	for (unsigned i = 0; i < c->n_tunnels; i++) {
		const struct static_tunnel *st = &c->tunnels[i];
		struct tunnel *t = tunnel_find_name(st->name);

		if (st->shutdown && t != NULL && t->origin == ORIGIN_CONFIG && !t->closing) {
			tunnel_delete(t, L2TP_STOPCCN_NORMAL, ADMIN_DOWN);
			n->shut_down++;
		}
		for (unsigned j = 0; j < st->n_sessions; j++) {
			struct session *s = session_find_name(st->sessions[j].name);

			if (!st->sessions[j].shutdown || s == NULL || s->origin != ORIGIN_CONFIG ||
			    s->deleted || s->tunnel->closing)
				continue;
			session_delete(s, L2TP_CDN_ADMIN, ADMIN_DOWN);
			n->sess_shut_down++;
		}
	}
}

/* Retries of what the file no longer lists, or now holds down: dropped. */
static void retries_prune(const struct l2tpd_config *c)
{
	struct usl_list *pos, *tmp;

	usl_list_foreach_safe(pos, tmp, &retries) {
		struct static_retry *r = usl_container_of(pos, struct static_retry, link);
		const struct static_tunnel *st = find_static(c, r->name);
		const struct static_session *ss = st && r->sess ? config_static_session(st, r->sess)
							       : NULL;

		if (st == NULL || st->shutdown || (r->sess != NULL && (ss == NULL || ss->shutdown)))
			retry_free(r);
	}
}

/* Old static tunnels: kept, restarted (delete now, start below) or deleted. */
/*
 * Each static tunnel of c is counted once: kept, restarted (it ran with
 * other settings) or started (new in the file, or not running: deleted from
 * the CLI, or down and waiting for its retry, e.g. with the secret now fixed).
 */
static void tunnels_apply(const struct l2tpd_config *c, struct reload_counts *n)
{
	struct usl_rb_node *node, *next;
	bool *restarting = calloc(c->n_tunnels ? c->n_tunnels : 1, sizeof(*restarting));

	for (node = usl_rb_first(&l2tpd.tunnel_order); node != NULL; node = next) {
		struct tunnel *t = usl_rb_entry(node, struct tunnel, by_order);
		const struct static_tunnel *st;

		next = usl_rb_next(node);
		if (t->closing)
			continue;
		if (t->origin != ORIGIN_CONFIG) {
			tunnel_describe(t, c);	/* a peers entry's description may have changed */
			continue;
		}
		st = find_static(c, name_str(t->name));
		/* same peer and local address: new timers and the like go to the live connection */
		if (st != NULL && dest_matches(t, c, st) && addr_same(&t->local_cfg, &st->local) &&
		    config_tunnel_profile(c, st->profile) != NULL &&
		    tunnel_update(t, config_tunnel_profile(c, st->profile), n)) {
			n->kept++;
			sessions_apply(t, c, st, n);
			tunnel_describe(t, c);
			continue;
		}
		tunnel_delete(t, L2TP_STOPCCN_NORMAL,
			      st ? "configuration changed" : "removed from configuration");
		if (st == NULL)
			n->deleted++;
		else if (restarting != NULL)
			restarting[st - c->tunnels] = true;
	}
	for (unsigned i = 0; i < c->n_tunnels; i++) {
		if (c->tunnels[i].shutdown || tunnel_find_name(c->tunnels[i].name) != NULL ||
		    !static_tunnel_start(c, &c->tunnels[i]))
			continue;
		if (restarting != NULL && restarting[i])
			n->restarted++;
		else
			n->started++;
	}
	free(restarting);
}

#define PEER_CHANGES_LISTED	50	/* the summary lists the first ones; the log has each */

static void peer_change(json_object *list, const struct tunnel *t, const struct session *s,
			const char *why, bool cleared)
{
	json_object *o;
	char peer[64];

	log_info("reload: %s %s %u (peer %s%s%s): %s", cleared ? "clearing" : "would clear",
		 s ? "session" : "tunnel", s ? s->id : t->id,
		 sockaddr_ntop(&t->remote.sa), t->peer_entry ? ", peers entry " : "",
		 name_str(t->peer_entry), why);
	if (json_object_array_length(list) >= PEER_CHANGES_LISTED)
		return;
	o = json_object_new_object();
	json_add_int(o, "tunnel_id", t->id);
	if (s != NULL)
		json_add_int(o, "session_id", s->id);
	tunnel_peer_str(t, peer, sizeof(peer));
	json_add_str(o, "peer", peer);
	json_add_str(o, "peers_entry", name_str(t->peer_entry));
	json_add_str(o, "why", why);
	json_add_str(o, "action", cleared ? "cleared" : "reported");
	json_object_array_add(list, o);
}

/* Sessions of a kept peer-opened tunnel whose Remote End ID the new file maps otherwise. */
static void peer_sessions_apply(struct tunnel *t, bool clear, json_object *list,
				struct reload_counts *n)
{
	struct usl_list *pos, *tmp;
	char why[256];
	uint16_t rc;

	usl_list_foreach_safe(pos, tmp, &t->sessions) {
		struct session *s = usl_container_of(pos, struct session, tunnel_link);

		if ((rc = session_reaccept(s, why, sizeof(why))) == 0)
			continue;
		peer_change(list, t, s, why, clear);
		n->peer_sessions++;
		if (clear)
			session_delete(s, rc, why);
	}
}

/*
 * Tunnels peers opened agree with the new file: one no entry accepts as it
 * is any more is cleared with a StopCCN that says why (or, with
 * reload_peers = "report", only listed), and so are its sessions whose
 * Remote End ID is now refused or mapped to other settings.
 */
static void peers_apply(const struct l2tpd_config *old, const struct l2tpd_config *c,
			json_object *list, struct reload_counts *n)
{
	bool clear = c->reload_peers == CFG_RELOAD_PEERS_CLEAR;
	struct usl_rb_node *node, *next;
	char why[256];
	uint16_t rc;

	for (node = usl_rb_first(&l2tpd.tunnel_order); node != NULL; node = next) {
		struct tunnel *t = usl_rb_entry(node, struct tunnel, by_order);

		next = usl_rb_next(node);
		if (t->origin != ORIGIN_PEER || t->closing ||
		    l2tp_cc_state(t->cc) >= L2TP_CC_STOPPING)
			continue;
		if ((rc = tunnel_reaccept(t, old, why, sizeof(why))) == 0) {
			struct tunnel_profile p;

			/* what it would be accepted with now: live settings apply, the rest waits */
			tunnel_peer_profile(t, &p);
			tunnel_update(t, &p, n);
			peer_sessions_apply(t, clear, list, n);
			continue;
		}
		peer_change(list, t, NULL, why, clear);
		n->peer_tunnels++;
		if (clear)
			tunnel_delete(t, rc, why);
	}
}

static bool listen_changed(const struct l2tpd_config *a, const struct l2tpd_config *b)
{
	if (a->n_listen != b->n_listen || a->udp_port != b->udp_port || a->listen_ip != b->listen_ip)
		return true;
	for (unsigned i = 0; i < a->n_listen; i++)
		if (memcmp(&a->listen[i].ss, &b->listen[i].ss, sizeof(a->listen[i].ss)) != 0)
			return true;
	return false;
}

/* Settings read only at start: reported, not applied (config_apply keeps the old value). */
static void restart_required(const struct l2tpd_config *o, const struct l2tpd_config *c,
			     json_object *list)
{
	static const struct {
		const char *name;
		size_t off;
	} strs[] = {
		{ "global.event_loop", offsetof(struct l2tpd_config, event_loop) },
		{ "global.dataplane", offsetof(struct l2tpd_config, dataplane) },
		{ "global.ctl_socket", offsetof(struct l2tpd_config, ctl_socket) },
		{ "global.ctl_group", offsetof(struct l2tpd_config, ctl_group) },
		{ "global.state_dir", offsetof(struct l2tpd_config, state_dir) },
		{ "global.metrics_listen", offsetof(struct l2tpd_config, metrics_listen) },
	};

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (strcmp((const char *)o + strs[i].off, (const char *)c + strs[i].off))
			json_object_array_add(list, json_object_new_string(strs[i].name));
	if (o->snmp_config_id != c->snmp_config_id)
		json_object_array_add(list, json_object_new_string("global.snmp_config_id"));
	if (o->snmp.enabled != c->snmp.enabled)
		json_object_array_add(list, json_object_new_string("snmp.enabled"));
	if (strcmp(o->snmp.agentx_socket, c->snmp.agentx_socket))
		json_object_array_add(list, json_object_new_string("snmp.agentx_socket"));
}

static void globals_apply(const struct l2tpd_config *c)
{
	if (c->hostname[0])
		snprintf(l2tpd.hostname, sizeof(l2tpd.hostname), "%s", c->hostname);
	if (c->router_id_set)
		l2tpd.router_id = c->router_id;
}

/*
 * Applies newc, or refuses it (-1, err) with nothing changed: the new
 * listeners are opened first, and a failure keeps the old ones and the
 * old configuration (a reload asked again retries them).
 */
int config_apply(struct l2tpd_config *newc, json_object *summary, char *err, size_t errlen)
{
	struct l2tpd_config *old = l2tpd.conf;
	struct reload_counts n = { 0 };
	json_object *rr, *peer_list;

	if (listen_changed(old, newc) && transport_replace(newc, err, errlen) < 0)
		return -1;
	transport_listeners_configure(newc);
	rr = json_object_new_array();
	restart_required(old, newc, rr);
	n.updated_list = json_object_new_array();
	n.restart_why = json_object_new_array();
	/* keep what cannot change at run time, so state and config agree */
	snprintf(newc->event_loop, sizeof(newc->event_loop), "%s", old->event_loop);
	snprintf(newc->dataplane, sizeof(newc->dataplane), "%s", old->dataplane);
	snprintf(newc->ctl_socket, sizeof(newc->ctl_socket), "%s", old->ctl_socket);
	snprintf(newc->ctl_group, sizeof(newc->ctl_group), "%s", old->ctl_group);
	snprintf(newc->state_dir, sizeof(newc->state_dir), "%s", old->state_dir);
	snprintf(newc->metrics_listen, sizeof(newc->metrics_listen), "%s", old->metrics_listen);
	newc->snmp_config_id = old->snmp_config_id;
	newc->snmp = old->snmp;	/* the subagent was set up at start */
	l2tpd.conf = newc;
	globals_apply(newc);
	pwred_config_changed();
	if (!pool_apply(newc))
		log_warnx("reload: LNS pools: out of memory, their state is the old file's");
	retries_prune(newc);
	shutdown_apply(newc, &n);
	tunnels_apply(newc, &n);
	peer_list = json_object_new_array();
	peers_apply(old, newc, peer_list, &n);
	config_free(old);
	log_info("reload: tunnels kept %u, started %u, restarted %u, deleted %u, shut down %u; "
		 "sessions started %u, deleted %u, shut down %u; peers' tunnels %s %u, sessions %u",
		 n.kept, n.started, n.restarted, n.deleted, n.shut_down, n.sess_started,
		 n.sess_deleted, n.sess_shut_down,
		 newc->reload_peers == CFG_RELOAD_PEERS_CLEAR ? "cleared" : "not accepted",
		 n.peer_tunnels, n.peer_sessions);
	json_add_int(summary, "tunnels_kept", n.kept);
	json_add_int(summary, "tunnels_started", n.started);
	json_add_int(summary, "tunnels_restarted", n.restarted);
	json_add_int(summary, "tunnels_deleted", n.deleted);
	json_add_int(summary, "sessions_started", n.sess_started);
	json_add_int(summary, "sessions_deleted", n.sess_deleted);
	json_add_int(summary, "tunnels_shutdown", n.shut_down);
	json_add_int(summary, "sessions_shutdown", n.sess_shut_down);
	json_object_object_add(summary, "restart_required", rr);
	json_add_int(summary, newc->reload_peers == CFG_RELOAD_PEERS_CLEAR ?
		     "peer_tunnels_cleared" : "peer_tunnels_not_accepted", n.peer_tunnels);
	json_add_int(summary, newc->reload_peers == CFG_RELOAD_PEERS_CLEAR ?
		     "peer_sessions_cleared" : "peer_sessions_not_accepted", n.peer_sessions);
	json_object_object_add(summary, "peer_changes", peer_list);
	json_add_int(summary, "tunnels_updated", n.updated);
	json_object_object_add(summary, "updated", n.updated_list);
	json_object_object_add(summary, "restarted_because", n.restart_why);
	return 0;
}
