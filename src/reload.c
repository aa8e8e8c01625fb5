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

#include "l2tpv3d.h"
#include "usl/log.h"

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

static bool session_matches(const struct session *s, const struct l2tpd_config *c,
			    const struct static_session *ss)
{
	struct session_profile p;

	return static_session_profile(c, ss, &p) && session_profile_eq(&p, s->prof);
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
		if ((s == NULL || (s->sess == NULL && s->tunnel == t)) &&
		    static_session_start(t, c, &st->sessions[i]))
			n->sess_started++;
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
		st = config_static_tunnel(c, name_str(t->name));
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
	static_retries_prune(newc);
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
