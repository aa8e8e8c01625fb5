/*
 * src/tunnel.c - tunnels: one control connection (struct l2tp_cc) each,
 * with its socket, its indexes and its waiters.
 *
 * Indexes: by local CCID (every received message), by (peer address, peer
 * CCID) to recognise a retransmitted SCCRQ, by name, and an ordered tree
 * by CCID for listings and SNMP walks.  Nothing walks every tunnel except
 * list/show and shutdown.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "l2tpv3d.h"
#include "usl/buf.h"
#include "usl/log.h"

struct peer_ccid_key {
	const struct sockaddr *addr;
	uint32_t peer_ccid;
};

static struct log_ratelimit drop_rl = LOG_RATELIMIT_INIT(10, 10);

static bool tunnel_id_eq(const struct usl_hnode *n, const void *key)
{
	return usl_hash_entry(n, struct tunnel, by_id)->id == *(const uint32_t *)key;
}

static bool tunnel_peer_eq(const struct usl_hnode *n, const void *key)
{
	const struct tunnel *t = usl_hash_entry(n, struct tunnel, by_peer_ccid);
	const struct peer_ccid_key *k = key;

	return l2tp_cc_peer_ccid(t->cc) == k->peer_ccid &&
	       sockaddr_eq_addr((const struct sockaddr *)&t->remote, k->addr);
}

static bool tunnel_name_eq(const struct usl_hnode *n, const void *key)
{
	const struct tunnel *t = usl_container_of(n, struct tunnel, by_name);

	return strcmp(t->name, key) == 0;
}

static int tunnel_order_cmp(const struct usl_rb_node *a, const struct usl_rb_node *b)
{
	uint32_t x = usl_rb_entry(a, struct tunnel, by_order)->id;
	uint32_t y = usl_rb_entry(b, struct tunnel, by_order)->id;

	return (x > y) - (x < y);
}

static uint32_t peer_ccid_hash(const struct sockaddr *addr, uint32_t peer_ccid)
{
	return sockaddr_hash_addr(addr) ^ usl_hash_u32(peer_ccid);
}

int tunnel_init(void)
{
	if (usl_hash_init(&l2tpd.tunnels, 1024, tunnel_id_eq) < 0 ||
	    usl_hash_init(&l2tpd.tunnels_by_peer, 1024, tunnel_peer_eq) < 0 ||
	    usl_hash_init(&l2tpd.tunnels_by_name, 64, tunnel_name_eq) < 0)
		return -1;
	usl_rb_init(&l2tpd.tunnel_order);
	return 0;
}

struct tunnel *tunnel_find(uint32_t id)
{
	struct usl_hnode *n = usl_hash_lookup(&l2tpd.tunnels, &id, usl_hash_u32(id));

	return n ? usl_hash_entry(n, struct tunnel, by_id) : NULL;
}

struct tunnel *tunnel_find_name(const char *name)
{
	struct usl_hnode *n = usl_hash_lookup(&l2tpd.tunnels_by_name, name,
					      usl_hash_bytes(name, strlen(name), 0));

	return n ? usl_container_of(n, struct tunnel, by_name) : NULL;
}

static struct tunnel *tunnel_find_peer_ccid(const struct sockaddr *addr, uint32_t peer_ccid)
{
	struct peer_ccid_key k = { addr, peer_ccid };
	struct usl_hnode *n = usl_hash_lookup(&l2tpd.tunnels_by_peer, &k,
					      peer_ccid_hash(addr, peer_ccid));

	return n ? usl_hash_entry(n, struct tunnel, by_peer_ccid) : NULL;
}

static uint32_t tunnel_alloc_id(void)
{
	uint32_t id;

	do
		id = random_u32_nonzero();
	while (tunnel_find(id) != NULL);
	return id;
}

/* ---- engine callbacks --------------------------------------------------- */

/* Message type of an encoded message (first AVP), for the global counters. */
static unsigned wire_msg_type(const uint8_t *buf, size_t len)
{
	unsigned type;

	if (len < L2TP_CTRL_HDR_LEN + L2TP_AVP_HDR_LEN + 2)
		return L2TP_MSG_ZLB;
	type = usl_get_be16(buf + L2TP_CTRL_HDR_LEN + L2TP_AVP_HDR_LEN);
	return type <= L2TP_MSG_TYPE_MAX ? type : L2TP_MSG_ZLB;
}

static int tunnel_on_send(struct l2tp_cc *cc, const uint8_t *buf, size_t len)
{
	struct tunnel *t = l2tp_cc_user(cc);

	l2tpd.stats.tx_msgs[wire_msg_type(buf, len)]++;
	return transport_send(t, buf, len);
}

static void tunnel_reply_waiters(struct tunnel *t, enum ctl_status st, const char *err,
				 const struct l2tp_result *why)
{
	struct usl_list *pos, *tmp;

	usl_list_foreach_safe(pos, tmp, &t->waiters) {
		json_object *data = NULL;

		usl_list_del(pos);
		if (st == CTL_OK)
			data = tunnel_json(t, false);
		else if (why != NULL)
			data = json_object_new_object(),
			json_object_object_add(data, "result", result_json(why, true));
		ctl_req_reply(ctl_req_from_link(pos), st, err, data);
	}
}

static void tunnel_announce_up(struct tunnel *t)
{
	if (t->up)
		return;
	t->up = true;
	t->established = usl_timerset_now(l2tpd.timers);
	l2tpd.n_tunnels_up++;
	log_info("tunnel %u (peer %s): established, peer ccid %u host \"%s\"", t->id,
		 sockaddr_ntop((struct sockaddr *)&t->remote), l2tp_cc_peer_ccid(t->cc),
		 l2tp_cc_peer_host_name(t->cc));
	tunnel_reply_waiters(t, CTL_OK, NULL, NULL);
	if (t->origin == ORIGIN_CONFIG)
		static_tunnel_up(t->name);
	ctl_event("tunnel-up", t, NULL, NULL);
	snmpagent_notify_tunnel_up(t);
	hooks_run("tunnel-up", t, NULL);
}

/* Why a tunnel that never came up failed, as the CLI caller should read it. */
static enum ctl_status tunnel_fail_status(const struct tunnel *t, char *err, size_t errlen,
					  const struct l2tp_result *why)
{
	struct l2tp_cc_stats st;
	unsigned rx = 0;

	l2tp_cc_get_stats(t->cc, &st);
	for (int i = 0; i <= L2TP_MSG_TYPE_MAX; i++)
		rx += (unsigned)st.rx_msgs[i];
	if (l2tp_cc_dp_state(t->cc) == L2TP_DP_FAILED) {
		snprintf(err, errlen, "data plane refused the tunnel%s%s",
			 t->dp_error ? ": " : "", name_str(t->dp_error));
		return CTL_E_DATAPLANE;
	}
	if (rx == 0 && !t->closing) {
		snprintf(err, errlen, "no answer from peer %s",
			 sockaddr_ntop((const struct sockaddr *)&t->remote));
		return CTL_E_TIMEOUT;
	}
	if (t->closing || l2tpd.shutting_down) {
		snprintf(err, errlen, "tunnel deleted before it was established");
		return l2tpd.shutting_down ? CTL_E_SHUTTING_DOWN : CTL_E_PEER;
	}
	snprintf(err, errlen, "peer closed the connection: StopCCN result %u (%s)%s%.*s",
		 why ? why->result : 0, why ? l2tp_stopccn_result_name(why->result) : "?",
		 why && why->message.len ? ": " : "", why ? (int)why->message.len : 0,
		 why && why->message.p ? (const char *)why->message.p : "");
	return CTL_E_PEER;
}

static void tunnel_announce_down(struct tunnel *t, const struct l2tp_result *why)
{
	char err[256];
	enum ctl_status st;

	if (t->up) {
		t->up = false;
		l2tpd.n_tunnels_up--;
		ctl_event("tunnel-down", t, NULL, why);
		snmpagent_notify_tunnel_down(t, why);
		hooks_run("tunnel-down", t, NULL);
	}
	if (!usl_list_empty(&t->waiters)) {
		st = tunnel_fail_status(t, err, sizeof(err), why);
		tunnel_reply_waiters(t, st, err, why);
	}
}

static void tunnel_destroy(struct tunnel *t);

static void tunnel_on_event(struct l2tp_cc *cc, enum l2tp_cc_state from, enum l2tp_cc_state to,
			    const struct l2tp_result *why)
{
	struct tunnel *t = l2tp_cc_user(cc);

	log_debug("tunnel %u: %s -> %s", t->id, l2tp_cc_state_name(from), l2tp_cc_state_name(to));
	if (from == L2TP_CC_WAIT_CTL_REPLY) {
		usl_list_del(&t->connecting_link);
		l2tpd.n_half_open--;
	}
	if (from == L2TP_CC_WAIT_CTL_CONN)
		l2tpd.n_half_open--;
	if (to == L2TP_CC_WAIT_CTL_CONN)
		l2tpd.n_half_open++;
	if (to == L2TP_CC_ESTABLISHED && l2tp_cc_dp_state(cc) == L2TP_DP_UP)
		tunnel_announce_up(t);
	if (to == L2TP_CC_STOPPING || to == L2TP_CC_CLOSED) {
		if (why != NULL && from != L2TP_CC_STOPPING)
			log_info("tunnel %u (peer %s): down: result %u (%s)%s%.*s", t->id,
				 sockaddr_ntop((struct sockaddr *)&t->remote), why->result,
				 l2tp_stopccn_result_name(why->result), why->message.len ? ": " : "",
				 (int)why->message.len, why->message.p ? (const char *)why->message.p : "");
		tunnel_announce_down(t, why);
	}
	if (to == L2TP_CC_CLOSED)
		tunnel_destroy(t);
}

static int tunnel_on_dp_create(struct l2tp_cc *cc)
{
	struct tunnel *t = l2tp_cc_user(cc);

	if (!t->connected && transport_tunnel_connect(t, (struct sockaddr *)&t->remote) < 0)
		return -errno;
	return l2tpd.dp->tunnel_create(t);
}

static void tunnel_on_dp_delete(struct l2tp_cc *cc)
{
	l2tpd.dp->tunnel_delete(l2tp_cc_user(cc));
}

void tunnel_dp_done(struct tunnel *t, int err)
{
	if (err != 0)
		log_warnx("tunnel %u: data plane: %s", t->id, strerror(-err));
	l2tp_cc_dp_done(t->cc, err);
	if (err == 0 && l2tp_cc_state(t->cc) == L2TP_CC_ESTABLISHED)
		tunnel_announce_up(t);
}

static uint32_t tunnel_on_alloc_sid(struct l2tp_cc *cc)
{
	(void)cc;
	return session_alloc_id();
}

static void tunnel_on_random(struct l2tp_cc *cc, void *buf, size_t len)
{
	(void)cc;
	random_bytes(buf, len);
}

static const struct l2tp_cc_ops tunnel_ops = {
	.send = tunnel_on_send,
	.cc_event = tunnel_on_event,
	.dp_tunnel_create = tunnel_on_dp_create,
	.dp_tunnel_delete = tunnel_on_dp_delete,
	.alloc_session_id = tunnel_on_alloc_sid,
	.sess_accept = session_on_accept,
	.dp_session_create = session_on_dp_create,
	.dp_session_delete = session_on_dp_delete,
	.sess_event = session_on_event,
	.sess_freed = session_on_freed,
	.random = tunnel_on_random,
};

/* ---- lifecycle ---------------------------------------------------------- */

static usl_time ms(uint32_t v)
{
	return usl_time_ms(v);
}

static void cc_cfg_from_profile(struct l2tp_cc_cfg *cfg, const struct tunnel *t,
				const char *secret)
{
	l2tp_cc_cfg_init(cfg);
	if (l2tpd.dp->pw_types != NULL)	/* advertise what the data plane can carry */
		cfg->n_pw_caps = (uint8_t)l2tpd.dp->pw_types(cfg->pw_caps, L2TP_MAX_PW_CAPS);
	cfg->host_name = l2tpd.hostname;
	cfg->router_id = l2tpd.router_id;
	cfg->vendor_name = "l2tpv3d";
	cfg->encap = t->encap;
	cfg->rx_window = t->prof->rx_window;
	cfg->rtx_initial = ms(t->prof->retransmit_initial_ms);
	cfg->rtx_cap = ms(t->prof->retransmit_cap_ms);
	cfg->max_retries = t->prof->max_retries;
	cfg->sccrq_max_retries = t->prof->sccrq_max_retries;
	cfg->ack_delay = ms(t->prof->delayed_ack_ms);
	cfg->explicit_ack = t->prof->send_ack_msg;
	cfg->hello_interval = t->prof->hello_interval_ms ? ms(t->prof->hello_interval_ms)
							: USL_TIME_NEVER;
	cfg->auth_enabled = t->prof->digest != CFG_DIGEST_NONE;
	cfg->digest_type = t->prof->digest == CFG_DIGEST_SHA1 ? L2TP_DIGEST_HMAC_SHA1
							     : L2TP_DIGEST_HMAC_MD5;
	cfg->secret = (const uint8_t *)secret;	/* the engine keeps its own copy */
	cfg->secret_len = strlen(secret);
}

/* Allocates, indexes and opens the socket of a new tunnel (no message yet). */
static struct tunnel *tunnel_new(const struct sockaddr *remote, const struct sockaddr *local,
				 const struct tunnel_profile *prof, const char *secret,
				 enum origin origin, char *err, size_t errlen)
{
	struct tunnel *t = calloc(1, sizeof(*t));
	struct l2tp_cc_cfg cfg;

	if (t == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	t->fd = -1;
	t->origin = origin;
	t->encap = prof->encap;
	if (!(secret && secret[0]))
		secret = prof->secret[0] ? prof->secret : l2tpd.conf->secret;
	memcpy(&t->remote, remote, sockaddr_len(remote));
	memcpy(&t->dest_cfg, remote, sockaddr_len(remote));
	t->remote_len = sockaddr_len(remote);
	if (local != NULL && local->sa_family != AF_UNSPEC) {
		memcpy(&t->local, local, sockaddr_len(local));
		memcpy(&t->local_cfg, local, sockaddr_len(local));
	}
	usl_list_init(&t->waiters);
	usl_list_init(&t->sessions);
	usl_list_init(&t->peer_link);
	usl_list_init(&t->connecting_link);
	usl_rb_node_clear(&t->by_order);
	t->id = tunnel_alloc_id();
	t->created = usl_timerset_now(l2tpd.timers);
	t->prof = tunnel_profile_get(prof);
	if (t->prof == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (transport_tunnel_open(t, err, errlen) < 0)
		goto fail;
	cc_cfg_from_profile(&cfg, t, secret);
	t->cc = l2tp_cc_new(&cfg, &tunnel_ops, l2tpd.timers, t->id, t);
	if (t->cc == NULL) {
		snprintf(err, errlen, "protocol engine refused the profile: %s", strerror(errno));
		goto fail;
	}
	t->peer = peer_get(remote);
	if (t->peer == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	usl_list_add_tail(&t->peer->tunnels, &t->peer_link);
	t->peer->n_tunnels++;
	if (l2tpd.conf->snmp_config_id)
		t->config_id = idalloc_get(&t->peer->config_ids);
	usl_hash_insert(&l2tpd.tunnels, &t->by_id, usl_hash_u32(t->id));
	usl_rb_insert(&l2tpd.tunnel_order, &t->by_order, tunnel_order_cmp);
	snmpagent_tunnel_added(t);
	l2tpd.n_tunnels++;
	return t;
fail:
	if (t->cc != NULL)
		l2tp_cc_free(t->cc);
	transport_tunnel_close(t);
	tunnel_profile_put(t->prof);
	free(t);
	return NULL;
}

static void tunnel_set_name(struct tunnel *t, const char *name)
{
	if (name == NULL || name[0] == '\0')
		return;
	t->name = strdup(name);
	if (t->name == NULL)
		return;
	usl_hash_insert(&l2tpd.tunnels_by_name, &t->by_name, usl_hash_bytes(t->name, strlen(t->name), 0));
	t->name_indexed = true;
}

static enum ctl_status tunnel_check_limits(char *err, size_t errlen)
{
	if (l2tpd.shutting_down) {
		snprintf(err, errlen, "daemon is shutting down");
		return CTL_E_SHUTTING_DOWN;
	}
	if (l2tpd.n_tunnels >= l2tpd.conf->max_tunnels) {
		snprintf(err, errlen, "max_tunnels (%u) reached", l2tpd.conf->max_tunnels);
		return CTL_E_LIMIT;
	}
	return CTL_OK;
}

struct tunnel *tunnel_connect(const struct cfg_addr *peer, const struct cfg_addr *local,
			      const struct tunnel_profile *prof, const char *name,
			      const char *secret, enum origin origin, enum ctl_status *st,
			      char *err, size_t errlen)
{
	struct tunnel *t;

	if ((*st = tunnel_check_limits(err, errlen)) != CTL_OK)
		return NULL;
	if (name != NULL && name[0] && tunnel_find_name(name) != NULL) {
		snprintf(err, errlen, "a tunnel named '%s' already exists", name);
		*st = CTL_E_EXISTS;
		return NULL;
	}
	if (local != NULL && local->ss.ss_family != AF_UNSPEC &&
	    local->ss.ss_family != peer->ss.ss_family) {
		snprintf(err, errlen, "local and peer addresses are of different families");
		*st = CTL_E_INVALID;
		return NULL;
	}
	*st = CTL_E_INTERNAL;
	t = tunnel_new((const struct sockaddr *)&peer->ss,
		       local ? (const struct sockaddr *)&local->ss : NULL, prof, secret, origin,
		       err, errlen);
	if (t == NULL)
		return NULL;
	tunnel_set_name(t, name);
	/* a fixed source port shares 1701 with the listener: connect at once */
	if (t->encap == L2TP_ENCAP_UDP && prof->udp_src_port == CFG_SPORT_1701)
		transport_tunnel_connect(t, (struct sockaddr *)&t->remote);
	usl_list_add_tail(&t->peer->connecting, &t->connecting_link);
	l2tpd.n_half_open++;
	ctl_event("tunnel-created", t, NULL, NULL);
	if (l2tp_cc_connect(t->cc) < 0) {
		snprintf(err, errlen, "cannot send SCCRQ: %s", strerror(errno));
		tunnel_delete(t, L2TP_STOPCCN_GENERAL_ERROR, "local error");
		return NULL;
	}
	*st = CTL_OK;
	return t;
}

void tunnel_delete(struct tunnel *t, uint16_t result, const char *msg)
{
	t->closing = true;
	/* the name is free again at once: a reload may restart it under the same name */
	if (t->name_indexed) {
		usl_hash_remove(&l2tpd.tunnels_by_name, &t->by_name);
		t->name_indexed = false;
	}
	l2tp_cc_close(t->cc, result, 0, msg);
}

static void tunnel_unindex(struct tunnel *t)
{
	usl_hash_remove(&l2tpd.tunnels, &t->by_id);
	usl_rb_erase(&l2tpd.tunnel_order, &t->by_order);
	snmpagent_tunnel_removed(t);
	if (t->in_peer_ccid_index)
		usl_hash_remove(&l2tpd.tunnels_by_peer, &t->by_peer_ccid);
	if (t->name_indexed)
		usl_hash_remove(&l2tpd.tunnels_by_name, &t->by_name);
	usl_list_del(&t->peer_link);
	usl_list_del(&t->connecting_link);
	t->peer->n_tunnels--;
	if (t->config_id)
		idalloc_put(&t->peer->config_ids, t->config_id);
	peer_put(t->peer);
	tunnel_profile_put(t->prof);
	free(t->session_profile);
	free(t->name);
	free(t->dp_error);
	l2tpd.n_tunnels--;
}

static void tunnel_destroy(struct tunnel *t)
{
	struct l2tp_cc_stats st;

	l2tp_cc_get_stats(t->cc, &st);
	l2tpd.stats.retransmits += st.retransmits;	/* `stats` adds the live tunnels' */
	tunnel_announce_down(t, l2tp_cc_close_reason(t->cc));
	ctl_event("tunnel-deleted", t, NULL, l2tp_cc_close_reason(t->cc));
	/* a static tunnel lost on its own comes back (its name is still indexed) */
	if (t->origin == ORIGIN_CONFIG && t->name_indexed)
		static_tunnel_lost(t->name);
	tunnel_unindex(t);
	transport_tunnel_close(t);
	l2tp_cc_free(t->cc);	/* deferred by the engine while inside its callback */
	free(t);
	if (l2tpd.shutting_down)
		l2tpd_shutdown_done_check();
}

static void tunnel_free(struct tunnel *t)
{
	tunnel_reply_waiters(t, CTL_E_SHUTTING_DOWN, "daemon stopped", NULL);
	l2tp_cc_free(t->cc);
	tunnel_unindex(t);
	transport_tunnel_close(t);
	free(t);
}

/*
 * SIGTERM: StopCCN on every live tunnel; the daemon exits when they are
 * acknowledged.  A tunnel already stopping because the peer closed it only
 * holds state to re-acknowledge a retransmitted StopCCN: it goes at once.
 */
void tunnel_shutdown_all(void)
{
	struct usl_rb_node *n, *next;

	for (n = usl_rb_first(&l2tpd.tunnel_order); n != NULL; n = next) {
		struct tunnel *t = usl_rb_entry(n, struct tunnel, by_order);

		next = usl_rb_next(n);
		if (l2tp_cc_state(t->cc) != L2TP_CC_STOPPING)
			tunnel_delete(t, L2TP_STOPCCN_SHUTTING_DOWN, "daemon shutting down");
		else if (!t->closing)
			tunnel_free(t);
	}
}

void tunnel_free_all(void)
{
	struct usl_rb_node *n;

	while ((n = usl_rb_first(&l2tpd.tunnel_order)) != NULL)
		tunnel_free(usl_rb_entry(n, struct tunnel, by_order));
}

/* ---- input -------------------------------------------------------------- */

static void count_drop(struct tunnel *t, enum l2tp_drop why, const struct sockaddr *from)
{
	l2tpd.stats.drops[why]++;
	if (why == L2TP_DROP_DUPLICATE)
		return;
	log_warnx_rl(&drop_rl, usl_timerset_now(l2tpd.timers), "%s%u%sdropped message from %s: %s",
		     t ? "tunnel " : "", t ? t->id : 0, t ? ": " : "", sockaddr_ntop(from),
		     l2tp_drop_name(why));
}

static void count_rx(const uint8_t *buf, size_t len)
{
	l2tpd.stats.rx_msgs[wire_msg_type(buf, len)]++;
}

static void tunnel_index_peer_ccid(struct tunnel *t)
{
	uint32_t pc = l2tp_cc_peer_ccid(t->cc);

	if (t->in_peer_ccid_index || pc == 0)
		return;
	usl_hash_insert(&l2tpd.tunnels_by_peer, &t->by_peer_ccid,
			peer_ccid_hash((struct sockaddr *)&t->remote, pc));
	t->in_peer_ccid_index = true;
}

void tunnel_input(struct tunnel *t, const uint8_t *buf, size_t len, const struct sockaddr *from)
{
	uint32_t id = t->id;	/* t may be freed inside l2tp_cc_input() */
	enum l2tp_drop why;

	if (!t->connected) {
		/* first answer: follow the port the peer replies from */
		if (!sockaddr_eq_addr(from, (struct sockaddr *)&t->remote)) {
			count_drop(t, L2TP_DROP_UNKNOWN_CCID, from);
			return;
		}
		memcpy(&t->remote, from, sockaddr_len(from));
	}
	why = l2tp_cc_input(t->cc, buf, len);
	if (why != L2TP_DROP_NONE) {
		count_drop(t, why, from);
		return;
	}
	count_rx(buf, len);
	/* the engine may have closed (and freed) the tunnel inside the call */
	if (tunnel_find(id) != t)
		return;
	if (!t->connected && l2tp_cc_peer_ccid(t->cc) != 0)
		transport_tunnel_connect(t, (struct sockaddr *)&t->remote);
	tunnel_index_peer_ccid(t);
}

/* Crossed SCCRQs (RFC 3931 5.4.3): true when theirs is to be ignored. */
static bool tunnel_tie_break(struct peer *p, const struct l2tp_msg *m)
{
	struct tunnel *ours;

	if (usl_list_empty(&p->connecting))
		return false;
	ours = usl_list_first_entry(&p->connecting, struct tunnel, connecting_link);
	switch (l2tp_cc_tie_break(ours->cc, m)) {
	case L2TP_TIE_NONE:
		return false;
	case L2TP_TIE_WE_WIN:
		return false;	/* the caller refuses theirs with StopCCN 3 */
	case L2TP_TIE_WE_LOSE:
		log_info("tunnel %u: lost the tie breaker to %s", ours->id,
			 sockaddr_ntop((struct sockaddr *)&ours->remote));
		l2tp_cc_discard(ours->cc, L2TP_STOPCCN_ALREADY_EXISTS, "lost tie breaker");
		return false;
	case L2TP_TIE_RESTART:
		ours->reconnect = true;
		l2tp_cc_discard(ours->cc, L2TP_STOPCCN_ALREADY_EXISTS, "equal tie breakers");
		return true;
	}
	return false;
}

static bool refuse_reason(const struct peer_profile *pp, const struct l2tp_msg *m,
			  uint16_t *result, const char **msg)
{
	if (!pp->accept) {
		*result = L2TP_STOPCCN_NOT_AUTHORIZED;
		*msg = "peer not allowed by configuration";
		return true;
	}
	if (l2tpd.n_tunnels >= l2tpd.conf->max_tunnels) {
		*result = L2TP_STOPCCN_GENERAL_ERROR;
		*msg = "max_tunnels reached";
		return true;
	}
	if (l2tpd.shutting_down) {
		*result = L2TP_STOPCCN_SHUTTING_DOWN;
		*msg = "shutting down";
		return true;
	}
	(void)m;
	return false;
}

/* A new control connection from a peer: an SCCRQ on a listener. */
static void tunnel_accept(const uint8_t *buf, size_t len, const struct sockaddr *from,
			  const struct sockaddr *to, const struct l2tp_msg *m,
			  enum l2tp_encap encap)
{
	const struct peer_profile *pp = config_match_peer(l2tpd.conf, from);
	const struct tunnel_profile *tp = config_tunnel_profile(l2tpd.conf, pp->tunnel_profile);
	struct tunnel_profile prof;
	union saddr local;
	struct tunnel *t;
	struct peer *p;
	const char *msg = NULL;
	uint16_t result = 0;
	char err[256];

	if (l2tpd.n_half_open >= l2tpd.conf->max_half_open) {
		count_drop(NULL, L2TP_DROP_LIMIT, from);
		return;
	}
	p = peer_get(from);
	if (p != NULL && tunnel_tie_break(p, m)) {
		peer_put(p);
		return;
	}
	if (p != NULL)
		peer_put(p);
	prof = tp ? *tp : l2tpd.conf->tunnel_profiles[0];
	prof.encap = encap;
	/* answer from an ephemeral port (or 1701 if the profile says so) */
	memcpy(&local, to, sockaddr_len(to));
	sockaddr_set_port((struct sockaddr *)&local, 0);
	t = tunnel_new(from, (struct sockaddr *)&local, &prof, pp->secret, ORIGIN_PEER, err,
		       sizeof(err));
	if (t == NULL) {
		log_warnx("SCCRQ from %s: %s", sockaddr_ntop(from), err);
		return;
	}
	if (pp->session_profile[0])
		t->session_profile = strdup(pp->session_profile);
	if (encap == L2TP_ENCAP_UDP)
		transport_tunnel_connect(t, from);
	if (refuse_reason(pp, m, &result, &msg)) {
		l2tpd.stats.drops[L2TP_DROP_PEER_REFUSED]++;
		log_warnx("SCCRQ from %s refused: %s", sockaddr_ntop(from), msg);
		l2tp_cc_input_refuse(t->cc, buf, len, result, 0, msg);
		return;
	}
	ctl_event("tunnel-created", t, NULL, NULL);
	tunnel_input(t, buf, len, from);
}

/* The secret that may hide AVPs of an SCCRQ from this peer (RFC 3931 5.3). */
static const struct l2tp_secret *sccrq_secret(const struct sockaddr *from, struct l2tp_secret *s)
{
	const struct peer_profile *pp = config_match_peer(l2tpd.conf, from);
	const struct tunnel_profile *tp = config_tunnel_profile(l2tpd.conf, pp->tunnel_profile);
	const char *secret = config_secret(l2tpd.conf, tp, pp);

	s->p = (const uint8_t *)secret;
	s->len = secret ? strlen(secret) : 0;
	return s->len ? s : NULL;
}

void tunnel_input_listener(int lfd, const uint8_t *buf, size_t len,
			   const struct sockaddr *from, const struct sockaddr *to,
			   enum l2tp_encap encap)
{
	struct l2tp_secret secret;
	struct l2tp_msg *m;
	struct tunnel *t;
	enum l2tp_drop why;
	static struct l2tp_msg msgbuf;	/* large (hidden AVP scratch): not on the stack */

	(void)lfd;
	m = &msgbuf;
	why = l2tp_msg_decode_header(m, buf, len, false);
	if (why != L2TP_DROP_NONE) {
		count_drop(NULL, why, from);
		return;
	}
	if (m->ccid != 0) {
		t = tunnel_find(m->ccid);
		if (t == NULL || !sockaddr_eq_addr(from, (struct sockaddr *)&t->remote)) {
			count_drop(NULL, L2TP_DROP_UNKNOWN_CCID, from);
			return;
		}
		tunnel_input(t, buf, len, from);
		return;
	}
	why = l2tp_msg_decode(m, buf, len, false, sccrq_secret(from, &secret));
	if (why == L2TP_DROP_NONE && m->type != L2TP_MSG_SCCRQ)
		why = L2TP_DROP_ZERO_CCID;
	if (why != L2TP_DROP_NONE) {
		count_drop(NULL, why, from);
		return;
	}
	/* a retransmitted SCCRQ belongs to the tunnel it already created */
	t = tunnel_find_peer_ccid(from, m->assigned_ccid);
	if (t != NULL) {
		tunnel_input(t, buf, len, from);
		return;
	}
	tunnel_accept(buf, len, from, to, m, encap);
}

/* ---- presentation ------------------------------------------------------- */

static json_object *msg_counts_json(const uint64_t *counts)
{
	json_object *o = json_object_new_object();

	for (int i = 0; i <= L2TP_MSG_TYPE_MAX; i++)
		if (counts[i] != 0)
			json_add_int(o, l2tp_msg_type_name((uint16_t)i), (int64_t)counts[i]);
	return o;
}

json_object *drop_counts_json(const uint64_t *drops)
{
	json_object *o = json_object_new_object();

	for (int i = 1; i < L2TP_DROP__COUNT; i++)
		if (drops[i] != 0)
			json_add_int(o, l2tp_drop_name(i), (int64_t)drops[i]);
	return o;
}

json_object *msg_type_counts_json(const uint64_t *counts)
{
	return msg_counts_json(counts);
}

static json_object *tunnel_counters_json(const struct tunnel *t)
{
	json_object *o = json_object_new_object();
	struct l2tp_cc_stats st;

	l2tp_cc_get_stats(t->cc, &st);
	json_object_object_add(o, "msgs_in", msg_counts_json(st.rx_msgs));
	json_object_object_add(o, "msgs_out", msg_counts_json(st.tx_msgs));
	json_add_int(o, "retransmits", (int64_t)st.retransmits);
	json_object_object_add(o, "drops", drop_counts_json(st.drops));
	json_add_int(o, "cwnd", st.cwnd);
	json_add_int(o, "peer_rx_window", st.peer_rx_window);
	json_add_int(o, "in_flight", st.in_flight);
	return o;
}

json_object *tunnel_json(const struct tunnel *t, bool detail)
{
	json_object *o = json_object_new_object();
	usl_time now = usl_timerset_now(l2tpd.timers);
	char a[64];

	json_add_int(o, "tunnel_id", t->id);
	json_add_int(o, "peer_tunnel_id", l2tp_cc_peer_ccid(t->cc));
	json_add_str(o, "name", name_str(t->name));
	json_add_str(o, "state", l2tp_cc_state_name(l2tp_cc_state(t->cc)));
	sockaddr_str((const struct sockaddr *)&t->remote, a, sizeof(a));
	json_add_str(o, "peer", a);
	sockaddr_str((const struct sockaddr *)&t->local, a, sizeof(a));
	json_add_str(o, "local", a);
	json_add_str(o, "encap", t->encap == L2TP_ENCAP_IP ? "ip" : "udp");
	json_add_str(o, "peer_host_name", l2tp_cc_peer_host_name(t->cc));
	json_add_str(o, "peer_router_id", router_id_str(l2tp_cc_peer_router_id(t->cc)));
	if (l2tpd.conf->snmp_config_id)
		json_add_int(o, "config_id", t->config_id);
	json_add_int(o, "sessions", t->n_sessions);
	json_add_int(o, "uptime", t->up ? usl_time_to_ms(usl_time_sub(now, t->established)) / 1000 : 0);
	json_add_str(o, "profile", t->prof->name);
	json_add_str(o, "origin", origin_name(t->origin));
	json_add_str(o, "auth", l2tp_cc_auth_on(t->cc) ? config_digest_name(t->prof->digest) : "none");
	if (detail) {
		json_object_object_add(o, "counters", tunnel_counters_json(t));
		json_object *dp = l2tpd.dp->describe ? l2tpd.dp->describe(t, NULL) : NULL;
		if (dp != NULL)
			json_object_object_add(o, "dataplane", dp);
	}
	return o;
}

void tunnel_add_waiter(struct tunnel *t, struct ctl_req *r)
{
	usl_list_add_tail(&t->waiters, ctl_req_link(r));
}
