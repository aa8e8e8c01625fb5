/*
 * src/session.c - sessions (pseudowires) of a tunnel.
 *
 * The protocol state is the engine's struct l2tp_sess; this object adds the
 * host-wide index by local Session ID (IDs are unique per host, as L2TP
 * over IP demands), the name index, the profile, the data plane handle and
 * the CLI waiters.  For sessions the peer opens, the object is created in
 * the engine's accept callback; either way it dies in sess_freed.
 */
#include <ctype.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "event.h"
#include "l2tpv3d.h"
#include "usl/escape.h"
#include "usl/log.h"
#include "usl/pack.h"

/*
 * Remote End IDs the peers' sessions use, per peers entry: one customer's
 * ID is one pseudowire, whichever of the entry's tunnels (a LAC with
 * several connections, a LAC reconnecting) it comes over.  On a tunnel we
 * opened (no peers entry) the scope is that tunnel.  A second session with
 * an ID in use is refused before anything is made for it (its interface
 * name, when made from the ID, would clash in the data plane).  Sessions
 * the peer opens are indexed; ours name their ID themselves.
 */
struct reid_key {
	const char *entry;		/* the peers entry, or NULL: the tunnel is the scope */
	uint32_t tunnel_id;		/* 0 with an entry */
	const uint8_t *reid;
	uint16_t len;
};

struct reid_use {
	struct usl_hnode hnode;
	uint32_t session_id;		/* the session that holds it */
	uint32_t holder_tunnel;		/* and its tunnel */
	uint32_t tunnel_id;		/* the scope: 0 with an entry */
	uint16_t len;
	char *entry;			/* NULL: scoped by tunnel_id */
	uint8_t reid[];
};

static struct usl_hash reid_index;

static bool reid_eq(const struct usl_hnode *n, const void *key)
{
	const struct reid_use *u = usl_hash_entry(n, struct reid_use, hnode);
	const struct reid_key *k = key;

	if (u->len != k->len || memcmp(u->reid, k->reid, k->len) != 0)
		return false;
	if (k->entry == NULL)
		return u->entry == NULL && u->tunnel_id == k->tunnel_id;
	return u->entry != NULL && strcmp(u->entry, k->entry) == 0;
}

static uint32_t reid_hash(const struct reid_key *k)
{
	uint32_t h = usl_hash_bytes(k->reid, k->len, k->tunnel_id);

	return k->entry ? usl_hash_bytes(k->entry, strlen(k->entry), h) : h;
}

static struct reid_key reid_key_of(const struct tunnel *t, const uint8_t *reid, uint16_t len)
{
	struct reid_key k = { t->peer_entry, t->peer_entry ? 0 : t->id, reid, len };

	return k;
}

static struct reid_use *reid_find(const struct reid_key *k)
{
	struct usl_hnode *n = usl_hash_lookup(&reid_index, k, reid_hash(k));

	return n ? usl_hash_entry(n, struct reid_use, hnode) : NULL;
}

/* Marks s's Remote End ID in use; false when out of memory. */
static bool reid_claim(const struct session *s, const struct reid_key *k)
{
	struct reid_use *u = calloc(1, sizeof(*u) + k->len);

	if (u == NULL)
		return false;
	if (k->entry != NULL && (u->entry = strdup(k->entry)) == NULL) {
		free(u);
		return false;
	}
	u->session_id = s->id;
	u->holder_tunnel = s->tunnel->id;
	u->tunnel_id = k->tunnel_id;
	u->len = k->len;
	memcpy(u->reid, k->reid, k->len);
	usl_hash_insert(&reid_index, &u->hnode, reid_hash(k));
	return true;
}

/* Frees s's claim, if it holds one. */
static void reid_release(const struct session *s)
{
	struct reid_key k;
	struct reid_use *u;
	uint16_t len = 0;
	const uint8_t *p;

	if (s->sess == NULL || usl_hash_count(&reid_index) == 0)
		return;
	p = l2tp_sess_remote_end_id(s->sess, &len);
	if (p == NULL || len == 0)
		return;
	k = reid_key_of(s->tunnel, p, len);
	u = reid_find(&k);
	if (u == NULL || u->session_id != s->id)
		return;
	usl_hash_remove(&reid_index, &u->hnode);
	free(u->entry);
	free(u);
}

static bool session_id_eq(const struct usl_hnode *n, const void *key)
{
	return usl_hash_entry(n, struct session, by_id)->id == *(const uint32_t *)key;
}

static bool session_name_eq(const struct usl_hnode *n, const void *key)
{
	return strcmp(usl_hash_entry(n, struct session, by_name)->name, key) == 0;
}

int session_init(void)
{
	if (usl_hash_init(&l2tpd.sessions, 1024, session_id_eq) < 0 ||
	    usl_hash_init(&l2tpd.sessions_by_name, 64, session_name_eq) < 0 ||
	    usl_hash_init(&reid_index, 64, reid_eq) < 0)
		return -1;
	return 0;
}

struct session *session_find(uint32_t id)
{
	struct usl_hnode *n = usl_hash_lookup(&l2tpd.sessions, &id, usl_hash_u32(id));

	return n ? usl_hash_entry(n, struct session, by_id) : NULL;
}

struct session *session_find_name(const char *name)
{
	struct usl_hnode *n = usl_hash_lookup(&l2tpd.sessions_by_name, name,
					      usl_hash_bytes(name, strlen(name), 0));

	return n ? usl_hash_entry(n, struct session, by_name) : NULL;
}

/*
 * An ID whatever the limits: a peer's call over max_sessions is refused in
 * session_check_limits() with a CDN, which needs our ID to carry.
 */
uint32_t session_alloc_id(void)
{
	uint32_t id;

	do
		id = random_u32_nonzero();
	while (session_find(id) != NULL);
	return id;
}

static struct session *session_new(struct tunnel *t, uint32_t id, const struct session_profile *prof,
				   const char *name, enum origin origin)
{
	struct session *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->prof = session_profile_get(prof);
	if (s->prof == NULL || (t->peer_entry != NULL && !entry_count_add(t->peer_entry, ENTRY_SESSIONS))) {
		session_profile_put(s->prof);
		free(s);
		return NULL;
	}
	s->id = id;
	s->tunnel = t;
	s->origin = origin;
	usl_list_init(&s->waiters);
	s->created = usl_timerset_now(l2tpd.timers);
	usl_hash_insert(&l2tpd.sessions, &s->by_id, usl_hash_u32(id));
	snmpagent_session_added(s);
	if (name != NULL && name[0]) {
		s->name = strdup(name);
		if (s->name != NULL) {
			usl_hash_insert(&l2tpd.sessions_by_name, &s->by_name,
					usl_hash_bytes(s->name, strlen(s->name), 0));
			s->named = true;
		}
	}
	usl_list_add_tail(&t->sessions, &s->tunnel_link);
	t->n_sessions++;
	l2tpd.n_sessions++;
	return s;
}

static void session_unindex_free(struct session *s)
{
	reid_release(s);
	usl_hash_remove(&l2tpd.sessions, &s->by_id);
	snmpagent_session_removed(s);
	if (s->named)
		usl_hash_remove(&l2tpd.sessions_by_name, &s->by_name);
	usl_list_del(&s->tunnel_link);
	s->tunnel->n_sessions--;
	l2tpd.n_sessions--;
	if (s->tunnel->peer_entry != NULL)
		entry_count_del(s->tunnel->peer_entry, ENTRY_SESSIONS);
	session_profile_put(s->prof);
	free(s->name);
	free(s->description);
	free(s->dp_error);
	free(s);
}

static void sess_cfg_from_profile(struct l2tp_sess_cfg *cfg, const struct session_profile *p,
				  const char *remote_end_id)
{
	l2tp_sess_cfg_init(cfg);
	cfg->pw_type = p->pw_type;
	cfg->cookie_len = p->cookie_len;
	cfg->l2ss = p->l2spec;
	cfg->data_seq = p->data_seq;
	if (remote_end_id != NULL && remote_end_id[0]) {
		cfg->remote_end_id = (const uint8_t *)remote_end_id;
		cfg->remote_end_id_len = (uint16_t)strlen(remote_end_id);
	}
}

static enum ctl_status session_check_limits(const struct tunnel *t, char *err, size_t errlen)
{
	uint32_t per_tunnel = t->prof->max_sessions ? t->prof->max_sessions
						   : l2tpd.conf->max_sessions_per_tunnel;
	const struct peer_profile *pp = t->peer_entry ? config_peer_by_name(l2tpd.conf,
									   t->peer_entry) : NULL;

	if (l2tpd.restarting) {
		snprintf(err, errlen, "daemon is restarting");
		return CTL_E_SHUTTING_DOWN;
	}
	if (l2tpd.n_sessions >= l2tpd.conf->max_sessions) {
		snprintf(err, errlen, "max_sessions (%u) reached", l2tpd.conf->max_sessions);
		return CTL_E_LIMIT;
	}
	if (per_tunnel && t->n_sessions >= per_tunnel) {
		snprintf(err, errlen, "tunnel %u has its maximum of %u sessions", t->id, per_tunnel);
		return CTL_E_LIMIT;
	}
	if (pp != NULL && pp->max_sessions &&
	    entry_count(t->peer_entry, ENTRY_SESSIONS) >= pp->max_sessions) {
		snprintf(err, errlen, "%s%s: max_sessions %u reached",
			 pp == &l2tpd.conf->peer_default ? "peer_default" : "peers entry ",
			 pp == &l2tpd.conf->peer_default ? "" : pp->name, pp->max_sessions);
		return CTL_E_LIMIT;
	}
	return CTL_OK;
}

static const char *sess_open_error(int e)
{
	switch (e) {
	case ENOTCONN:		return "tunnel is closing";
	case EPROTONOSUPPORT:	return "peer did not advertise this pseudowire type";
	case EINVAL:		return "invalid session parameters";
	case EAGAIN:		return "no session id available";
	default:		return strerror(e);
	}
}

struct session *session_open(struct tunnel *t, const struct session_profile *prof,
			     const char *name, const char *description,
			     const char *remote_end_id, enum origin origin,
			     enum ctl_status *st, char *err, size_t errlen)
{
	struct l2tp_sess_cfg cfg;
	struct session *s;
	uint32_t id;

	if ((*st = session_check_limits(t, err, errlen)) != CTL_OK)
		return NULL;
	if (name != NULL && name[0] && session_find_name(name) != NULL) {
		snprintf(err, errlen, "a session named '%s' already exists", name);
		*st = CTL_E_EXISTS;
		return NULL;
	}
	id = session_alloc_id();
	s = id ? session_new(t, id, prof, name, origin) : NULL;
	if (s == NULL) {
		snprintf(err, errlen, "no session id or memory available");
		*st = CTL_E_LIMIT;
		return NULL;
	}
	text_copy(&s->description, description);
	sess_cfg_from_profile(&cfg, prof, remote_end_id);
	cfg.local_sid = id;
	s->sess = l2tp_sess_open(t->cc, &cfg, s);
	if (s->sess == NULL) {
		snprintf(err, errlen, "%s", sess_open_error(errno));
		*st = errno == EPROTONOSUPPORT || errno == EINVAL ? CTL_E_INVALID : CTL_E_PEER;
		session_unindex_free(s);
		return NULL;
	}
	event_emit(EV_SESSION_CREATED, t, s, NULL);
	*st = CTL_OK;
	return s;
}

void session_delete(struct session *s, uint16_t result, const char *msg)
{
	s->deleted = true;
	if (s->sess != NULL)
		l2tp_sess_close(s->sess, result, 0, msg);
}

/* ---- engine callbacks --------------------------------------------------- */

/* Interface name characters a Remote End ID may bring in ("%r"): no path, no shell. */
static bool ifname_safe(const uint8_t *p, size_t len)
{
	if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum(p[i]) && p[i] != '-' && p[i] != '_' && p[i] != '.')
			return false;
	return true;
}

/*
 * tmpl with "%r" replaced by the Remote End ID; NULL, or why the result
 * cannot be the interface's name.  A name the peer's words make never
 * begins with '-' (an option word to a careless hook) and never takes a
 * name the configuration gives another session.
 */
static const char *ifname_from_match(const char *tmpl, const uint8_t *reid, size_t len, char *out,
				     size_t outlen)
{
	const char *r = strstr(tmpl, "%r");
	int n;

	if (r == NULL)
		n = snprintf(out, outlen, "%s", tmpl);
	else if (!ifname_safe(reid, len))
		return "cannot name an interface by";
	else
		n = snprintf(out, outlen, "%.*s%.*s%s", (int)(r - tmpl), tmpl, (int)len,
			     (const char *)reid, r + 2);
	/* a "%d" left becomes a number of up to 5 digits (ifname_expand) */
	if (n <= 0 || (size_t)n >= outlen || (size_t)n + (strstr(out, "%d") ? 3 : 0) > IFNAMSIZ - 1)
		return "cannot name an interface by";
	if (r != NULL && out[0] == '-')
		return "would begin an interface name with '-' by";
	if (r != NULL && config_ifname_reserved(l2tpd.conf, out))
		return "would take an interface name the configuration gives another session, by";
	return NULL;
}

/*
 * What an incoming session gets: the peer entry's session profile, or what
 * the entry's session list says for its Remote End ID (profile, interface
 * name, bridge).  0, or a CDN result with why (an unknown ID refused, an
 * ID that cannot name an interface).
 */
static int session_accept_profile(const struct tunnel *t, const uint8_t *reid, size_t len,
				  struct session_profile *out, char *why, size_t wl)
{
	const struct peer_profile *pp = config_peer_by_name(l2tpd.conf, t->peer_entry);
	const struct session_match *m = pp ? config_match_session(pp, reid, len) : NULL;
	const struct session_profile *base;
	const char *bad;
	char id[96];

	if (m == NULL && pp != NULL && pp->refuse_unknown_sessions) {
		usl_str_escape(id, sizeof(id), reid, len);	/* the peer's words: data */
		snprintf(why, wl, "Remote End ID \"%s\" is not configured", id);
		return L2TP_CDN_NO_RESOURCES_PERM;
	}
	base = config_session_profile(l2tpd.conf, m && m->profile[0] ? m->profile :
				      t->session_profile ? t->session_profile : "default");
	*out = base ? *base : l2tpd.conf->session_profiles[0];
	if (m == NULL)
		return 0;
	if (m->ifname[0] &&
	    (bad = ifname_from_match(m->ifname, reid, len, out->ifname, sizeof(out->ifname)))) {
		usl_str_escape(id, sizeof(id), reid, len);
		snprintf(why, wl, "Remote End ID \"%s\" %s \"%s\"", id, bad, m->ifname);
		return L2TP_CDN_NO_RESOURCES_PERM;
	}
	if (m->bridge[0])
		snprintf(out->bridge, sizeof(out->bridge), "%s", m->bridge);
	return 0;
}

/*
 * 0 when no session of t's scope uses the Remote End ID, else the CDN
 * result with why.  Temporary (4): the holder may be a connection about to
 * be cleared (a restarted LAC's), and the ID is free again once it goes.
 */
static int session_reid_free(const struct tunnel *t, const uint8_t *reid, uint16_t len,
			     char *why, size_t wl)
{
	struct reid_key k = reid_key_of(t, reid, len);
	const struct reid_use *u;
	char id[96];

	if (len == 0 || (u = reid_find(&k)) == NULL)
		return 0;
	usl_str_escape(id, sizeof(id), reid, len);	/* the peer's words: data */
	snprintf(why, wl, "Remote End ID \"%s\" is already in use by session %u (tunnel %u)", id,
		 u->session_id, u->holder_tunnel);
	return L2TP_CDN_NO_RESOURCES_TEMP;
}

/*
 * A session a peer opens is named after the scope of its Remote End ID
 * (the tunnel's peers entry, or the tunnel) and the ID itself: "lacs/cust-a",
 * unique as the ID is in its scope; NULL (unnamed) without an ID.
 */
static const char *session_name_from_peer(const struct tunnel *t, const uint8_t *reid,
					  uint16_t len, char *name, size_t nlen)
{
	char scope[24];

	/* (name_derive keeps at most 23 characters of the scope, as this did) */
	if (t->peer_entry != NULL || t->name != NULL) {
		const char *from = t->peer_entry != NULL ? t->peer_entry : t->name;
		size_t k = strnlen(from, sizeof(scope) - 1);

		memcpy(scope, from, k);
		scope[k] = '\0';
	} else {
		snprintf(scope, sizeof(scope), "%u", t->id);
	}
	for (unsigned n = 1; n <= 1000; n++) {
		if (!name_derive(name, nlen, scope, reid, len, n))
			return NULL;
		if (session_find_name(name) == NULL)
			return name;
	}
	return NULL;
}

int session_on_accept(struct l2tp_cc *cc, struct l2tp_sess *ls, const struct l2tp_msg *req,
		      struct l2tp_sess_cfg *out)
{
	struct tunnel *t = l2tp_cc_user(cc);
	struct session_profile prof;
	struct session *s;
	char err[256], name[CFG_NAME_MAX], label[CFG_NAME_MAX + 16];
	int rc;

	if (l2tpd.shutting_down)
		snprintf(err, sizeof(err), "shutting down");
	if (l2tpd.shutting_down || session_check_limits(t, err, sizeof(err)) != CTL_OK) {
		log_info("tunnel %s: refusing session: %s", tunnel_label(t, label, sizeof(label)), err);
		l2tp_sess_close(ls, L2TP_CDN_NO_RESOURCES_TEMP, 0, err);	/* the CDN says which limit */
		return L2TP_CDN_NO_RESOURCES_TEMP;
	}
	rc = session_accept_profile(t, out->remote_end_id, out->remote_end_id_len, &prof,
				    err, sizeof(err));
	if (rc == 0)
		rc = session_reid_free(t, out->remote_end_id, out->remote_end_id_len, err,
				       sizeof(err));
	if (rc != 0) {
		log_info("tunnel %s: refusing session: %s", tunnel_label(t, label, sizeof(label)), err);
		l2tp_sess_close(ls, (uint16_t)rc, 0, err);	/* the CDN says why */
		return rc;
	}
	s = session_new(t, l2tp_sess_local_sid(ls), &prof,
			session_name_from_peer(t, out->remote_end_id, out->remote_end_id_len, name,
					       sizeof(name)), ORIGIN_PEER);
	if (s == NULL)
		return L2TP_CDN_NO_RESOURCES_TEMP;
	if (out->remote_end_id_len > 0) {
		struct reid_key k = reid_key_of(t, out->remote_end_id, out->remote_end_id_len);

		if (!reid_claim(s, &k)) {
			session_unindex_free(s);
			return L2TP_CDN_NO_RESOURCES_TEMP;
		}
	}
	s->sess = ls;
	l2tp_sess_set_user(ls, s);
	out->cookie_len = prof.cookie_len;
	out->l2ss = prof.l2spec;
	/* sequencing: what the peer asks for wins, else the profile */
	if (out->data_seq == 0)
		out->data_seq = prof.data_seq;
	(void)req;
	event_emit(EV_SESSION_CREATED, t, s, NULL);
	return 0;
}

/* Whoever waits for this session (the control socket) gets its answer. */
static void session_reply_waiters(struct session *s, enum ctl_status st, const char *err,
				  const struct l2tp_result *why)
{
	struct l2tpd_event ev = { .kind = EV_WAITERS, .t = s->tunnel, .s = s, .why = why,
				  .waiters = &s->waiters, .st = st, .err = err };

	if (!usl_list_empty(&s->waiters))
		event_publish(&ev);
}

/* "pw1 (4711)", or the ID alone */
static const char *session_label(const struct session *s, char *buf, size_t len)
{
	if (s->name != NULL)
		snprintf(buf, len, "%s (%u)", s->name, s->id);
	else
		snprintf(buf, len, "%u", s->id);
	return buf;
}

/*
 * Its kernel session or interface was deleted outside the daemon: the
 * pseudowire is dead, so the session is cleared with a CDN that says why.
 * Not an operator's delete: a static session comes back by itself.
 */
void session_dp_lost(struct session *s, const char *why)
{
	char label[CFG_NAME_MAX + 16];

	if (s->deleted || s->sess == NULL || l2tp_sess_state(s->sess) == L2TP_SESS_CLOSED)
		return;
	log_warnx("session %s: %s: clearing it (CDN to the peer)", session_label(s, label, sizeof(label)),
		  why);
	l2tp_sess_close(s->sess, L2TP_CDN_GENERAL_ERROR, L2TP_ERR_VENDOR, why);
}

static void session_log_up(const struct session *s)
{
	char label[CFG_NAME_MAX + 16], tlabel[CFG_NAME_MAX + 16], reid[192] = "";
	const uint8_t *p = NULL;
	uint16_t len = 0;

	if (s->sess != NULL)
		p = l2tp_sess_remote_end_id(s->sess, &len);
	usl_str_escape(reid, sizeof(reid), p, p ? len : 0);	/* the peer's words: data */
	log_info("session %s: up: tunnel %s, remote end id \"%s\"%s%s",
		 session_label(s, label, sizeof(label)), tunnel_label(s->tunnel, tlabel, sizeof(tlabel)),
		 reid, s->ifname[0] ? ", interface " : "", s->ifname);
}

/*
 * The engine clears a closing tunnel's sessions without a CDN (the StopCCN
 * covers them), with result 2 and error 1 as their reason: that is no CDN
 * result to report.
 */
static bool session_closed_with_tunnel(const struct session *s, const struct l2tp_result *why)
{
	return why != NULL && why->result == L2TP_CDN_GENERAL_ERROR && why->has_error &&
	       why->error == L2TP_ERR_NO_CONTROL_CONNECTION &&
	       (s->tunnel->closing || l2tp_cc_state(s->tunnel->cc) >= L2TP_CC_STOPPING);
}

/* Once per session: down (was up) or failed, and why (CDN text already escaped). */
static void session_log_down(struct session *s, const struct l2tp_result *why)
{
	char label[CFG_NAME_MAX + 16], tlabel[CFG_NAME_MAX + 16];

	if (s->down_logged)
		return;
	s->down_logged = true;
	session_label(s, label, sizeof(label));
	tunnel_label(s->tunnel, tlabel, sizeof(tlabel));
	if (why == NULL) {
		log_info("session %s: %s: tunnel %s%s", label, s->up ? "down" : "failed", tlabel,
			 s->tunnel->closing || l2tp_cc_state(s->tunnel->cc) >= L2TP_CC_STOPPING ?
			 ", which is closing" : "");
		return;
	}
	if (session_closed_with_tunnel(s, why)) {
		log_info("session %s: %s: tunnel %s closed, no CDN%s%.*s", label,
			 s->up ? "down" : "failed", tlabel, why->message.len ? ": " : "",
			 (int)why->message.len, why->message.p ? (const char *)why->message.p : "");
		return;
	}
	/*
	 * A static session the peer refuses or clears is an outage; an
	 * administrative clear is not, nor one that goes with its tunnel (the
	 * tunnel's line is the warning, not one per session).
	 */
	log_at(s->origin == ORIGIN_CONFIG && !s->deleted && why->result != L2TP_CDN_ADMIN &&
	       !s->tunnel->closing && l2tp_cc_state(s->tunnel->cc) == L2TP_CC_ESTABLISHED ?
	       LOG_LVL_WARN : LOG_LVL_INFO, "session %s: %s: tunnel %s, CDN result %u (%s)%s%.*s",
	       label, s->up ? "down" : "failed", tlabel, why->result,
	       l2tp_cdn_result_name(why->result), why->message.len ? ": " : "",
	       (int)why->message.len, why->message.p ? (const char *)why->message.p : "");
}

static void session_announce_down(struct session *s, const struct l2tp_result *why)
{
	char err[256], msg[160] = "";
	enum ctl_status st = CTL_E_PEER;

	session_log_down(s, why);

	if (s->up) {
		s->up = false;
		l2tpd.n_sessions_up--;
		event_emit(EV_SESSION_DOWN, s->tunnel, s, why);
	}
	if (usl_list_empty(&s->waiters))
		return;
	if (s->sess != NULL && l2tp_sess_dp_state(s->sess) == L2TP_DP_FAILED) {
		st = CTL_E_DATAPLANE;
		snprintf(err, sizeof(err), "data plane refused the session%s%s",
			 s->dp_error ? ": " : "", name_str(s->dp_error));
	} else {
		/* the peer's Result Code message: escaped, cut only between escapes */
		if (why != NULL && why->message.p != NULL)
			usl_str_escape(msg, sizeof(msg), why->message.p, why->message.len);
		if (session_closed_with_tunnel(s, why))
			snprintf(err, sizeof(err), "session closed with its tunnel%s%s",
				 msg[0] ? ": " : "", msg);
		else
			snprintf(err, sizeof(err), "session closed: CDN result %u (%s)%s%s",
				 why ? why->result : 0,
				 why ? l2tp_cdn_result_name(why->result) : "?", msg[0] ? ": " : "", msg);
	}
	session_reply_waiters(s, st, err, why);
}

void session_on_event(struct l2tp_cc *cc, struct l2tp_sess *ls, enum l2tp_sess_state from,
		      enum l2tp_sess_state to, const struct l2tp_result *why)
{
	struct session *s = l2tp_sess_user(ls);

	(void)cc;
	if (s == NULL)
		return;
	log_debug("session %u: %s -> %s", s->id, l2tp_sess_state_name(from),
		  l2tp_sess_state_name(to));
	if (to == L2TP_SESS_ESTABLISHED && !s->up) {
		s->up = true;
		s->established = usl_timerset_now(l2tpd.timers);
		l2tpd.n_sessions_up++;
		session_reply_waiters(s, CTL_OK, NULL, NULL);
		session_log_up(s);
		event_emit(EV_SESSION_UP, s->tunnel, s, NULL);
	} else if (to == L2TP_SESS_CLOSED) {
		session_announce_down(s, why);
	}
}

void session_on_freed(struct l2tp_cc *cc, struct l2tp_sess *ls)
{
	struct session *s = l2tp_sess_user(ls);

	(void)cc;
	if (s == NULL)
		return;
	session_announce_down(s, l2tp_sess_close_reason(ls));
	reid_release(s);	/* while s->sess still tells its Remote End ID */
	event_emit(EV_SESSION_DELETED, s->tunnel, s, l2tp_sess_close_reason(ls));
	s->sess = NULL;
	session_unindex_free(s);
}

int session_on_dp_create(struct l2tp_cc *cc, struct l2tp_sess *ls)
{
	struct session *s = l2tp_sess_user(ls);

	(void)cc;
	return l2tpd.dp->session_create(s);
}

int session_on_dp_prepare(struct l2tp_cc *cc, struct l2tp_sess *ls)
{
	struct session *s = l2tp_sess_user(ls);

	(void)cc;
	if (s == NULL || l2tpd.dp->session_prepare == NULL)
		return -1;
	return l2tpd.dp->session_prepare(s);
}

void session_on_dp_delete(struct l2tp_cc *cc, struct l2tp_sess *ls)
{
	struct session *s = l2tp_sess_user(ls);

	(void)cc;
	if (s != NULL)
		l2tpd.dp->session_delete(s);
}

void session_dp_done(struct session *s, int err)
{
	if (err != 0)
		log_warnx("session %u: data plane: %s", s->id, strerror(-err));
	l2tp_sess_dp_done(s->sess, err);
}

/* ---- presentation ------------------------------------------------------- */

static json_object *session_stats_json(const struct session *s)
{
	struct dp_session_stats st;
	json_object *o;

	if (l2tpd.dp->session_stats(s, &st) < 0)
		return NULL;
	o = json_object_new_object();
	json_add_int(o, "tx_packets", (int64_t)st.tx_packets);
	json_add_int(o, "tx_bytes", (int64_t)st.tx_bytes);
	json_add_int(o, "tx_errors", (int64_t)st.tx_errors);
	json_add_int(o, "rx_packets", (int64_t)st.rx_packets);
	json_add_int(o, "rx_bytes", (int64_t)st.rx_bytes);
	json_add_int(o, "rx_errors", (int64_t)st.rx_errors);
	json_add_int(o, "rx_seq_discards", (int64_t)st.rx_seq_discards);
	json_add_int(o, "rx_oos_packets", (int64_t)st.rx_oos_packets);
	json_add_int(o, "rx_cookie_discards", (int64_t)st.rx_cookie_discards);
	return o;
}

static const char *l2spec_name(uint16_t v)
{
	return v ? "default" : "none";
}

json_object *session_json(const struct session *s, bool detail)
{
	json_object *o = json_object_new_object();
	usl_time now = usl_timerset_now(l2tpd.timers);
	const struct l2tp_sess *ls = s->sess;
	const uint8_t *rei;
	char *rei_text;
	uint16_t rei_len = 0;
	uint8_t clen = 0, pclen = 0;

	json_add_int(o, "session_id", s->id);
	json_add_int(o, "tunnel_id", s->tunnel->id);
	json_add_str(o, "name", name_str(s->name));
	json_add_str(o, "description", name_str(s->description));
	json_add_str(o, "origin", origin_name(s->origin));
	json_add_str(o, "ifname", s->ifname);
	json_add_int(o, "uptime", s->up ? usl_time_to_ms(usl_time_sub(now, s->established)) / 1000 : 0);
	if (ls == NULL) {
		json_add_str(o, "state", "closed");
		return o;
	}
	json_add_int(o, "peer_session_id", l2tp_sess_remote_sid(ls));
	json_add_str(o, "state", l2tp_sess_state_name(l2tp_sess_state(ls)));
	json_add_str(o, "pw_type", config_pw_type_name(l2tp_sess_pw_type(ls)));
	l2tp_sess_cookie(ls, &clen);
	l2tp_sess_peer_cookie(ls, &pclen);
	json_add_int(o, "cookie_len", clen);
	json_add_int(o, "peer_cookie_len", pclen);
	json_add_str(o, "l2spec", l2spec_name(l2tp_sess_l2ss(ls)));
	json_add_str(o, "data_seq", config_data_seq_name(l2tp_sess_data_seq(ls)));
	rei = l2tp_sess_remote_end_id(ls, &rei_len);
	rei_text = usl_str_escape_dup(rei, rei ? rei_len : 0);	/* the peer's bytes: escaped */
	json_add_str(o, "remote_end_id", rei_text ? rei_text : "");
	free(rei_text);
	json_add_str(o, "circuit", l2tp_sess_peer_active(ls) ? "up" : "down");
	if (detail) {
		json_object *st = session_stats_json(s);

		json_add_str(o, "profile", s->prof->name);
		json_add_str(o, "bridge", s->prof->bridge);
		json_object *dp = l2tpd.dp->describe ? l2tpd.dp->describe(s->tunnel, s) : NULL;
		if (st != NULL)
			json_object_object_add(o, "stats", st);
		if (dp != NULL)
			json_object_object_add(o, "dataplane", dp);
	}
	return o;
}

/* ---- reload ----------------------------------------------------------------- */

uint16_t session_reaccept(const struct session *s, char *why, size_t len)
{
	struct session_profile prof;
	const uint8_t *reid;
	uint16_t n = 0;
	int rc;

	if (s->origin != ORIGIN_PEER || s->sess == NULL || s->deleted)
		return 0;
	reid = l2tp_sess_remote_end_id(s->sess, &n);
	rc = session_accept_profile(s->tunnel, reid, n, &prof, why, len);
	if (rc != 0)
		return (uint16_t)rc;
	if (!session_profile_eq(&prof, s->prof)) {
		snprintf(why, len, "its Remote End ID now selects other settings (profile %s)",
			 prof.name);
		return L2TP_CDN_ADMIN;
	}
	return 0;
}

/* ---- restart handover (handover.c) -------------------------------------- */

bool session_can_handover(const struct session *s)
{
	/* pppd is a child of this process: a PPP pseudowire does not outlive it */
	return s->up && !s->deleted && s->sess != NULL && l2tp_sess_can_save(s->sess) &&
	       s->prof->pw_type != L2TP_PW_PPP;
}

void session_save(const struct session *s, struct usl_pack *w)
{
	size_t off;

	usl_pack_u32(w, s->id);
	usl_pack_str(w, s->name);
	usl_pack_str(w, s->description);
	usl_pack_u8(w, (uint8_t)s->origin);
	usl_pack_str(w, s->prof->name);
	usl_pack_str(w, s->ifname);
	usl_pack_u64(w, (uint64_t)s->created.ns);
	usl_pack_u64(w, (uint64_t)s->established.ns);
	usl_pack_u64(w, s->dp_handle);
	off = usl_pack_reserve(w, 4);
	if (l2tpd.dp->session_save != NULL)
		l2tpd.dp->session_save(s, w);
	usl_pack_patch_u32(w, off, (uint32_t)(w->len - off - 4));
}

/*
 * The profile a handed-over session runs with: a peer's session gets what
 * its Remote End ID selects now, as on arrival; ours the one of that name.
 */
static bool session_restore_profile(const struct tunnel *t, struct l2tp_sess *ls,
				    enum origin origin, const char *name,
				    struct session_profile *out)
{
	const struct session_profile *p = config_session_profile(l2tpd.conf, name);
	const uint8_t *reid;
	uint16_t len = 0;
	char why[256];

	if (origin == ORIGIN_PEER) {
		reid = l2tp_sess_remote_end_id(ls, &len);
		if (session_accept_profile(t, reid, len, out, why, sizeof(why)) == 0)
			return true;
	}
	if (p == NULL)
		p = config_session_profile(l2tpd.conf, "default");
	if (p == NULL)
		return false;
	*out = *p;
	return true;
}

/* The record's fields into s (no index yet); false when malformed. */
static bool session_restore_fields(struct session *s, struct usl_unpack *r, uint32_t *id,
				   char **name, char *prof, size_t plen)
{
	uint8_t origin;

	*id = usl_unpack_u32(r);
	*name = usl_unpack_str(r, CFG_NAME_MAX, NULL);
	s->description = usl_unpack_str(r, CFG_DESC_MAX, NULL);
	origin = usl_unpack_u8(r);
	usl_unpack_str_to(r, prof, plen);
	usl_unpack_str_to(r, s->ifname, sizeof(s->ifname));
	s->created = usl_time_ns((int64_t)usl_unpack_u64(r));
	s->established = usl_time_ns((int64_t)usl_unpack_u64(r));
	s->dp_handle = usl_unpack_u64(r);
	s->origin = (enum origin)origin;
	return !r->bad && *id != 0 && origin <= ORIGIN_PEER;
}

struct session *session_restore(struct tunnel *t, struct usl_unpack *r, bool crashed)
{
	struct session tmp = { 0 }, *s;
	struct session_profile prof;
	struct l2tp_sess *ls;
	struct usl_unpack dp;
	char pname[CFG_NAME_MAX], label[CFG_NAME_MAX + 16];
	const uint8_t *dpp, *reid;
	size_t dplen;
	uint16_t len = 0;
	char *name = NULL;
	uint32_t id;

	if (!session_restore_fields(&tmp, r, &id, &name, pname, sizeof(pname)) ||
	    (dpp = usl_unpack_blob(r, &dplen)) == NULL || (ls = l2tp_cc_find_session(t->cc, id)) == NULL ||
	    session_find(id) != NULL || (name != NULL && session_find_name(name) != NULL) ||
	    !session_restore_profile(t, ls, tmp.origin, pname, &prof) ||
	    (s = session_new(t, id, &prof, name, tmp.origin)) == NULL) {
		log_warnx("tunnel %u: restart: a session record is malformed or taken; not adopted",
			  t->id);
		r->bad = true;
		free(name);
		free(tmp.description);
		return NULL;
	}
	free(name);
	free(s->description);
	s->description = tmp.description;
	memcpy(s->ifname, tmp.ifname, sizeof(s->ifname));
	s->created = tmp.created;
	s->established = tmp.established;
	s->dp_handle = tmp.dp_handle;
	s->sess = ls;
	l2tp_sess_set_user(ls, s);
	reid = l2tp_sess_remote_end_id(ls, &len);
	if (s->origin == ORIGIN_PEER && len > 0) {
		struct reid_key k = reid_key_of(t, reid, len);

		if (reid_find(&k) == NULL)
			reid_claim(s, &k);
	}
	s->up = true;
	l2tpd.n_sessions_up++;
	usl_unpack_init(&dp, dpp, dplen);
	/* after a crash the tunnel makes it again (l2tp_cc_remake_dp) */
	if (!crashed && l2tpd.dp->session_adopt != NULL && l2tpd.dp->session_adopt(s, &dp) < 0) {
		log_warnx("session %s: restart: the data plane does not have it: clearing it",
			  session_label(s, label, sizeof(label)));
		l2tp_sess_close(ls, L2TP_CDN_GENERAL_ERROR, L2TP_ERR_VENDOR, "lost in a restart");
		return NULL;
	}
	return s;
}
