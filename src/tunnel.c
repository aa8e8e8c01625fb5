/*
 * src/tunnel.c - tunnels: one control connection (struct l2tp_cc) each,
 * with its socket, its indexes and its waiters.
 *
 * Indexes: by local CCID (every received message), by (peer address, peer
 * CCID) to recognise a retransmitted SCCRQ, by name, and an ordered tree
 * by CCID for listings and SNMP walks.  Nothing walks every tunnel except
 * list/show and shutdown.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "event.h"
#include "l2tpv3d.h"
#include "usl/buf.h"
#include "usl/escape.h"
#include "usl/log.h"
#include "usl/pack.h"

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
	       sockaddr_eq_full((const struct sockaddr *)&t->remote, k->addr);
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

/*
 * A connection counts against its peers entry (max_tunnels) from its
 * SCCRQ's acceptance (half-open ones too) until it stops: one holding for a
 * StopCCN's retransmissions is no connection any more, and a LAC that
 * reconnects at once must not find its own dead ones in the way.
 */
/* a recovery connection's SCCRQ retransmissions, at least (RFC 4951) */
#define RECOVERY_MIN_RETRIES	10
#define RECOVERY_MIN_RTX_CAP_S	8

static void tunnel_count_changed(void);
static void tunnel_recovery_gone(struct tunnel *rec);
static struct tunnel *tunnel_new(const struct sockaddr *remote, const struct sockaddr *local,
				 const struct tunnel_profile *prof, const char *secret,
				 enum origin origin, const struct tunnel *recover,
				 char *err, size_t errlen);
static void trim_expired(struct usl_timer *tm);
struct debug_peer;
static struct debug_peer *debug_peer_find(const struct sockaddr *addr);
static void tunnel_trace(const struct tunnel *t, const char *dir, const uint8_t *buf, size_t len);
static struct usl_timer trim_timer;

static uint32_t peer_ccid_hash(const struct sockaddr *addr, uint32_t peer_ccid)
{
	return sockaddr_hash_addr(addr) ^ usl_hash_u32(peer_ccid);
}

static const struct transport_rx tunnel_rx = {
	.listener = tunnel_input_listener,
	.tunnel = tunnel_input,
	.find = tunnel_find,
	.reclaim_socket = tunnel_reclaim_held_socket,
};

int tunnel_init(void)
{
	transport_set_rx(&tunnel_rx);
	if (usl_hash_init(&l2tpd.tunnels, 1024, tunnel_id_eq) < 0 ||
	    usl_hash_init(&l2tpd.tunnels_by_peer, 1024, tunnel_peer_eq) < 0 ||
	    usl_hash_init(&l2tpd.tunnels_by_name, 64, tunnel_name_eq) < 0)
		return -1;
	usl_rb_init(&l2tpd.tunnel_order);
	usl_list_init(&l2tpd.half_open_in);
	usl_list_init(&l2tpd.held_sockets);
	usl_timer_init(&trim_timer, trim_expired);
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

	/* a handed-over kernel tunnel nobody adopted holds its ID until the loop runs */
	do
		id = random_u32_nonzero();
	while (tunnel_find(id) != NULL || tunnel_id_kept(id));
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
	if (t->debug)
		tunnel_trace(t, "tx", buf, len);
	return transport_send(t, buf, len);
}

/* Whoever waits for this tunnel (the control socket) gets its answer. */
static void tunnel_reply_waiters(struct tunnel *t, enum ctl_status st, const char *err,
				 const struct l2tp_result *why)
{
	struct l2tpd_event ev = { .kind = EV_WAITERS, .t = t, .why = why,
				  .waiters = &t->waiters, .st = st, .err = err };

	if (!usl_list_empty(&t->waiters))
		event_publish(&ev);
}

const char *tunnel_label(const struct tunnel *t, char *buf, size_t len)
{
	if (t->name != NULL)
		snprintf(buf, len, "%s (%u)", t->name, t->id);
	else
		snprintf(buf, len, "%u", t->id);
	return buf;
}

/*
 * A peer that restarts opens new control connections from the same address
 * and Router ID (or Host Name) while our old ones to it are dead, and they
 * would stay beside the new ones until their HELLOs run out (minutes).  So
 * a new connection from a peer that has been silent on all its older ones
 * since it began probes them: first a sample of PROBE_SAMPLE (a HELLO each);
 * if the peer answers any before PROBE_RETRIES retransmissions of the
 * sample's go unanswered, and at least PROBE_VERDICT_MIN_MS (3 s with the
 * default 1 s timer: the time the protocol itself gives a connection to
 * answer, and no less with a shorter timer, so a live peer slowed by a lost
 * HELLO or a busy CPU is not judged restarted, which would probe every
 * silent connection at once), it did not restart and that is all; if not,
 * every silent one is probed, and each is cleared as long later unanswered
 * (the sampled ones at once: theirs went unanswered already).  A peer still
 * talking on an old connection is not probed at all (a bring-up of
 * thousands of tunnels sends nothing), and a peer gets at most one sweep
 * per PROBE_EVERY_S (deferred to the end of the period for its newest
 * connection).
 */
#define PROBE_EVERY_S		2
#define PROBE_SAMPLE		4
#define PROBE_RETRIES		1
#define PROBE_VERDICT_MIN_MS	3000

static bool same_peer_instance(const struct l2tp_cc *a, const struct l2tp_cc *b)
{
	uint32_t rid = l2tp_cc_peer_router_id(a);

	if (rid != 0 || l2tp_cc_peer_router_id(b) != 0)
		return rid == l2tp_cc_peer_router_id(b);
	return strcmp(l2tp_cc_peer_host_name(a), l2tp_cc_peer_host_name(b)) == 0;
}

/* An older connection of nt's peer instance that may be probed, or was heard since `since`. */
static bool probe_candidate(const struct tunnel *t, const struct tunnel *nt)
{
	return t != nt && t->up && !t->closing && same_peer_instance(t->cc, nt->cc);
}

static bool peer_heard_since(const struct peer *p, const struct tunnel *nt, usl_time since)
{
	struct usl_list *pos;

	/* newest first: in a bring-up, the recent ones are the busy ones */
	usl_list_foreach_rev(pos, &p->tunnels) {
		const struct tunnel *t = usl_container_of(pos, struct tunnel, peer_link);

		if (probe_candidate(t, nt) && usl_time_cmp(l2tp_cc_last_rx(t->cc), since) >= 0)
			return true;
	}
	return false;
}

/* What a probe of a peer's silent connections did. */
struct probe_count {
	unsigned hello;		/* a HELLO sent */
	unsigned cut;		/* messages in flight already: their budget cut */
};

/*
 * Probes up to max of nt's peer's connections silent since nt began; *wait,
 * if given, becomes the longest time their probes take to go unanswered
 * PROBE_RETRIES times.  A connection with messages in flight counts as
 * probed (they ask the peer already) and has their budget cut at once, the
 * sample's too: its messages went unanswered on their own and are the
 * likeliest to reach a restarted peer's new connection.  A final probe (the
 * peer judged restarted) also cuts each silent connection's budget to
 * PROBE_RETRIES, the sample's HELLOs included: until then a connection
 * sampled with a HELLO keeps its own, so that a live peer's is not cleared
 * for a HELLO and its retransmission lost.
 */
static struct probe_count probe_silent(struct peer *p, const struct tunnel *nt, unsigned max,
				       bool final, usl_time *wait)
{
	struct probe_count n = { 0, 0 };
	struct usl_list *pos;

	usl_list_foreach(pos, &p->tunnels) {
		struct tunnel *t = usl_container_of(pos, struct tunnel, peer_link);
		usl_time by;
		int rc;

		if (n.hello + n.cut >= max)
			break;
		if (!probe_candidate(t, nt) || usl_time_cmp(l2tp_cc_last_rx(t->cc), nt->created) >= 0)
			continue;
		rc = l2tp_cc_probe(t->cc, PROBE_RETRIES, &by);
		if (rc < 0)
			continue;
		if (rc == 0)
			n.hello++;
		else
			n.cut++;
		if (wait != NULL && usl_time_cmp(by, *wait) > 0)
			*wait = by;
		if (final)
			l2tp_cc_probe_cut(t->cc, PROBE_RETRIES);
	}
	return n;
}

static void probe_sweep(struct peer *p, const struct tunnel *nt)
{
	usl_time wait = usl_time_ns(0);
	struct probe_count n;

	p->probed = usl_timerset_now(l2tpd.timers);
	/* the peer still talks on an old connection: it did not restart */
	if (peer_heard_since(p, nt, nt->created))
		return;
	n = probe_silent(p, nt, PROBE_SAMPLE, false, &wait);
	if (n.cut > 0) {
		char label[CFG_NAME_MAX + 16];

		log_info("peer %s: new connection %s, and %u of its older connections are silent "
			 "with messages unanswered: cutting their retransmissions (each cleared when "
			 "its last retransmission goes unanswered)", sockaddr_ntop(&p->addr.sa),
			 tunnel_label(nt, label, sizeof(label)), n.cut);
	}
	if (n.hello + n.cut == 0)
		return;
	if (usl_time_cmp(wait, usl_time_ms(PROBE_VERDICT_MIN_MS)) < 0)
		wait = usl_time_ms(PROBE_VERDICT_MIN_MS);
	p->probe_sampling = true;
	usl_timer_arm(l2tpd.timers, &p->probe_timer, wait);
}

/* The sample went unanswered: the peer restarted, probe all its silent connections. */
static void probe_judge_sample(struct peer *p, const struct tunnel *nt)
{
	char label[CFG_NAME_MAX + 16], what[160];
	struct probe_count n;

	p->probe_sampling = false;
	if (peer_heard_since(p, nt, p->probed)) {
		log_debug("peer %s: new connection %s: it answered on an older connection since "
			  "the sample, it did not restart", sockaddr_ntop(&p->addr.sa),
			  tunnel_label(nt, label, sizeof(label)));
		return;
	}
	n = probe_silent(p, nt, UINT_MAX, true, NULL);
	if (n.hello > 0 && n.cut > 0)
		snprintf(what, sizeof(what), "probing %u more with a HELLO, and cutting the "
			 "retransmissions of %u with messages unanswered", n.hello, n.cut);
	else if (n.hello > 0)
		snprintf(what, sizeof(what), "probing %u more with a HELLO", n.hello);
	else if (n.cut > 0)
		snprintf(what, sizeof(what), "cutting the retransmissions of %u with messages "
			 "unanswered", n.cut);
	else {
		log_debug("peer %s: new connection %s: its older connections are silent, none "
			  "left to probe", sockaddr_ntop(&p->addr.sa),
			  tunnel_label(nt, label, sizeof(label)));
		return;
	}
	log_info("peer %s: new connection %s, and its older connections are silent: it "
		 "restarted? %s (each cleared when its last retransmission goes unanswered)",
		 sockaddr_ntop(&p->addr.sa), tunnel_label(nt, label, sizeof(label)), what);
}

static void tunnel_probe_stale(const struct tunnel *nt)
{
	struct peer *p = nt->peer;
	usl_time next = usl_time_add(p->probed, usl_time_s(PROBE_EVERY_S));

	p->probe_for = nt->id;
	if (p->probe_sampling)
		return;		/* the sample's verdict comes first */
	if (p->probed.ns != 0 && usl_time_cmp(next, usl_timerset_now(l2tpd.timers)) > 0) {
		if (!usl_timer_armed(&p->probe_timer))
			usl_timer_arm_at(l2tpd.timers, &p->probe_timer, next);
		return;
	}
	probe_sweep(p, nt);
}

/* The peer's probe timer: a sample's deadline, or a sweep the rate limit deferred. */
void tunnel_probe_due(struct usl_timer *tm)
{
	struct peer *p = usl_container_of(tm, struct peer, probe_timer);
	const struct tunnel *nt = tunnel_find(p->probe_for);

	if (nt == NULL || nt->peer != p || !nt->up || nt->closing) {
		p->probe_sampling = false;
		return;
	}
	if (p->probe_sampling)
		probe_judge_sample(p, nt);
	else
		probe_sweep(p, nt);
}

static void tunnel_set_name(struct tunnel *t, const char *name);

/*
 * A tunnel a peer opened is named after its peers entry and the peer's
 * host name ("lacs/lac-1", then "lacs/lac-1:2" for its second connection),
 * so that the operator can address it and the log names the customer.
 * The bare name is tried first, so that a LAC that comes back keeps it;
 * the numbered ones start after the last this peer took, so that thousands
 * of connections from one host cost a probe or two each, not a scan.
 */
#define TUNNEL_NAME_PROBES 1000

/* 1: named; 0: the name is taken; -1: no name can be made of it */
static int tunnel_try_name(struct tunnel *t, const char *host, unsigned n)
{
	char name[CFG_NAME_MAX];

	if (!name_derive(name, sizeof(name), t->peer_entry ? t->peer_entry : "peer",
			 (const uint8_t *)host, strlen(host), n))
		return -1;
	if (tunnel_find_name(name) != NULL)
		return 0;
	tunnel_set_name(t, name);
	return 1;
}

static void tunnel_name_from_peer(struct tunnel *t)
{
	const char *host = l2tp_cc_peer_host_name(t->cc);
	unsigned next = t->peer != NULL && t->peer->name_next > 1 ? t->peer->name_next : 2;
	int rc = tunnel_try_name(t, host, 1);
	unsigned n;

	for (n = next; rc == 0 && n < next + TUNNEL_NAME_PROBES; n++)
		rc = tunnel_try_name(t, host, n);
	/* past what was tried, found or not: the next one does not try it again */
	if (rc >= 0 && t->peer != NULL)
		t->peer->name_next = n;
}

static void tunnel_announce_up(struct tunnel *t)
{
	char label[CFG_NAME_MAX + 16];

	if (t->up)
		return;
	t->up = true;
	t->established = usl_timerset_now(l2tpd.timers);
	l2tpd.n_tunnels_up++;
	if (t->origin == ORIGIN_PEER && t->name == NULL)
		tunnel_name_from_peer(t);
	log_info("tunnel %s: up: peer %s, host \"%s\", peer tunnel id %u",
		 tunnel_label(t, label, sizeof(label)), sockaddr_ntop((struct sockaddr *)&t->remote),
		 l2tp_cc_peer_host_name(t->cc), l2tp_cc_peer_ccid(t->cc));
	tunnel_reply_waiters(t, CTL_OK, NULL, NULL);
	event_emit(EV_TUNNEL_UP, t, NULL, NULL);
	tunnel_probe_stale(t);
}

/*
 * The reason a connection ended on an unauthenticated StopCCN begins with
 * this (tunnel_note_unauthenticated); what the StopCCN said follows.
 */
#define UNAUTH_STOPCCN	"unauthenticated StopCCN"

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
	if (rx == 0 && !t->closing && t->unauth_note != NULL && why != NULL &&
	    why->message.p != NULL && why->message.len >= strlen(UNAUTH_STOPCCN) &&
	    memcmp(why->message.p, UNAUTH_STOPCCN, strlen(UNAUTH_STOPCCN)) == 0) {
		/* ended early on it (tunnel_note_unauthenticated) */
		snprintf(err, errlen, "peer %s refused the connection, unauthenticated: %s; it came "
			 "again after our SCCRQ was retransmitted, which ended the attempt",
			 sockaddr_ntop((const struct sockaddr *)&t->remote), t->unauth_note);
		return CTL_E_PEER;
	}
	if (rx == 0 && !t->closing && t->unauth_note != NULL) {
		snprintf(err, errlen, "no authenticated answer from peer %s: %s",
			 sockaddr_ntop((const struct sockaddr *)&t->remote), t->unauth_note);
		return CTL_E_TIMEOUT;
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
		event_emit(EV_TUNNEL_DOWN, t, NULL, why);
	}
	if (!usl_list_empty(&t->waiters)) {
		st = tunnel_fail_status(t, err, sizeof(err), why);
		tunnel_reply_waiters(t, st, err, why);
	}
}

static void tunnel_destroy(struct tunnel *t);
static void tunnel_await_heir(struct tunnel *t);
static void reopen_free(struct tunnel_reopen *r);
static void tunnel_reopen_after_heir(struct tunnel *t);

/* A configured tunnel gave up its name (t: the connection, if any): see EV_TUNNEL_RELEASED. */
static void tunnel_released(const struct tunnel *t, const char *name, bool at_once)
{
	struct l2tpd_event ev = { .kind = EV_TUNNEL_RELEASED, .t = t, .name = name,
				  .at_once = at_once };

	event_publish(&ev);
}

/*
 * A static tunnel that was up and is now stopping by itself (its peer's
 * StopCCN: a restarted LNS; or a dead peer): the old connection stays for
 * the StopCCN hold under its old Control Connection ID, but the name goes
 * to a new connection, which may open at once.  Only after
 * REOPEN_MIN_UP_S up, so a peer that clears every connection as soon as it
 * is made sees us no faster than the usual backoff.
 */
#define REOPEN_MIN_UP_S	5

static void tunnel_release_name(struct tunnel *t)
{
	usl_time up;

	if (t->origin != ORIGIN_CONFIG || t->closing || !t->name_indexed || l2tpd.shutting_down)
		return;
	up = usl_time_sub(usl_timerset_now(l2tpd.timers), t->established);
	usl_hash_remove(&l2tpd.tunnels_by_name, &t->by_name);
	t->name_indexed = false;
	tunnel_released(t, t->name, usl_time_cmp(up, usl_time_s(REOPEN_MIN_UP_S)) >= 0);
}

/*
 * A peer's connection that never came up may have been opened by a forged
 * SCCRQ: a flood of them is a few lines and a count, not a line each.
 */
static struct log_ratelimit half_open_rl = LOG_RATELIMIT_INIT(10, 5);

static void tunnel_log_half_open_failed(const struct tunnel *t, const struct l2tp_result *why)
{
	log_info_rl(&half_open_rl, usl_timerset_now(l2tpd.timers),
		    "half-open connection from %s failed (tunnel %u): result %u (%s)%s%.*s",
		    sockaddr_ntop(&t->remote.sa), t->id, why ? why->result : 0,
		    why ? l2tp_stopccn_result_name(why->result) : "none", why && why->message.len ?
		    ": " : "", why ? (int)why->message.len : 0,
		    why && why->message.p ? (const char *)why->message.p : "");
}

/* Once per tunnel, when it stops: up before ("down") or not ("failed"), and why. */
/*
 * An outage is a warning: a tunnel that was up, or a static one, lost for
 * a reason that is not planned (ours: deleted, reloaded, shut down; the
 * peer's: a normal clear or its own shutdown).  The rest is info.
 */
static bool tunnel_down_is_outage(const struct tunnel *t, const struct l2tp_result *why)
{
	if (t->closing || !(t->up || t->origin == ORIGIN_CONFIG))
		return false;
	return why == NULL || (why->result != L2TP_STOPCCN_NORMAL &&
			       why->result != L2TP_STOPCCN_SHUTTING_DOWN);
}

static void tunnel_log_down(const struct tunnel *t, const struct l2tp_result *why)
{
	enum log_level lvl = tunnel_down_is_outage(t, why) ? LOG_LVL_WARN : LOG_LVL_INFO;
	char label[CFG_NAME_MAX + 16];

	if (t->recovery_of != 0) {
		/* RFC 4951: it ends once it has reset the old one; the old one says how that went */
		log_info("tunnel %u: the recovery connection for tunnel %u from %s closed",
			 t->id, t->recovery_of, sockaddr_ntop(&t->remote.sa));
		return;
	}
	if (t->origin == ORIGIN_PEER && !t->up) {
		tunnel_log_half_open_failed(t, why);
		return;
	}
	if (why == NULL) {
		log_at(lvl, "tunnel %s: %s: peer %s", tunnel_label(t, label, sizeof(label)),
		       t->up ? "down" : "failed", sockaddr_ntop(&t->remote.sa));
		return;
	}
	/* the message was escaped when it was stored (l2tp_reason_from_msg) */
	log_at(lvl, "tunnel %s: %s: peer %s, result %u (%s)%s%.*s",
	       tunnel_label(t, label, sizeof(label)), t->up ? "down" : "failed",
	       sockaddr_ntop(&t->remote.sa), why->result, l2tp_stopccn_result_name(why->result),
	       why->message.len ? ": " : "", (int)why->message.len,
	       why->message.p ? (const char *)why->message.p : "");
}

static void tunnel_on_event(struct l2tp_cc *cc, enum l2tp_cc_state from, enum l2tp_cc_state to,
			    const struct l2tp_result *why)
{
	struct tunnel *t = l2tp_cc_user(cc);

	log_debug("tunnel %u: %s -> %s", t->id, l2tp_cc_state_name(from), l2tp_cc_state_name(to));
	if (from == L2TP_CC_WAIT_CTL_REPLY && to == L2TP_CC_STOPPING && why != NULL &&
	    why->result == L2TP_STOPCCN_ALREADY_EXISTS)
		tunnel_await_heir(t);
	if (from == L2TP_CC_WAIT_CTL_REPLY || from == L2TP_CC_WAIT_CTL_CONN) {
		usl_list_del(&t->connecting_link);
		l2tpd.n_half_open--;
	}
	if (to == L2TP_CC_WAIT_CTL_CONN) {
		/* oldest first: the one to evict when the table is full */
		usl_list_add_tail(&l2tpd.half_open_in, &t->connecting_link);
		l2tpd.n_half_open++;
	}
	if (to == L2TP_CC_ESTABLISHED && l2tp_cc_dp_state(cc) == L2TP_DP_UP)
		tunnel_announce_up(t);
	if (to == L2TP_CC_ESTABLISHED) {
		reopen_free(t->reopen);
		t->reopen = NULL;
	}
	if (from == L2TP_CC_WAIT_CTL_CONN && t->reopen != NULL &&
	    (to == L2TP_CC_STOPPING || to == L2TP_CC_CLOSED))
		tunnel_reopen_after_heir(t);
	/* the pool's verdict on its member first: the reopen picks another */
	if ((to == L2TP_CC_STOPPING || to == L2TP_CC_CLOSED) && from != L2TP_CC_STOPPING)
		pool_tunnel_down(t, why);
	/* through a pool, a refusal too: the next member need not wait for the hold */
	if (to == L2TP_CC_STOPPING && (from == L2TP_CC_ESTABLISHED || t->pool != NULL))
		tunnel_release_name(t);
	if (to == L2TP_CC_STOPPING || to == L2TP_CC_CLOSED) {
		if (from != L2TP_CC_STOPPING) {
			tunnel_log_down(t, why);
			entry_count_del(t->peer_entry, ENTRY_TUNNELS);
		}
		tunnel_announce_down(t, why);
	}
	if (to == L2TP_CC_CLOSED && t->recovery_of != 0)
		tunnel_recovery_gone(t);
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

/*
 * RFC 4951: a recovery connection agreed on the old connection's sequence
 * numbers (RESET), then both sides did (DONE): the old one resumes and
 * reconciles its sessions; the recovering side closes the recovery one.
 */
static void tunnel_on_recovery(struct l2tp_cc *cc, enum l2tp_recovery_step step)
{
	struct tunnel *rec = l2tp_cc_user(cc);
	struct tunnel *old = tunnel_find(rec->recovery_of);
	bool ours = l2tp_cc_is_initiator(cc);

	if (old == NULL || old->cc == NULL || old->recovered_by != rec->id) {
		tunnel_delete(rec, L2TP_STOPCCN_GENERAL_ERROR, "the connection to recover is gone");
		return;
	}
	if (step == L2TP_RECOVERY_RESET) {
		if (l2tp_cc_resume(old->cc, cc) < 0) {
			tunnel_delete(rec, L2TP_STOPCCN_GENERAL_ERROR, "cannot resume the connection");
			return;
		}
		log_info("tunnel %u (peer %s): control channel reset through recovery "
			 "connection %u (RFC 4951)", old->id, sockaddr_ntop(&old->remote.sa),
			 rec->id);
		l2tpd.stats.failover_recovered++;
		return;
	}
	old->recovered_by = 0;
	log_info("tunnel %u: %u sessions queried after the recovery", old->id,
		 l2tp_cc_reconcile(old->cc));
	if (ours)
		tunnel_delete(rec, L2TP_STOPCCN_NORMAL, "recovered");
}

/* The secret a connection was made with, as a string. */
static void cc_secret_str(const struct l2tp_cc *cc, char *buf, size_t len)
{
	const struct l2tp_cc_cfg *c = l2tp_cc_cfg(cc);

	snprintf(buf, len, "%.*s", (int)c->secret_len, c->secret ? (const char *)c->secret : "");
}

/* A recovery connection went away: the recovering side's old one cannot be recovered. */
static void tunnel_recovery_gone(struct tunnel *rec)
{
	struct tunnel *old = tunnel_find(rec->recovery_of);

	if (l2tp_cc_is_initiator(rec->cc))
		event_publish(&(struct l2tpd_event){ .kind = EV_RECOVERY_ENDED, .t = rec });
	if (old == NULL || old->recovered_by != rec->id)
		return;
	old->recovered_by = 0;
	if (old->cc != NULL && l2tp_cc_failover_state(old->cc) == L2TP_FO_RESYNC) {
		log_warnx("tunnel %u (peer %s): not recovered, cleared silently (RFC 4951)",
			  old->id, sockaddr_ntop(&old->remote.sa));
		l2tp_cc_discard(old->cc, L2TP_STOPCCN_GENERAL_ERROR, "recovery failed");
	}
}

struct tunnel *tunnel_recover(struct tunnel *old, char *err, size_t errlen)
{
	char secret[CFG_SECRET_MAX];
	union saddr dest, local;
	struct tunnel *t;

	/* RFC 4951: the secret that authenticated the old connection */
	cc_secret_str(old->cc, secret, sizeof(secret));
	/* the peer's listener, from the old connection's local address */
	memcpy(&dest, &old->remote, sizeof(dest));
	sockaddr_set_port(&dest.sa, old->prof->udp_port);
	memcpy(&local, &old->local, sizeof(local));
	sockaddr_set_port(&local.sa, 0);
	t = tunnel_new(&dest.sa, &local.sa, old->prof, secret, ORIGIN_PEER, old, err, errlen);
	explicit_bzero(secret, sizeof(secret));
	if (t == NULL)
		return NULL;
	old->recovered_by = t->id;
	usl_list_add_tail(&t->peer->connecting, &t->connecting_link);
	l2tpd.n_half_open++;
	if (l2tp_cc_connect(t->cc) < 0) {
		snprintf(err, errlen, "cannot send SCCRQ: %s", strerror(errno));
		tunnel_delete(t, L2TP_STOPCCN_GENERAL_ERROR, "local error");
		return NULL;
	}
	return t;
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
	.dp_session_prepare = session_on_dp_prepare,
	.sess_event = session_on_event,
	.sess_freed = session_on_freed,
	.random = tunnel_on_random,
	.recovery = tunnel_on_recovery,
};

/* ---- lifecycle ---------------------------------------------------------- */

static usl_time ms(uint32_t v)
{
	return usl_time_ms(v);
}

static void cc_cfg_from_profile(struct l2tp_cc_cfg *cfg, const struct tunnel_profile *prof,
				enum l2tp_encap encap, const char *secret)
{
	l2tp_cc_cfg_init(cfg);
	if (l2tpd.dp->pw_types != NULL)	/* advertise what the data plane can carry */
		cfg->n_pw_caps = (uint8_t)l2tpd.dp->pw_types(cfg->pw_caps, L2TP_MAX_PW_CAPS);
	cfg->host_name = l2tpd.hostname;
	cfg->router_id = l2tpd.router_id;
	cfg->vendor_name = "l2tpv3d";
	cfg->encap = encap;
	cfg->rx_window = prof->rx_window;
	cfg->tx_window_max = prof->send_window;
	cfg->rtx_initial = ms(prof->retransmit_initial_ms);
	cfg->rtx_cap = ms(prof->retransmit_cap_ms);
	cfg->max_retries = prof->max_retries;
	cfg->sccrq_max_retries = prof->sccrq_max_retries;
	cfg->sccrp_max_retries = prof->sccrp_max_retries;
	cfg->ack_delay = ms(prof->delayed_ack_ms);
	cfg->explicit_ack = prof->send_ack_msg;
	cfg->hello_interval = prof->hello_interval_ms ? ms(prof->hello_interval_ms)
						      : USL_TIME_NEVER;
	cfg->setup_timeout = prof->setup_timeout_ms ? ms(prof->setup_timeout_ms) : USL_TIME_NEVER;
	cfg->sess_setup_timeout = ms(prof->session_setup_timeout_ms);
	cfg->auth_enabled = prof->digest != CFG_DIGEST_NONE;
	cfg->digest_type = prof->digest == CFG_DIGEST_SHA1 ? L2TP_DIGEST_HMAC_SHA1
							  : L2TP_DIGEST_HMAC_MD5;
	cfg->secret = (const uint8_t *)secret;	/* the engine keeps its own copy */
	cfg->secret_len = strlen(secret);
	cfg->hide_avps = prof->hide_avps;
	cfg->failover = prof->failover;
	cfg->recovery_time_ms = prof->recovery_time_ms;
	/* 5.4.3: simultaneous opens to one peer then resolve on both sides */
	cfg->send_tie_breaker = true;
}

/* A blank tunnel's lists and tree node, linked to nothing yet. */
static void tunnel_links_init(struct tunnel *t)
{
	usl_list_init(&t->waiters);
	usl_list_init(&t->sessions);
	usl_list_init(&t->peer_link);
	usl_list_init(&t->connecting_link);
	usl_list_init(&t->held_link);
	usl_rb_node_clear(&t->by_order);
}

/* Allocates, indexes and opens the socket of a new tunnel (no message yet). */
static struct tunnel *tunnel_new(const struct sockaddr *remote, const struct sockaddr *local,
				 const struct tunnel_profile *prof, const char *secret,
				 enum origin origin, const struct tunnel *recover,
				 char *err, size_t errlen)
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
	tunnel_links_init(t);
	t->id = tunnel_alloc_id();
	t->created = usl_timerset_now(l2tpd.timers);
	t->prof = tunnel_profile_get(prof);
	if (t->prof == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (transport_tunnel_open(t, err, errlen) < 0)
		goto fail;
	cc_cfg_from_profile(&cfg, t->prof, t->encap, secret);
	if (recover != NULL) {
		cfg.recover_ccid = recover->id;
		cfg.recover_peer_ccid = l2tp_cc_peer_ccid(recover->cc);
		t->recovery_of = recover->id;
		/*
		 * thousands of them leave at once after a crash, and a lost one
		 * costs a pseudowire: at least the default budget, whatever a
		 * profile tuned for quick detection says
		 */
		if (cfg.sccrq_max_retries < RECOVERY_MIN_RETRIES)
			cfg.sccrq_max_retries = RECOVERY_MIN_RETRIES;
		if (cfg.max_retries < cfg.sccrq_max_retries)
			cfg.max_retries = cfg.sccrq_max_retries;
		if (usl_time_cmp(cfg.rtx_cap, usl_time_s(RECOVERY_MIN_RTX_CAP_S)) < 0)
			cfg.rtx_cap = usl_time_s(RECOVERY_MIN_RTX_CAP_S);
	}
	t->cc = l2tp_cc_new(&cfg, &tunnel_ops, l2tpd.timers, t->id, t);
	if (t->cc == NULL) {
		snprintf(err, errlen, "protocol engine refused the profile: %s", strerror(errno));
		goto fail;
	}
	t->peer = peer_get(remote);
	t->debug = debug_peer_find(remote) != NULL;
	if (t->peer == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	usl_list_add_tail(&t->peer->tunnels, &t->peer_link);
	if (l2tpd.conf->snmp_config_id)
		t->config_id = idalloc_get(&t->peer->config_ids);
	usl_hash_insert(&l2tpd.tunnels, &t->by_id, usl_hash_u32(t->id));
	usl_rb_insert(&l2tpd.tunnel_order, &t->by_order, tunnel_order_cmp);
	snmpagent_tunnel_added(t);
	l2tpd.n_tunnels++;
	tunnel_count_changed();
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
	if (l2tpd.restarting) {
		snprintf(err, errlen, "daemon is restarting");
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
			      const char *description, const char *secret, enum origin origin,
			      enum ctl_status *st, char *err, size_t errlen)
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
		       NULL, err, errlen);
	if (t == NULL)
		return NULL;
	tunnel_set_name(t, name);
	text_copy(&t->description, description);
	/* a fixed source port shares 1701 with the listener: connect at once */
	if (t->encap == L2TP_ENCAP_UDP && t->shared_port)
		transport_tunnel_connect(t, (struct sockaddr *)&t->remote);
	usl_list_add_tail(&t->peer->connecting, &t->connecting_link);
	l2tpd.n_half_open++;
	event_emit(EV_TUNNEL_CREATED, t, NULL, NULL);
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

/*
 * Its kernel tunnel was deleted outside the daemon: every pseudowire in it
 * is dead, so the control connection goes too, with a StopCCN that says
 * why.  Not an operator's delete: a static tunnel comes back by itself.
 */
void tunnel_dp_lost(struct tunnel *t, const char *why)
{
	char label[CFG_NAME_MAX + 16];

	if (t->closing || l2tp_cc_state(t->cc) == L2TP_CC_STOPPING ||
	    l2tp_cc_state(t->cc) == L2TP_CC_CLOSED)
		return;
	log_warnx("tunnel %s: %s: clearing it (StopCCN to %s)", tunnel_label(t, label, sizeof(label)),
		  why, sockaddr_ntop(&t->remote.sa));
	l2tp_cc_close(t->cc, L2TP_STOPCCN_GENERAL_ERROR, L2TP_ERR_VENDOR, why);
}

/* The strings a tunnel owns. */
static void tunnel_free_texts(struct tunnel *t)
{
	free(t->name);
	free(t->session_profile);
	free(t->peer_entry);
	free(t->pool);
	free(t->description);
	free(t->dp_error);
	free(t->unauth_note);
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
	usl_list_del(&t->held_link);
	if (t->config_id)
		idalloc_put(&t->peer->config_ids, t->config_id);
	peer_put(t->peer);
	tunnel_profile_put(t->prof);
	pool_tunnel_release(t);
	tunnel_free_texts(t);
	l2tpd.n_tunnels--;
	tunnel_count_changed();
}

/*
 * Memory back to the system after a mass teardown (churn, a peer lost with
 * its thousands of tunnels): glibc keeps freed small blocks for reuse, so
 * RSS would stay at the high-water mark.  Once the tunnels fall to half of
 * their peak since the last trim, malloc_trim() runs a second later (one
 * call for the whole wave, not one per tunnel).
 */
#define TRIM_DELAY_MS	1000

static unsigned trim_peak;

static void trim_expired(struct usl_timer *tm)
{
	(void)tm;
	malloc_trim(0);
	trim_peak = l2tpd.n_tunnels;
}

static void tunnel_count_changed(void)
{
	if (l2tpd.n_tunnels > trim_peak)
		trim_peak = l2tpd.n_tunnels;
	else if (l2tpd.n_tunnels <= trim_peak / 2 && trim_peak >= 64 &&
		 !usl_timer_armed(&trim_timer))
		usl_timer_arm(l2tpd.timers, &trim_timer, usl_time_ms(TRIM_DELAY_MS));
}

static void tunnel_destroy(struct tunnel *t)
{
	struct l2tp_cc_stats st;

	l2tp_cc_get_stats(t->cc, &st);
	l2tpd.stats.retransmits += st.retransmits;	/* `stats` adds the live tunnels' */
	tunnel_announce_down(t, l2tp_cc_close_reason(t->cc));
	event_emit(EV_TUNNEL_DELETED, t, NULL, l2tp_cc_close_reason(t->cc));
	/* a static tunnel lost on its own comes back (its name is still indexed) */
	if (t->origin == ORIGIN_CONFIG && t->name_indexed)
		tunnel_released(t, t->name, false);
	tunnel_unindex(t);
	transport_tunnel_close(t);
	reopen_free(t->reopen);
	l2tp_cc_free(t->cc);	/* deferred by the engine while inside its callback */
	free(t);
	/* the last tunnel closed by a shutdown ends the loop */
	if (l2tpd.shutting_down && l2tpd.n_tunnels == 0)
		usl_loop_exit(l2tpd.loop);
}

static void tunnel_free(struct tunnel *t)
{
	if (l2tp_cc_state(t->cc) < L2TP_CC_STOPPING)
		entry_count_del(t->peer_entry, ENTRY_TUNNELS);	/* it never stopped: its entry still counts it */
	tunnel_reply_waiters(t, CTL_E_SHUTTING_DOWN, "daemon stopped", NULL);
	l2tp_cc_free(t->cc);
	tunnel_unindex(t);
	transport_tunnel_close(t);
	reopen_free(t->reopen);
	free(t);
}

/* Shutting down: a tunnel that only holds to re-acknowledge a StopCCN goes now. */
static void tunnel_free_held(struct tunnel *t)
{
	tunnel_free(t);
	if (l2tpd.n_tunnels == 0)
		usl_loop_exit(l2tpd.loop);
}

/*
 * SIGTERM: StopCCN on every live tunnel; the daemon exits when they are
 * acknowledged.  A tunnel already stopping because the peer closed it only
 * holds state to re-acknowledge a retransmitted StopCCN: it goes at once,
 * and so does one of ours whose peer closes it too meanwhile (crossed
 * StopCCNs: tunnel_input), since a peer that shuts down at the same moment
 * may be gone before it acknowledges ours.
 */
void tunnel_shutdown_all(void)
{
	struct usl_rb_node *n, *next;

	for (n = usl_rb_first(&l2tpd.tunnel_order); n != NULL; n = next) {
		struct tunnel *t = usl_rb_entry(n, struct tunnel, by_order);

		next = usl_rb_next(n);
		if (l2tp_cc_state(t->cc) != L2TP_CC_STOPPING)
			tunnel_delete(t, L2TP_STOPCCN_SHUTTING_DOWN, "daemon shutting down");
		else if (l2tp_cc_holding(t->cc))
			tunnel_free_held(t);
	}
}

void tunnel_free_all(void)
{
	struct usl_rb_node *n;

	while ((n = usl_rb_first(&l2tpd.tunnel_order)) != NULL)
		tunnel_free(usl_rb_entry(n, struct tunnel, by_order));
}

/* ---- input -------------------------------------------------------------- */

/*
 * Drops worth a warning (rate-limited); routine ones (duplicates, the ZLBs
 * that acknowledge our refusals) are only counted and logged at debug.
 */
static bool drop_is_routine(enum l2tp_drop why)
{
	return why == L2TP_DROP_DUPLICATE || why == L2TP_DROP_ZERO_CCID;
}

/*
 * One warning per peer and reason a minute: a peer with the wrong secret
 * retransmits its SCCRQ ten times, and each would be a warning.  A small
 * direct-mapped table: a source that loses its slot to another is logged
 * again sooner, and the global rate limit (drop_rl) still caps the total.
 */
#define DROP_REPEAT_S	60
#define DROP_SLOTS	64

struct drop_seen {
	union saddr addr;
	enum l2tp_drop why;
	usl_time logged;
	unsigned suppressed;
};
static struct drop_seen drops_seen[DROP_SLOTS];

/* True when this peer's drop for this reason is to be logged now; *more: suppressed since. */
static bool drop_first_in_a_while(const struct sockaddr *from, enum l2tp_drop why, unsigned *more)
{
	struct drop_seen *d = &drops_seen[(sockaddr_hash_addr(from) ^ (unsigned)why) % DROP_SLOTS];
	usl_time now = usl_timerset_now(l2tpd.timers);

	*more = 0;
	if (d->logged.ns != 0 && d->why == why && sockaddr_eq_addr(&d->addr.sa, from) &&
	    usl_time_cmp(usl_time_sub(now, d->logged), usl_time_s(DROP_REPEAT_S)) < 0) {
		d->suppressed++;
		return false;
	}
	if (d->why == why && sockaddr_eq_addr(&d->addr.sa, from))
		*more = d->suppressed;
	memcpy(&d->addr, from, sockaddr_len(from));
	d->why = why;
	d->logged = now;
	d->suppressed = 0;
	return true;
}

static void count_drop(struct tunnel *t, enum l2tp_drop why, const struct sockaddr *from)
{
	char who[CFG_NAME_MAX + 32] = "", label[CFG_NAME_MAX + 16], more_s[48] = "";
	bool digest = why == L2TP_DROP_DIGEST_MISMATCH || why == L2TP_DROP_DIGEST_MISSING;
	const struct peer_profile *pp;
	unsigned more;

	l2tpd.stats.drops[why]++;
	if (drop_is_routine(why)) {
		log_debug("dropped message from %s: %s", sockaddr_ntop(from), l2tp_drop_name(why));
		return;
	}
	if (!drop_first_in_a_while(from, why, &more))
		return;
	if (t != NULL) {
		snprintf(who, sizeof(who), "tunnel %s: ", tunnel_label(t, label, sizeof(label)));
	} else {
		pp = config_match_peer(l2tpd.conf, from);
		snprintf(who, sizeof(who), "peers entry %s: ", pp->name);
	}
	if (more > 0)
		snprintf(more_s, sizeof(more_s), " (%u more like it in the last %d s)", more,
			 DROP_REPEAT_S);
	log_warnx_rl(&drop_rl, usl_timerset_now(l2tpd.timers), "%sdropped message from %s: %s%s%s",
		     who, sockaddr_ntop(from), l2tp_drop_name(why),
		     digest ? ": check that both ends have the same secret and digest" : "", more_s);
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

/* Invariant: nothing but an established tunnel lives without a deadline. */
static void tunnel_check_deadline(const struct tunnel *t)
{
#ifdef L2TPD_INVARIANTS
	if (!l2tp_cc_has_deadline(t->cc))
		fatalx("invariant: tunnel %u in %s has no deadline", t->id,
		       l2tp_cc_state_name(l2tp_cc_state(t->cc)));
#else
	(void)t;
#endif
}

/*
 * RFC 3931 4.2: the side that got the StopCCN keeps acknowledging its
 * retransmissions for a full retransmission cycle (31 s).  That takes no
 * descriptor when the listener can answer for the tunnel (its socket
 * shares the listener's port, so the peer's datagrams reach the listener
 * once the socket is gone): it closes at once, our ACK already sent.  A
 * socket on a port of its own must stay for the peer to reach us, but it
 * is the first a new tunnel takes when descriptors run out
 * (tunnel_reclaim_held_socket), so held tunnels never lock new ones out.
 */
static void tunnel_hold_sockets(struct tunnel *t)
{
	if (t->closing || t->fd < 0 || t->encap != L2TP_ENCAP_UDP ||
	    !l2tp_cc_holding(t->cc) || !usl_list_empty(&t->held_link))
		return;
	if (t->shared_port) {
		transport_tunnel_close(t);
		l2tpd.stats.hold_sockets_closed++;
		return;
	}
	usl_list_add_tail(&l2tpd.held_sockets, &t->held_link);
}

/*
 * Out of descriptors: the oldest held tunnel with a port of its own gives
 * its socket up, a StopCCN it would still acknowledge weighs less than a
 * tunnel refused.  Its peer, if it retransmits that StopCCN, gets a port
 * unreachable and clears its side when its retries run out.
 */
bool tunnel_reclaim_held_socket(void)
{
	struct tunnel *t;

	if (usl_list_empty(&l2tpd.held_sockets))
		return false;
	t = usl_list_first_entry(&l2tpd.held_sockets, struct tunnel, held_link);
	usl_list_del(&t->held_link);
	transport_tunnel_close(t);
	l2tpd.stats.hold_sockets_reclaimed++;
	log_debug("tunnel %u: held without its socket: descriptors ran out", t->id);
	return true;
}

/*
 * A data frame on the tunnel's socket: the kernel passes up what no kernel
 * session takes.  Routine for a session of this tunnel that is not up yet
 * or came up moments ago (the peer's data plane was quicker than ours);
 * anything else (an unknown session, one up for long: its kernel object
 * may be gone) is worth the warning.
 */
#define DATA_BEFORE_KERNEL_S	10

static bool data_frame_routine(const struct tunnel *t, const uint8_t *buf, size_t len)
{
	const struct session *s;

	if (len < 8 || (buf[0] & 0x80))
		return false;
	s = session_find(usl_get_be32(buf + 4));
	if (s == NULL || s->tunnel != t)
		return false;
	return !s->up || usl_time_cmp(usl_time_sub(usl_timerset_now(l2tpd.timers), s->established),
				      usl_time_s(DATA_BEFORE_KERNEL_S)) < 0;
}

/*
 * Authentication is on and a StopCCN answering our SCCRQ carries no valid
 * digest.  4.3 says drop it (anyone could have sent it), and at first it
 * is dropped: what it said goes into the log and into the failure the
 * operator reads, instead of a bare "no answer".  But an LNS that refuses
 * us without our secret (no peers entry for us, or an implementation that
 * never signs refusals) would leave us waiting for every retransmission of
 * our SCCRQ (71 s with the defaults).  So the attempt ends at once, with
 * what the StopCCN said and "unauthenticated" in the error, when
 *  - it comes from the address and port our SCCRQ went to, and names our
 *    CCID (the header's), which only whoever sees the SCCRQ knows, and
 *  - our SCCRQ has already gone unanswered once (retransmitted): an LNS
 *    that authenticates us answers the first one, so by then no
 *    authenticated answer is on its way.
 * The trade-off: whoever sees our SCCRQ and can send from the LNS's address
 * can end this one attempt (a static tunnel tries again after its backoff),
 * which it could as well by dropping our messages.  The hint about the
 * secret is for digests that do not match; a StopCCN without one is most
 * often a refusal by a peer that has no secret for us.
 */
static void tunnel_note_unauthenticated(struct tunnel *t, const uint8_t *buf, size_t len,
					const struct sockaddr *from, enum l2tp_drop why)
{
	static struct l2tp_msg m;	/* large (hidden AVP scratch): not on the stack */
	struct l2tp_cc_stats st;
	char msg[128] = "", text[192], label[CFG_NAME_MAX + 16];

	if (l2tp_cc_state(t->cc) != L2TP_CC_WAIT_CTL_REPLY ||
	    l2tp_msg_decode(&m, buf, len, false, NULL) != L2TP_DROP_NONE ||
	    m.type != L2TP_MSG_STOPCCN)
		return;
	if (m.result.message.p != NULL)
		usl_str_escape(msg, sizeof(msg), m.result.message.p, m.result.message.len);
	if (t->unauth_note == NULL) {
		text_set(&t->unauth_note, "it sent an %s (dropped): result %u (%s)%s%s%s",
			 UNAUTH_STOPCCN, m.result.result, l2tp_stopccn_result_name(m.result.result),
			 msg[0] ? ": " : "", msg, why == L2TP_DROP_DIGEST_MISMATCH ?
			 "; its digest does not match: check the secret and digest both sides use" :
			 "");
		log_warnx("tunnel %s (peer %s): %s", tunnel_label(t, label, sizeof(label)),
			  sockaddr_ntop(&t->remote.sa), name_str(t->unauth_note));
	}
	l2tp_cc_get_stats(t->cc, &st);
	if (st.retransmits == 0 || !sockaddr_eq_full(from, &t->remote.sa))
		return;
	snprintf(text, sizeof(text), "%s%s%s", UNAUTH_STOPCCN, msg[0] ? ": " : "", msg);
	log_info("tunnel %s (peer %s): our SCCRQ went unanswered but for an %s: giving up "
		 "the attempt", tunnel_label(t, label, sizeof(label)), sockaddr_ntop(&t->remote.sa),
		 UNAUTH_STOPCCN);
	l2tp_cc_discard(t->cc, m.result.result, text);	/* t may be freed here */
}

/* ---- debugging one tunnel or one peer ------------------------------------ */

/* Peers whose tunnels are debugged, present and future: a handful, by address. */
struct debug_peer {
	struct usl_list link;
	union saddr addr;
};
static struct usl_list debug_peers = USL_LIST_INIT(debug_peers);

static struct debug_peer *debug_peer_find(const struct sockaddr *addr)
{
	struct usl_list *pos;

	usl_list_foreach(pos, &debug_peers) {
		struct debug_peer *d = usl_container_of(pos, struct debug_peer, link);

		if (sockaddr_eq_addr(&d->addr.sa, addr))
			return d;
	}
	return NULL;
}

/* One control message of a debugged tunnel, decoded, in the log at info. */
static void tunnel_trace(const struct tunnel *t, const char *dir, const uint8_t *buf, size_t len)
{
	char label[CFG_NAME_MAX + 16], what[900];

	l2tp_msg_describe(buf, len, what, sizeof(what));
	log_info("trace tunnel %s: %s %s", tunnel_label(t, label, sizeof(label)), dir, what);
}

void tunnel_set_debug(struct tunnel *t, bool on)
{
	char label[CFG_NAME_MAX + 16];

	if (t->debug == on)
		return;
	t->debug = on;
	log_info("tunnel %s: debug %s", tunnel_label(t, label, sizeof(label)), on ? "on" : "off");
}

int tunnel_debug_peer(const struct sockaddr *addr, bool on)
{
	struct debug_peer *d = debug_peer_find(addr);
	struct peer *p = peer_find(addr);
	struct usl_list *pos;

	if (on && d == NULL) {
		d = calloc(1, sizeof(*d));
		if (d == NULL)
			return -1;
		memcpy(&d->addr, addr, sockaddr_len(addr));
		usl_list_add_tail(&debug_peers, &d->link);
	} else if (!on && d != NULL) {
		usl_list_del(&d->link);
		free(d);
	}
	log_info("peer %s: debug %s", sockaddr_ntop(addr), on ? "on" : "off");
	if (p != NULL)
		usl_list_foreach(pos, &p->tunnels)
			tunnel_set_debug(usl_container_of(pos, struct tunnel, peer_link), on);
	return 0;
}

json_object *tunnel_debug_json(void)
{
	json_object *o = json_object_new_object(), *peers = json_object_new_array();
	json_object *tunnels = json_object_new_array();
	struct usl_rb_node *node;
	struct usl_list *pos;

	usl_list_foreach(pos, &debug_peers)
		json_object_array_add(peers, json_object_new_string(
			sockaddr_ntop(&usl_container_of(pos, struct debug_peer, link)->addr.sa)));
	for (node = usl_rb_first(&l2tpd.tunnel_order); node != NULL; node = usl_rb_next(node)) {
		const struct tunnel *t = usl_rb_entry(node, struct tunnel, by_order);

		if (t->debug)
			json_object_array_add(tunnels, json_object_new_int64(t->id));
	}
	json_object_object_add(o, "peers", peers);
	json_object_object_add(o, "tunnels", tunnels);
	return o;
}

static void tunnel_input_msg(struct tunnel *t, const uint8_t *buf, size_t len,
			     const struct sockaddr *from);

/* A debugged tunnel's input: traced, and every debug line of its handling logged. */
void tunnel_input(struct tunnel *t, const uint8_t *buf, size_t len, const struct sockaddr *from)
{
	bool was;

	if (!t->debug) {
		tunnel_input_msg(t, buf, len, from);
		return;
	}
	tunnel_trace(t, "rx", buf, len);
	was = log_debug_force(true);
	tunnel_input_msg(t, buf, len, from);
	log_debug_force(was);
}

static void tunnel_input_msg(struct tunnel *t, const uint8_t *buf, size_t len,
			     const struct sockaddr *from)
{
	uint32_t id = t->id;	/* t may be freed inside l2tp_cc_input() */
	bool first = !t->connected;
	union saddr before;
	enum l2tp_drop why;

	if (first) {
		/*
		 * The first answer: follow the port the peer replies from, so that
		 * what the engine sends from inside the call goes there.  Only
		 * tentatively: a datagram the engine drops (any datagram from the
		 * peer's address and another port) must not redirect our SCCRQ.
		 */
		if (!sockaddr_eq_addr(from, (struct sockaddr *)&t->remote)) {
			count_drop(t, L2TP_DROP_WRONG_SOURCE, from);
			return;
		}
		before = t->remote;
		memcpy(&t->remote, from, sockaddr_len(from));
	}
	why = l2tp_cc_input(t->cc, buf, len);
	if (first && why != L2TP_DROP_NONE && tunnel_find(id) == t && !t->connected)
		t->remote = before;
	if (why == L2TP_DROP_NOT_CONTROL && data_frame_routine(t, buf, len)) {
		l2tpd.stats.drops[why]++;
		log_debug("tunnel %u: data frame for session %u before its kernel session", t->id,
			  usl_get_be32(buf + 4));
		return;
	}
	if (why != L2TP_DROP_NONE) {
		count_drop(t, why, from);
		if (why == L2TP_DROP_DIGEST_MISSING || why == L2TP_DROP_DIGEST_MISMATCH)
			tunnel_note_unauthenticated(t, buf, len, from, why);
		return;
	}
	count_rx(buf, len);
	/* the engine may have closed (and freed) the tunnel inside the call */
	if (tunnel_find(id) != t)
		return;
	if (!t->connected && l2tp_cc_peer_ccid(t->cc) != 0)
		transport_tunnel_connect(t, (struct sockaddr *)&t->remote);
	tunnel_index_peer_ccid(t);
	tunnel_check_deadline(t);
	if (l2tpd.shutting_down && l2tp_cc_holding(t->cc)) {
		tunnel_free_held(t);
		return;
	}
	tunnel_hold_sockets(t);
}

/* ---- refusals: answered from the listener, nothing allocated ------------ */

#define REFUSALS_PER_S	50	/* StopCCNs to possibly forged sources, all peers together */

static struct log_ratelimit refuse_rl = LOG_RATELIMIT_INIT(1, REFUSALS_PER_S);
static struct log_ratelimit refuse_log_rl = LOG_RATELIMIT_INIT(10, 10);

static void peer_setup(const struct sockaddr *from, enum l2tp_encap encap,
		       const struct peer_profile **pp, struct tunnel_profile *prof);
static const char *peer_secret(const struct peer_profile *pp, const struct tunnel_profile *prof);

/*
 * Answers an SCCRQ with one StopCCN (never retransmitted) and forgets it.
 * A forged source cannot make us send more than REFUSALS_PER_S datagrams
 * a second in all, and never more than one per SCCRQ.  Signed when the
 * peers entry has a secret and the SCCRQ proves its sender knows it: a LAC
 * that authenticates drops an unsigned one and would wait for its
 * retransmissions to run out.
 */
static void refuse_sccrq(const struct l2tp_rx *rx, const struct l2tp_msg *m,
			 const struct l2tp_result *why, enum l2tp_drop drop)
{
	usl_time now = usl_timerset_now(l2tpd.timers);
	const struct peer_profile *pp;
	struct tunnel_profile prof;
	const char *sec;
	uint8_t out[1024];
	unsigned dropped;
	bool is_signed, has_secret;
	int len;

	l2tpd.stats.drops[drop]++;
	log_warnx_rl(&refuse_log_rl, now, "SCCRQ from %s refused: result %u/%u (%s): %.*s",
		     sockaddr_ntop(rx->from), why->result, why->error,
		     l2tp_stopccn_result_name(why->result), (int)why->message.len,
		     why->message.p ? (const char *)why->message.p : "");
	if (!log_ratelimit_admit(&refuse_rl, now, &dropped)) {
		l2tpd.stats.refusals_suppressed++;
		return;
	}
	peer_setup(rx->from, rx->encap, &pp, &prof);
	sec = peer_secret(pp, &prof);
	len = l2tp_cc_encode_refusal_signed(m, rx->buf, rx->len, (const uint8_t *)sec, strlen(sec),
					    why, out, sizeof(out), &is_signed);
	has_secret = sec[0] != '\0';
	explicit_bzero(&prof, sizeof(prof));
	if (len < 0 || transport_listener_reply(rx, out, (size_t)len) < 0)
		return;
	log_debug("SCCRQ from %s: StopCCN sent%s", sockaddr_ntop(rx->from),
		  is_signed ? ", signed" : has_secret ?
		  ", unsigned (the SCCRQ did not authenticate)" : ", unsigned (no secret)");
	l2tpd.stats.refusals_sent++;
	l2tpd.stats.tx_msgs[L2TP_MSG_STOPCCN]++;
}

static void refusal(struct l2tp_result *r, uint16_t result, uint16_t error, const char *text)
{
	memset(r, 0, sizeof(*r));
	r->result = result;
	r->error = error;
	r->has_error = result == L2TP_STOPCCN_GENERAL_ERROR;
	r->message.p = (const uint8_t *)text;
	r->message.len = (uint16_t)strlen(text);
}

/*
 * The entry's own limit, and for peers no entry names (peer_default) the
 * slots global.reserved_tunnels keeps for the entries' peers: one LAC
 * cannot lock another out.  The StopCCN says which limit.
 */
static bool entry_limit_reached(const struct peer_profile *pp, struct l2tp_result *r)
{
	const struct l2tpd_config *c = l2tpd.conf;
	bool unlisted = pp == &c->peer_default;
	static char text[CFG_NAME_MAX + 96];

	if (pp->max_tunnels && entry_count(pp->name, ENTRY_TUNNELS) >= pp->max_tunnels)
		snprintf(text, sizeof(text), "%s%s: max_tunnels %u reached",
			 unlisted ? "peer_default" : "peers entry ", unlisted ? "" : pp->name,
			 pp->max_tunnels);
	else if (unlisted && c->reserved_tunnels &&
		 l2tpd.n_tunnels >= c->max_tunnels - c->reserved_tunnels)
		snprintf(text, sizeof(text), "max_tunnels %u reached for peers no entry names "
			 "(reserved_tunnels %u kept for the entries' peers)", c->max_tunnels,
			 c->reserved_tunnels);
	else
		return false;
	refusal(r, L2TP_STOPCCN_GENERAL_ERROR, L2TP_ERR_NO_RESOURCES, text);
	return true;
}

/* Policy and limits, before anything is made for the SCCRQ. */
static bool refuse_reason(const struct peer_profile *pp, struct l2tp_result *r,
			  enum l2tp_drop *drop)
{
	*drop = L2TP_DROP_LIMIT;
	if (!pp->accept) {
		refusal(r, L2TP_STOPCCN_NOT_AUTHORIZED, 0, "peer not allowed by configuration");
		*drop = L2TP_DROP_PEER_REFUSED;
		return true;
	}
	if (l2tpd.shutting_down) {
		refusal(r, L2TP_STOPCCN_SHUTTING_DOWN, 0, "shutting down");
		return true;
	}
	if (l2tpd.n_tunnels >= l2tpd.conf->max_tunnels) {
		refusal(r, L2TP_STOPCCN_GENERAL_ERROR, L2TP_ERR_NO_RESOURCES, "max_tunnels reached");
		return true;
	}
	return entry_limit_reached(pp, r);
}

/*
 * The half-open table is full: the peers' oldest half-open connection
 * makes room (a flood of forged SCCRQs then costs each entry its age, and
 * a real peer's SCCCN still arrives in time); our own never go.  False
 * when nothing can be evicted.
 */
static bool half_open_make_room(void)
{
	static struct log_ratelimit rl = LOG_RATELIMIT_INIT(10, 5);
	struct tunnel *old;

	if (l2tpd.n_half_open < l2tpd.conf->max_half_open)
		return true;
	if (usl_list_empty(&l2tpd.half_open_in))
		return false;
	old = usl_list_first_entry(&l2tpd.half_open_in, struct tunnel, connecting_link);
	l2tpd.stats.half_open_evicted++;
	log_warnx_rl(&rl, usl_timerset_now(l2tpd.timers),
		     "max_half_open (%u) reached: dropping the oldest half-open connection, "
		     "tunnel %u from %s", l2tpd.conf->max_half_open, old->id,
		     sockaddr_ntop((struct sockaddr *)&old->remote));
	/* silently: a StopCCN to a source that may be forged only reflects */
	l2tp_cc_discard(old->cc, L2TP_STOPCCN_GENERAL_ERROR, "half-open table full");
	return l2tpd.n_half_open < l2tpd.conf->max_half_open;
}

/*
 * A new SCCRQ from the address and port of a peer's half-open connection on
 * our listener's port: that connection's SCCCN never came, and its SCCRQ
 * may have been forged to hold the path (one tunnel per peer address and
 * port shares the listener's port).  It gives way, silently, as when the
 * half-open table is full.
 */
static void half_open_yield_path(const struct l2tp_rx *rx)
{
	static struct log_ratelimit rl = LOG_RATELIMIT_INIT(10, 5);
	struct tunnel *old = transport_path_holder(rx->to, rx->from);
	char from[64];

	if (old == NULL || old->origin != ORIGIN_PEER ||
	    l2tp_cc_state(old->cc) != L2TP_CC_WAIT_CTL_CONN)
		return;
	l2tpd.stats.half_open_evicted++;
	sockaddr_str(rx->from, from, sizeof(from));
	log_warnx_rl(&rl, usl_timerset_now(l2tpd.timers), "a new SCCRQ from %s takes the path of "
		     "its half-open connection, tunnel %u (no SCCCN came)", from, old->id);
	l2tp_cc_discard(old->cc, L2TP_STOPCCN_GENERAL_ERROR, "replaced by a new SCCRQ");
}

/* ---- simultaneous opens (RFC 3931 5.4.3) -------------------------------- */

/*
 * Our connection to a peer, discarded because the peer's SCCRQ won the tie
 * break (5.4.3 leaves the loser no choice): what opening it again takes.
 * The winner's connection carries it until it is established; should it
 * never be (an SCCRQ forged from the peer's address wins every tie break
 * and never completes), ours is opened again, at most REOPEN_MAX times.
 */
struct tunnel_reopen {
	struct cfg_addr peer, local;
	const struct tunnel_profile *prof;	/* a reference */
	char secret[512];
	unsigned times;
};
#define REOPEN_MAX	3

/* What a discarded tunnel hands to the one that replaces it. */
struct tunnel_heir {
	struct usl_list waiters;
	char *name;
	char *description;		/* goes with the name */
	enum origin origin;
	struct tunnel_reopen *reopen;	/* NULL: nothing to open again */
	/* when held on the peer (peer->heir) until its SCCRQ comes */
	struct usl_timer timer;
	struct peer *peer;
};

/* How long the peer that refused our SCCRQ as tie-break winner may take to send its own. */
#define HEIR_WAIT_S	15

static void reopen_free(struct tunnel_reopen *r)
{
	if (r == NULL)
		return;
	tunnel_profile_put(r->prof);
	explicit_bzero(r->secret, sizeof(r->secret));
	free(r);
}

/* What opening t's connection again takes (NULL when out of memory). */
static struct tunnel_reopen *reopen_capture(const struct tunnel *t)
{
	const struct l2tp_cc_cfg *cfg = l2tp_cc_cfg(t->cc);
	size_t n = cfg->secret_len;
	struct tunnel_reopen *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	if (n > sizeof(r->secret) - 1)
		n = sizeof(r->secret) - 1;
	memcpy(&r->peer.ss, &t->dest_cfg, sizeof(t->dest_cfg));
	r->peer.len = sockaddr_len(&t->dest_cfg.sa);
	memcpy(&r->local.ss, &t->local_cfg, sizeof(t->local_cfg));
	r->local.len = t->local_cfg.sa.sa_family ? sockaddr_len(&t->local_cfg.sa) : 0;
	if (n > 0)
		memcpy(r->secret, cfg->secret, n);
	r->prof = tunnel_profile_get(t->prof);
	return r;
}

static void tunnel_bequeath(struct tunnel *t, struct tunnel_heir *h)
{
	usl_list_init(&h->waiters);
	h->reopen = NULL;
	while (!usl_list_empty(&t->waiters)) {
		struct usl_list *w = t->waiters.next;

		usl_list_del(w);
		usl_list_add_tail(&h->waiters, w);
	}
	h->origin = t->origin;
	h->name = NULL;
	h->description = NULL;
	if (t->name_indexed) {
		usl_hash_remove(&l2tpd.tunnels_by_name, &t->by_name);
		t->name_indexed = false;
		h->name = t->name;
		t->name = NULL;
		h->description = t->description;
		t->description = NULL;
	}
	t->origin = ORIGIN_PEER;	/* no static restart for the discarded one */
}

static void tunnel_inherit(struct tunnel *nt, struct tunnel_heir *h, const char *why);

static void heir_expired(struct usl_timer *tm)
{
	struct tunnel_heir *h = usl_container_of(tm, struct tunnel_heir, timer);
	struct peer *p = h->peer;

	p->heir = NULL;
	tunnel_inherit(NULL, h, "the peer won the tie break but never opened its connection");
	free(h);
	peer_put(p);
}

/*
 * The peer refused our SCCRQ with StopCCN 3: it won a tie break whose
 * SCCRQ has not reached us yet.  What our waiters and name need is kept on
 * the peer (with a reference and a deadline) for the connection it opens.
 */
static void tunnel_await_heir(struct tunnel *t)
{
	struct tunnel_heir *h;

	if (t->peer->heir != NULL || (usl_list_empty(&t->waiters) && !t->name_indexed))
		return;
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return;
	tunnel_bequeath(t, h);
	h->peer = peer_get(&t->peer->addr.sa);	/* the same peer, one more reference */
	t->peer->heir = h;
	usl_timer_init(&h->timer, heir_expired);
	usl_timer_arm(l2tpd.timers, &h->timer, usl_time_s(HEIR_WAIT_S));
	log_info("tunnel %u: %s won the tie break: its connection takes over", t->id,
		 sockaddr_ntop((struct sockaddr *)&t->remote));
}

/* The heir waiting on the peer of this SCCRQ, if any: the caller owns it now. */
static struct tunnel_heir *heir_take(const struct sockaddr *from)
{
	struct peer *p = peer_find(from);
	struct tunnel_heir *h = p ? p->heir : NULL;

	if (h == NULL)
		return NULL;
	p->heir = NULL;
	usl_timer_cancel(&h->timer);
	return h;
}

/* nt (NULL when it could not be made) takes over h's waiters and name. */
static void tunnel_inherit(struct tunnel *nt, struct tunnel_heir *h, const char *why)
{
	struct usl_list *pos, *tmp;

	if (nt == NULL) {
		struct l2tpd_event ev = { .kind = EV_WAITERS, .waiters = &h->waiters,
					  .st = CTL_E_PEER, .err = why };

		if (!usl_list_empty(&h->waiters))
			event_publish(&ev);
		if (h->origin == ORIGIN_CONFIG && h->name != NULL)
			tunnel_released(NULL, h->name, false);
		free(h->name);
		free(h->description);
		reopen_free(h->reopen);
		return;
	}
	if (nt->reopen == NULL)
		nt->reopen = h->reopen;
	else
		reopen_free(h->reopen);
	usl_list_foreach_safe(pos, tmp, &h->waiters) {
		usl_list_del(pos);
		usl_list_add_tail(&nt->waiters, pos);
	}
	if (h->name != NULL && nt->name == NULL && tunnel_find_name(h->name) == NULL) {
		nt->origin = h->origin;
		tunnel_set_name(nt, h->name);
		free(nt->description);
		nt->description = h->description;
		h->description = NULL;
		log_info("tunnel %u takes over the name %s (simultaneous open: %s)", nt->id,
			 h->name, why);
		event_emit(EV_TUNNEL_INHERITED, nt, NULL, NULL);
	}
	free(h->name);
	free(h->description);
}

/* Opens our connection again for h's waiters and name (h->reopen: how); h is settled. */
static void tunnel_reopen_own(struct tunnel_heir *h, const char *why)
{
	struct tunnel_reopen *r = h->reopen;
	struct tunnel *nt = NULL;
	enum ctl_status st;
	char err[256] = "out of memory";

	h->reopen = NULL;
	if (r != NULL && r->times >= REOPEN_MAX)
		snprintf(err, sizeof(err), "%s, %u times", why, REOPEN_MAX);
	else if (r != NULL && r->prof != NULL && !l2tpd.shutting_down && ++r->times)
		nt = tunnel_connect(&r->peer, &r->local, r->prof, NULL, NULL, r->secret, h->origin,
				    &st, err, sizeof(err));
	tunnel_inherit(nt, h, nt ? why : err);
	if (nt == NULL || nt->reopen != NULL)
		reopen_free(r);
	else
		nt->reopen = r;
}

/* Equal tie breakers: both sides discard and open again with new values. */
static void tunnel_restart(struct tunnel *ours)
{
	struct tunnel_reopen *r = ours->reopen ? ours->reopen : reopen_capture(ours);
	struct tunnel_heir heir;

	ours->reopen = NULL;
	tunnel_bequeath(ours, &heir);
	heir.reopen = r;
	l2tp_cc_discard(ours->cc, L2TP_STOPCCN_ALREADY_EXISTS, "equal tie breakers");
	tunnel_reopen_own(&heir, "equal tie breakers");
}

/*
 * The winner of a tie break we lost never came up (its SCCCN never came: an
 * SCCRQ forged from the peer's address wins every tie break): our own
 * connection, with t's waiters and name, is opened again.
 */
static void tunnel_reopen_after_heir(struct tunnel *t)
{
	struct tunnel_reopen *r = t->reopen;
	struct tunnel_heir heir;

	t->reopen = NULL;
	tunnel_bequeath(t, &heir);
	heir.reopen = r;
	if (r->times < REOPEN_MAX)
		log_info("tunnel %u: the connection that won the tie break against ours never came "
			 "up: opening ours to %s again (%u of at most %u)", t->id,
			 sockaddr_ntop(&t->remote.sa), r->times + 1, REOPEN_MAX);
	tunnel_reopen_own(&heir, "the tie break's winner never came up");
}

/*
 * An SCCRQ from a peer towards which ours waits for its SCCRP.  Returns
 * true when theirs is handled (refused, or dropped for a restart); else the
 * caller accepts it, and *heir holds what our discarded tunnel leaves.
 */
static bool tunnel_tie_break(const struct l2tp_rx *rx, const struct l2tp_msg *m,
			     struct tunnel_heir *heir, bool *have_heir)
{
	struct peer *p = peer_find(rx->from);
	struct tunnel *ours;
	struct tunnel_reopen *reopen;
	struct l2tp_result r;

	*have_heir = false;
	if (p == NULL || usl_list_empty(&p->connecting))
		return false;
	ours = usl_list_first_entry(&p->connecting, struct tunnel, connecting_link);
	switch (l2tp_cc_tie_break(ours->cc, m)) {
	case L2TP_TIE_NONE:
		return false;
	case L2TP_TIE_WE_WIN:
		log_info("tunnel %u: won the tie breaker against %s", ours->id,
			 sockaddr_ntop(rx->from));
		refusal(&r, L2TP_STOPCCN_ALREADY_EXISTS, 0, "won tie breaker");
		refuse_sccrq(rx, m, &r, L2TP_DROP_LIMIT);
		return true;
	case L2TP_TIE_WE_LOSE:
		log_info("tunnel %u: lost the tie breaker to %s", ours->id,
			 sockaddr_ntop(rx->from));
		reopen = ours->reopen ? ours->reopen : reopen_capture(ours);
		ours->reopen = NULL;
		tunnel_bequeath(ours, heir);
		heir->reopen = reopen;
		*have_heir = true;
		/* ours (and perhaps p) is freed here: neither is used again */
		l2tp_cc_discard(ours->cc, L2TP_STOPCCN_ALREADY_EXISTS, "lost tie breaker");
		return false;
	case L2TP_TIE_RESTART:
		log_info("tunnel %u: equal tie breakers with %s: opening again", ours->id,
			 sockaddr_ntop(rx->from));
		tunnel_restart(ours);
		return true;
	}
	return false;
}

/* ---- the listener ------------------------------------------------------- */

/* The profile and engine settings an SCCRQ from this peer would get. */
static void peer_setup(const struct sockaddr *from, enum l2tp_encap encap,
		       const struct peer_profile **pp, struct tunnel_profile *prof)
{
	const struct tunnel_profile *tp;

	*pp = config_match_peer(l2tpd.conf, from);
	tp = config_tunnel_profile(l2tpd.conf, (*pp)->tunnel_profile);
	*prof = tp ? *tp : l2tpd.conf->tunnel_profiles[0];
	prof->encap = encap;
	/* answered from the listener's port (shared) or one of its own */
	prof->udp_src_port = l2tpd.conf->responder_port;
}

static const char *peer_secret(const struct peer_profile *pp, const struct tunnel_profile *prof)
{
	return pp->secret[0] ? pp->secret : prof->secret[0] ? prof->secret : l2tpd.conf->secret;
}

void tunnel_peer_profile(const struct tunnel *t, struct tunnel_profile *out)
{
	const struct peer_profile *pp;

	peer_setup(&t->remote.sa, t->encap, &pp, out);
}

/* A static session's definition by name, in whichever static tunnel holds it. */
static const struct static_session *session_definition(const struct l2tpd_config *c,
						       const struct static_tunnel *first,
						       const char *name)
{
	const struct static_session *ss = first ? config_static_session(first, name) : NULL;

	for (unsigned i = 0; ss == NULL && i < c->n_tunnels; i++)
		ss = config_static_session(&c->tunnels[i], name);
	return ss;
}

void tunnel_describe(struct tunnel *t, const struct l2tpd_config *c)
{
	const struct static_tunnel *st = NULL;
	const struct peer_profile *pp;
	struct usl_list *pos;

	if (t->origin == ORIGIN_CONFIG && t->name != NULL)
		st = config_static_tunnel(c, t->name);
	if (st != NULL)
		text_copy(&t->description, st->description);
	else if (t->origin == ORIGIN_PEER && t->peer_entry != NULL &&
		 (pp = config_peer_by_name(c, t->peer_entry)) != NULL)
		text_copy(&t->description, pp->description);
	usl_list_foreach(pos, &t->sessions) {
		struct session *s = usl_container_of(pos, struct session, tunnel_link);
		const struct static_session *ss;

		if (s->origin != ORIGIN_CONFIG || s->name == NULL)
			continue;
		ss = session_definition(c, st, s->name);
		if (ss != NULL)
			text_copy(&s->description, ss->description);
	}
}

/* The secret a peers entry's tunnels authenticate with, in configuration c. */
static const char *entry_secret(const struct l2tpd_config *c, const struct peer_profile *pp)
{
	const struct tunnel_profile *tp = config_tunnel_profile(c, pp->tunnel_profile);

	return pp->secret[0] ? pp->secret : tp != NULL && tp->secret[0] ? tp->secret : c->secret;
}

uint16_t tunnel_reaccept(const struct tunnel *t, const struct l2tpd_config *old, char *why,
			 size_t len)
{
	const struct peer_profile *pp = config_match_peer(l2tpd.conf, &t->remote.sa);
	const struct peer_profile *opp = config_peer_by_name(old, name_str(t->peer_entry));
	const char *was = name_str(t->peer_entry);

	if (!pp->accept) {
		snprintf(why, len, "peers entry %s does not accept it any more",
			 pp == &l2tpd.conf->peer_default ? "peer_default" : pp->name);
		return L2TP_STOPCCN_NOT_AUTHORIZED;
	}
	if (strcmp(pp->name, was) != 0) {
		snprintf(why, len, "it now matches peers entry %s, not %s", pp->name, was);
		return L2TP_STOPCCN_NORMAL;
	}
	if (opp != NULL && strcmp(entry_secret(l2tpd.conf, pp), entry_secret(old, opp)) != 0) {
		snprintf(why, len, "the secret of peers entry %s changed", pp->name);
		return L2TP_STOPCCN_NOT_AUTHORIZED;
	}
	return 0;
}

/* Hands h (if any) to t, or fails it; a heir held on the peer is freed. */
static void heir_settle(struct tunnel_heir *h, struct tunnel_heir *held, struct tunnel *t,
			const char *why)
{
	struct peer *p;

	if (h == NULL)
		return;
	if (t == NULL && h->reopen != NULL)
		tunnel_reopen_own(h, why);	/* the winner was refused: ours again */
	else
		tunnel_inherit(t, h, why);
	if (held == NULL)
		return;
	p = held->peer;
	free(held);
	peer_put(p);	/* t, if made, holds its own reference */
}

/*
 * A new control connection: the SCCRQ passed policy and validation.  For a
 * recovery connection (RFC 4951), old is the connection it recovers: no
 * tie break (recovery connections never cross ours), and its SCCRP
 * suggests old's sequence numbers.
 */
static void tunnel_accept(const struct l2tp_rx *rx, const struct l2tp_msg *m,
			  const struct peer_profile *pp, const struct tunnel_profile *prof,
			  struct tunnel *old)
{
	struct tunnel_heir heir, *h = NULL, *held;
	struct l2tp_result r;
	union saddr local;
	struct tunnel *t;
	bool have_heir;
	uint32_t id;
	char err[256], secret[CFG_SECRET_MAX];

	have_heir = false;
	if (old == NULL && tunnel_tie_break(rx, m, &heir, &have_heir))
		return;
	if (have_heir)
		h = &heir;
	held = h == NULL ? heir_take(rx->from) : NULL;
	if (held != NULL)
		h = held;
	if (rx->encap == L2TP_ENCAP_UDP)
		half_open_yield_path(rx);
	if (!half_open_make_room()) {
		refusal(&r, L2TP_STOPCCN_GENERAL_ERROR, L2TP_ERR_NO_RESOURCES,
			"max_half_open reached");
		refuse_sccrq(rx, m, &r, L2TP_DROP_LIMIT);
		heir_settle(h, held, NULL, "max_half_open reached");
		return;
	}
	/* answer from an ephemeral port (or 1701 if the profile says so) */
	memcpy(&local, rx->to, sockaddr_len(rx->to));
	sockaddr_set_port((struct sockaddr *)&local, 0);
	if (old != NULL)
		cc_secret_str(old->cc, secret, sizeof(secret));
	t = tunnel_new(rx->from, (struct sockaddr *)&local, prof,
		       old != NULL ? secret : peer_secret(pp, prof), ORIGIN_PEER, NULL,
		       err, sizeof(err));
	explicit_bzero(secret, sizeof(secret));
	if (t == NULL) {
		refusal(&r, L2TP_STOPCCN_GENERAL_ERROR, L2TP_ERR_NO_RESOURCES, err);
		refuse_sccrq(rx, m, &r, L2TP_DROP_NO_RESOURCES);
		heir_settle(h, held, NULL, err);
		return;
	}
	if (pp->session_profile[0])
		t->session_profile = strdup(pp->session_profile);
	text_copy(&t->description, pp->description);
	t->peer_entry = strdup(pp->name);
	if (t->peer_entry == NULL || !entry_count_add(t->peer_entry, ENTRY_TUNNELS)) {
		free(t->peer_entry);
		t->peer_entry = NULL;	/* counted nowhere: it never starts */
		refusal(&r, L2TP_STOPCCN_GENERAL_ERROR, L2TP_ERR_NO_RESOURCES, "out of memory");
		refuse_sccrq(rx, m, &r, L2TP_DROP_NO_RESOURCES);
		heir_settle(h, held, NULL, "out of memory");
		tunnel_free(t);
		return;
	}
	if (rx->encap == L2TP_ENCAP_UDP)
		transport_tunnel_connect(t, rx->from);
	heir_settle(h, held, t, "lost tie breaker");
	if (old != NULL) {
		t->recovery_of = old->id;
		old->recovered_by = t->id;
		l2tp_cc_set_recovery_of(t->cc, old->cc);
	}
	event_emit(EV_TUNNEL_CREATED, t, NULL, NULL);
	id = t->id;
	tunnel_input(t, rx->buf, rx->len, rx->from);
	/* validated, so the engine took it; should it not, nothing may linger */
	t = tunnel_find(id);
	if (t != NULL && l2tp_cc_state(t->cc) == L2TP_CC_IDLE) {
		log_warnx("tunnel %u: SCCRQ from %s not taken by the engine", id,
			  sockaddr_ntop(rx->from));
		tunnel_free(t);
	}
}

/*
 * RFC 4951, the helping side: which of our connections a recovery SCCRQ
 * (authenticated already, as any SCCRQ from this peer) may recover, or
 * NULL with why.  It must name one of ours by both CCIDs, come from its
 * peer's address, and both ends must have advertised failover; one
 * recovery at a time.  The same words for every unknown connection: the
 * answer tells a prober nothing about which IDs exist.
 */
static struct tunnel *recovery_target(const struct l2tp_rx *rx, const struct l2tp_msg *m,
				      const char **why)
{
	struct tunnel *old = tunnel_find(m->recover_peer_ccid);

	*why = "no such control connection to recover";
	if (old == NULL || old->cc == NULL || old->recovery_of != 0 || old->closing ||
	    l2tp_cc_peer_ccid(old->cc) != m->recover_ccid ||
	    !sockaddr_eq_addr(&old->remote.sa, rx->from) ||
	    l2tp_cc_state(old->cc) != L2TP_CC_ESTABLISHED)
		return NULL;
	if (!l2tp_cc_failover_ok(old->cc)) {
		*why = "failover was not negotiated on that connection";
		return NULL;
	}
	if (old->recovered_by != 0 && tunnel_find(old->recovered_by) != NULL) {
		*why = "a recovery of that connection is under way";
		return NULL;
	}
	return old;
}

/*
 * A recovery SCCRQ is authenticated as the connection it recovers was:
 * with its secret, whatever the peers entries say now (RFC 4951).
 */
static void recovery_accept(const struct l2tp_rx *rx, const struct l2tp_msg *m,
			    const struct peer_profile *pp)
{
	struct l2tp_result r;
	struct tunnel *old;
	enum l2tp_drop drop;
	const char *why;

	old = recovery_target(rx, m, &why);
	if (old == NULL) {
		l2tpd.stats.failover_refused++;
		refusal(&r, L2TP_STOPCCN_GENERAL_ERROR, L2TP_ERR_BAD_VALUE, why);
		refuse_sccrq(rx, m, &r, L2TP_DROP_PEER_REFUSED);
		return;
	}
	drop = l2tp_cc_check_sccrq(l2tp_cc_cfg(old->cc), m, rx->buf, rx->len, &r);
	if (drop != L2TP_DROP_NONE) {
		l2tpd.stats.failover_refused++;
		if (r.result != 0)
			refuse_sccrq(rx, m, &r, drop);
		else	/* forged or corrupt: no answer at all */
			count_drop(NULL, drop, rx->from);
		return;
	}
	log_info("tunnel %u (peer %s): recovery SCCRQ (RFC 4951)", old->id,
		 sockaddr_ntop(rx->from));
	tunnel_accept(rx, m, pp, old->prof, old);
}

/*
 * A control message for a CCID we do not know: most often a connection a
 * restart made us forget, whose peer keeps sending its HELLOs and would
 * notice only when their retransmissions run out (a minute or more).  It
 * gets a StopCCN that names the CCID (l2tp_cc_encode_unknown_ccid), which
 * makes our kind of peer probe that connection at once.  Never for a ZLB,
 * an ACK or a StopCCN (two forgetful peers would answer each other), never
 * larger than what it answers (a source forged to aim us at a victim gains
 * nothing: a bare HELLO of 20 octets gets no answer, an authenticated one
 * does), and within the refusals' rate (REFUSALS_PER_S in all).
 */
static void answer_unknown_ccid(const struct l2tp_rx *rx, const struct l2tp_msg *hdr)
{
	unsigned type = wire_msg_type(rx->buf, rx->len), dropped;
	usl_time now = usl_timerset_now(l2tpd.timers);
	uint8_t out[128];
	int len;

	if (type == L2TP_MSG_ZLB || type == L2TP_MSG_ACK || type == L2TP_MSG_STOPCCN)
		return;
	len = l2tp_cc_encode_unknown_ccid(hdr, out, sizeof(out));
	if (len < 0 || (size_t)len > rx->len)
		return;
	if (!log_ratelimit_admit(&refuse_rl, now, &dropped)) {
		l2tpd.stats.refusals_suppressed++;
		return;
	}
	if (transport_listener_reply(rx, out, (size_t)len) < 0)
		return;
	l2tpd.stats.tx_msgs[L2TP_MSG_STOPCCN]++;
	log_debug("%s for unknown tunnel %u from %s: StopCCN sent", l2tp_msg_type_name((uint16_t)type),
		  hdr->ccid, sockaddr_ntop(rx->from));
}

/*
 * A StopCCN with CCID 0 and the peer's Assigned CCID of one of our
 * connections: the peer says it does not know that connection (it
 * restarted: answer_unknown_ccid on its side).  Unauthenticated (it
 * cannot sign it) and perhaps forged, so it is not believed: the
 * connection is probed now, a HELLO with FORGOTTEN_RETRIES
 * retransmissions, and cleared only when they go unanswered.  A forger
 * gains a HELLO that a live peer answers.
 */
#define FORGOTTEN_RETRIES	2

static void tunnel_forgotten(const struct l2tp_rx *rx, const struct l2tp_msg *m)
{
	static struct log_ratelimit rl = LOG_RATELIMIT_INIT(10, 5);
	struct tunnel *t = tunnel_find_peer_ccid(rx->from, m->assigned_ccid);
	char label[CFG_NAME_MAX + 16];
	usl_time by;
	int rc;

	if (t == NULL || !t->up || t->closing || l2tp_cc_state(t->cc) != L2TP_CC_ESTABLISHED) {
		count_drop(NULL, L2TP_DROP_ZERO_CCID, rx->from);
		return;
	}
	rc = l2tp_cc_probe(t->cc, FORGOTTEN_RETRIES, &by);
	if (rc < 0)
		return;
	if (rc == 0)
		l2tp_cc_probe_cut(t->cc, FORGOTTEN_RETRIES);
	log_info_rl(&rl, usl_timerset_now(l2tpd.timers), "tunnel %s (peer %s): a StopCCN says the "
		    "peer has no connection %u (result %u/%u, unauthenticated): restarted? probing "
		    "the connection (cleared if %u retransmissions go unanswered)",
		    tunnel_label(t, label, sizeof(label)), sockaddr_ntop(rx->from), m->assigned_ccid,
		    m->result.result, m->result.error, FORGOTTEN_RETRIES);
}

/*
 * A message for an existing tunnel that reached the listener: only from
 * that tunnel's peer address and port.  The one exception is the first
 * answer to our SCCRQ, which may come from another port (4.1.2.2).
 */
static void listener_to_tunnel(const struct l2tp_rx *rx, const struct l2tp_msg *hdr)
{
	struct tunnel *t = tunnel_find(hdr->ccid);
	bool first_answer;
	uint32_t id;

	if (t == NULL) {
		count_drop(NULL, L2TP_DROP_UNKNOWN_CCID, rx->from);
		answer_unknown_ccid(rx, hdr);
		return;
	}
	first_answer = l2tp_cc_state(t->cc) == L2TP_CC_WAIT_CTL_REPLY &&
		       l2tp_cc_peer_ccid(t->cc) == 0;
	if (!sockaddr_eq_addr(rx->from, (struct sockaddr *)&t->remote) ||
	    (!first_answer && !sockaddr_eq_full(rx->from, (struct sockaddr *)&t->remote))) {
		count_drop(t, L2TP_DROP_WRONG_SOURCE, rx->from);
		return;
	}
	id = t->id;
	tunnel_input(t, rx->buf, rx->len, rx->from);
	if (first_answer && tunnel_find(id) == t && l2tp_cc_peer_ccid(t->cc) != 0 &&
	    !sockaddr_eq_full(rx->from, (struct sockaddr *)&t->remote))
		transport_tunnel_connect(t, rx->from);	/* follow the port it answers from */
}

void tunnel_input_listener(const struct l2tp_rx *rx)
{
	static struct l2tp_msg msgbuf;	/* large (hidden AVP scratch): not on the stack */
	const struct peer_profile *pp;
	struct tunnel_profile prof;
	struct l2tp_cc_cfg cfg;
	struct l2tp_secret secret;
	struct l2tp_msg *m = &msgbuf;
	struct l2tp_result r;
	const char *sec;
	struct tunnel *t;
	enum l2tp_drop why, drop;

	why = l2tp_msg_decode_header(m, rx->buf, rx->len, false);
	if (why != L2TP_DROP_NONE) {
		count_drop(NULL, why, rx->from);
		return;
	}
	if (m->ccid != 0) {
		listener_to_tunnel(rx, m);
		return;
	}
	peer_setup(rx->from, rx->encap, &pp, &prof);
	sec = peer_secret(pp, &prof);
	secret.p = (const uint8_t *)sec;
	secret.len = strlen(sec);
	why = l2tp_msg_decode(m, rx->buf, rx->len, false, secret.len ? &secret : NULL);
	if (why == L2TP_DROP_NONE && m->type == L2TP_MSG_STOPCCN &&
	    l2tp_msg_has(m, L2TP_AVP_ASSIGNED_CCID)) {
		tunnel_forgotten(rx, m);
		return;
	}
	/* a ZLB (no Message Type) too: the LAC acknowledging our refusal */
	if ((m->type_ok || why == L2TP_DROP_NONE) && m->type != L2TP_MSG_SCCRQ)
		why = L2TP_DROP_ZERO_CCID;
	if (why != L2TP_DROP_NONE && m->type_ok && m->bad == why && !refuse_reason(pp, &r, &drop)) {
		/* a malformed SCCRQ from a peer we would talk to: say why, once */
		refusal(&r, L2TP_STOPCCN_GENERAL_ERROR,
			why == L2TP_DROP_MISSING_AVP ? L2TP_ERR_BAD_VALUE : L2TP_ERR_BAD_LENGTH,
			l2tp_drop_name(why));
		refuse_sccrq(rx, m, &r, why);
		return;
	}
	if (why != L2TP_DROP_NONE) {
		count_drop(NULL, why, rx->from);
		return;
	}
	/* a retransmitted SCCRQ belongs to the tunnel it already created */
	t = tunnel_find_peer_ccid(rx->from, m->assigned_ccid);
	if (t != NULL) {
		tunnel_input(t, rx->buf, rx->len, rx->from);
		return;
	}
	/* the connection it recovers decides, not the peers entry (RFC 4951) */
	if (l2tp_msg_has(m, L2TP_AVP_TUNNEL_RECOVERY)) {
		recovery_accept(rx, m, pp);
		return;
	}
	if (refuse_reason(pp, &r, &why)) {
		refuse_sccrq(rx, m, &r, why);
		return;
	}
	cc_cfg_from_profile(&cfg, &prof, rx->encap, sec);
	why = l2tp_cc_check_sccrq(&cfg, m, rx->buf, rx->len, &r);
	if (why != L2TP_DROP_NONE) {
		if (r.result != 0)
			refuse_sccrq(rx, m, &r, why);
		else	/* forged or corrupt: no answer at all */
			count_drop(NULL, why, rx->from);
		return;
	}
	tunnel_accept(rx, m, pp, &prof, NULL);
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
	json_add_int(o, "tx_window", st.tx_window);
	json_add_int(o, "in_flight", st.in_flight);
	if (st.rx_no_serial)
		json_add_int(o, "rx_no_serial", (int64_t)st.rx_no_serial);
	return o;
}

/* "addr:port" over UDP; over IP there is no port to show, only the address. */
static void tunnel_addr_str(const struct tunnel *t, const union saddr *sa, char *buf, size_t len)
{
	const void *in = sa->sa.sa_family == AF_INET6 ? (const void *)&sa->in6.sin6_addr
						       : (const void *)&sa->in4.sin_addr;

	if (t->encap == L2TP_ENCAP_UDP || inet_ntop(sa->sa.sa_family, in, buf, (socklen_t)len) == NULL)
		sockaddr_str(&sa->sa, buf, len);
}

void tunnel_peer_str(const struct tunnel *t, char *buf, size_t len)
{
	tunnel_addr_str(t, &t->remote, buf, len);
}

/* The transport settings the tunnel's socket has (read back), or its profile's without one. */
static json_object *transport_json(const struct tunnel *t)
{
	struct transport_settings ts;
	json_object *o;

	if (transport_tunnel_settings(t, &ts) < 0)
		return NULL;
	o = json_object_new_object();
	json_add_int(o, "dscp", ts.dscp);
	json_add_int(o, "ttl", ts.ttl);
	json_add_str(o, "df", ts.df);
	json_add_str(o, "bind_device", ts.bind_device);
	json_add_str(o, "socket", ts.own_socket ? "own" : "listener");
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
	json_add_str(o, "description", name_str(t->description));
	json_add_str(o, "state", l2tp_cc_state_name(l2tp_cc_state(t->cc)));
	tunnel_addr_str(t, &t->remote, a, sizeof(a));
	json_add_str(o, "peer", a);
	tunnel_addr_str(t, &t->local, a, sizeof(a));
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
	if (t->peer_entry != NULL)
		json_add_str(o, "peer_entry", t->peer_entry);
	if (t->pool != NULL)
		json_add_str(o, "pool", t->pool);
	json_add_str(o, "auth", l2tp_cc_auth_on(t->cc) ? config_digest_name(t->prof->digest) : "none");
	if (l2tp_cc_failover_ok(t->cc))
		json_add_str(o, "failover", l2tp_failover_state_name(l2tp_cc_failover_state(t->cc)));
	if (t->recovery_of != 0)
		json_add_int(o, "recovery_of", t->recovery_of);
	if (t->debug)
		json_object_object_add(o, "debug", json_object_new_boolean(1));
	if (detail) {
		const struct l2tp_cc_cfg *cc = l2tp_cc_cfg(t->cc);

		/* what the connection runs with: a reload may have changed them live */
		json_add_int(o, "hello_interval_ms", usl_time_is_never(cc->hello_interval) ? 0 :
			     usl_time_to_ms(cc->hello_interval));
		json_add_int(o, "retransmit_initial_ms", usl_time_to_ms(cc->rtx_initial));
		json_add_int(o, "retransmit_cap_ms", usl_time_to_ms(cc->rtx_cap));
		json_add_int(o, "max_retries", cc->max_retries);
		json_object *tr = transport_json(t);
		if (tr != NULL)
			json_object_object_add(o, "transport", tr);
		json_object_object_add(o, "counters", tunnel_counters_json(t));
		json_object *dp = l2tpd.dp->describe ? l2tpd.dp->describe(t, NULL) : NULL;
		if (dp != NULL)
			json_object_object_add(o, "dataplane", dp);
	}
	return o;
}

/* ---- reload: settings a live connection takes ------------------------------ */

bool tunnel_reconfigure(struct tunnel *t, const struct tunnel_profile *p, char *changed,
			size_t len, const char **restart)
{
	static char why[200];	/* the reason, while the caller reads it */
	const struct tunnel_profile *np;
	struct l2tp_cc_cfg cfg;
	char err[160];

	changed[0] = '\0';
	*restart = tunnel_profile_restart_field(t->prof, p);
	if (*restart != NULL)
		return false;
	tunnel_profile_live_changes(t->prof, p, changed, len);
	if (changed[0] == '\0')
		return true;
	np = tunnel_profile_get(p);
	if (np == NULL) {
		*restart = "out of memory";
		return false;
	}
	/* dscp, ttl, df: the socket's, which the kernel's data packets take too */
	if (transport_tunnel_reapply(t, np, err, sizeof(err)) < 0) {
		tunnel_profile_put(np);
		snprintf(why, sizeof(why), "the socket refused the new values: %s", err);
		*restart = why;
		return false;
	}
	/* the secret and the rest are the tunnel's own: only the live fields are read */
	cc_cfg_from_profile(&cfg, np, t->encap, "");
	if (l2tp_cc_reconfigure(t->cc, &cfg) < 0) {
		tunnel_profile_put(np);
		*restart = "the protocol engine refused the new values";
		return false;
	}
	tunnel_profile_put(t->prof);
	t->prof = np;
	return true;
}

/* ---- restart handover (handover.c) -------------------------------------- */

bool tunnel_can_handover(const struct tunnel *t)
{
	return t->up && !t->closing && t->reopen == NULL && l2tp_cc_can_save(t->cc);
}

static void pack_saddr(struct usl_pack *w, const union saddr *sa)
{
	usl_pack_bytes(w, sa, sizeof(*sa));
}

static void unpack_saddr(struct usl_unpack *r, union saddr *sa)
{
	usl_unpack_bytes(r, sa, sizeof(*sa));
	if (sa->sa.sa_family != AF_UNSPEC && sa->sa.sa_family != AF_INET &&
	    sa->sa.sa_family != AF_INET6)
		r->bad = true;
}

/* A data plane record, length first, so that a reader skips it whole. */
static size_t dp_record_begin(struct usl_pack *w)
{
	return usl_pack_reserve(w, 4);
}

static void dp_record_end(struct usl_pack *w, size_t off)
{
	usl_pack_patch_u32(w, off, (uint32_t)(w->len - off - 4));
}

void tunnel_save(struct tunnel *t, struct usl_pack *w)
{
	struct usl_list *pos;
	uint32_t n = 0;
	size_t off;

	usl_pack_u32(w, t->id);
	usl_pack_str(w, t->name);
	usl_pack_str(w, t->session_profile);
	usl_pack_str(w, t->peer_entry);
	usl_pack_str(w, t->pool);
	usl_pack_str(w, t->description);
	usl_pack_str(w, t->prof->name);
	usl_pack_u8(w, (uint8_t)t->origin);
	usl_pack_u8(w, (uint8_t)t->encap);
	pack_saddr(w, &t->local);
	pack_saddr(w, &t->remote);
	pack_saddr(w, &t->dest_cfg);
	pack_saddr(w, &t->local_cfg);
	usl_pack_u8(w, t->connected);
	usl_pack_u8(w, t->shared_port);
	usl_pack_u64(w, (uint64_t)t->created.ns);
	usl_pack_u64(w, (uint64_t)t->established.ns);
	usl_pack_u32(w, t->config_id);
	if (l2tp_cc_save(t->cc, w) < 0)
		w->failed = true;
	off = dp_record_begin(w);
	if (l2tpd.dp->tunnel_save != NULL)
		l2tpd.dp->tunnel_save(t, w);
	dp_record_end(w, off);
	usl_list_foreach(pos, &t->sessions)
		n += session_can_handover(usl_container_of(pos, struct session, tunnel_link));
	usl_pack_u32(w, n);
	usl_list_foreach(pos, &t->sessions) {
		struct session *s = usl_container_of(pos, struct session, tunnel_link);

		if (session_can_handover(s))
			session_save(s, w);
	}
}

/* The daemon's fields of a handed-over tunnel; false when malformed. */
static bool tunnel_restore_fields(struct tunnel *t, struct usl_unpack *r, char *prof, size_t plen)
{
	uint8_t origin, encap;

	t->id = usl_unpack_u32(r);
	t->name = usl_unpack_str(r, CFG_NAME_MAX, NULL);
	t->session_profile = usl_unpack_str(r, CFG_NAME_MAX, NULL);
	t->peer_entry = usl_unpack_str(r, CFG_NAME_MAX, NULL);
	t->pool = usl_unpack_str(r, CFG_NAME_MAX, NULL);
	t->description = usl_unpack_str(r, CFG_DESC_MAX, NULL);
	usl_unpack_str_to(r, prof, plen);
	origin = usl_unpack_u8(r);
	encap = usl_unpack_u8(r);
	unpack_saddr(r, &t->local);
	unpack_saddr(r, &t->remote);
	unpack_saddr(r, &t->dest_cfg);
	unpack_saddr(r, &t->local_cfg);
	t->connected = usl_unpack_bool(r);
	t->shared_port = usl_unpack_bool(r);
	t->created = usl_time_ns((int64_t)usl_unpack_u64(r));
	t->established = usl_time_ns((int64_t)usl_unpack_u64(r));
	t->config_id = usl_unpack_u32(r);
	if (r->bad || t->id == 0 || origin > ORIGIN_PEER ||
	    (encap != L2TP_ENCAP_UDP && encap != L2TP_ENCAP_IP) ||
	    t->remote.sa.sa_family == AF_UNSPEC)
		return false;
	t->origin = (enum origin)origin;
	t->encap = (enum l2tp_encap)encap;
	t->local_len = sockaddr_len(&t->local.sa);
	t->remote_len = sockaddr_len(&t->remote.sa);
	return true;
}

static void tunnel_restore_free(struct tunnel *t)
{
	tunnel_free_texts(t);
	tunnel_profile_put(t->prof);
	free(t);
}

/* Into the indexes and counts, as tunnel_new() and the way up do. */
static bool tunnel_restore_index(struct tunnel *t)
{
	t->peer = peer_get(&t->remote.sa);
	if (t->peer == NULL)
		return false;
	usl_list_add_tail(&t->peer->tunnels, &t->peer_link);
	if (l2tpd.conf->snmp_config_id && t->config_id != 0 &&
	    !idalloc_take(&t->peer->config_ids, t->config_id))
		t->config_id = idalloc_get(&t->peer->config_ids);
	else if (!l2tpd.conf->snmp_config_id)
		t->config_id = 0;
	usl_hash_insert(&l2tpd.tunnels, &t->by_id, usl_hash_u32(t->id));
	usl_rb_insert(&l2tpd.tunnel_order, &t->by_order, tunnel_order_cmp);
	snmpagent_tunnel_added(t);
	l2tpd.n_tunnels++;
	tunnel_count_changed();
	if (t->name != NULL) {
		usl_hash_insert(&l2tpd.tunnels_by_name, &t->by_name,
				usl_hash_bytes(t->name, strlen(t->name), 0));
		t->name_indexed = true;
	}
	tunnel_index_peer_ccid(t);
	if (t->peer_entry != NULL && !entry_count_add(t->peer_entry, ENTRY_TUNNELS)) {
		free(t->peer_entry);	/* counted nowhere */
		t->peer_entry = NULL;
	}
	t->up = true;
	l2tpd.n_tunnels_up++;
	return true;
}

/*
 * The engine's sessions that came without the daemon's record of them
 * cannot be shown or deleted: they are cleared (a CDN to the peer).
 */
static void tunnel_clear_unowned_sessions(struct tunnel *t, unsigned owned)
{
	struct l2tp_cc_stats st;

	l2tp_cc_get_stats(t->cc, &st);
	if (st.sessions > owned)
		l2tp_cc_close_unowned_sessions(t->cc, L2TP_CDN_GENERAL_ERROR,
					       "not carried over by a restart");
}

struct tunnel *tunnel_restore(struct usl_unpack *r, int fd, bool crashed, unsigned *n_sessions,
			      char *err, size_t errlen)
{
	struct tunnel *t = calloc(1, sizeof(*t));
	const struct tunnel_profile *p;
	struct usl_unpack dp;
	char prof[CFG_NAME_MAX];
	size_t dplen;
	const uint8_t *dpp;
	uint32_t n;

	*n_sessions = 0;
	if (t == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	t->fd = -1;
	tunnel_links_init(t);
	if (!tunnel_restore_fields(t, r, prof, sizeof(prof))) {
		snprintf(err, errlen, "malformed tunnel record");
		goto fail;
	}
	if (tunnel_find(t->id) != NULL || (t->name != NULL && tunnel_find_name(t->name) != NULL)) {
		snprintf(err, errlen, "tunnel %u: a tunnel with its id or name exists", t->id);
		goto fail;
	}
	p = config_tunnel_profile(l2tpd.conf, prof);
	if (p == NULL)
		p = config_tunnel_profile(l2tpd.conf, "default");
	if (p == NULL || (t->prof = tunnel_profile_get(p)) == NULL) {
		snprintf(err, errlen, "tunnel %u: no profile %s", t->id, prof);
		goto fail;
	}
	t->cc = l2tp_cc_restore(r, &tunnel_ops, l2tpd.timers, t);
	if (t->cc == NULL) {
		snprintf(err, errlen, "tunnel %u: malformed protocol state", t->id);
		goto fail;
	}
	dpp = usl_unpack_blob(r, &dplen);
	if (r->bad || (crashed ? transport_tunnel_reopen(t, err, errlen)
			       : transport_tunnel_adopt(t, fd, err, errlen)) < 0) {
		if (r->bad)
			snprintf(err, errlen, "tunnel %u: malformed record", t->id);
		l2tp_cc_discard_restored(t->cc);
		goto fail;
	}
	if (!tunnel_restore_index(t)) {
		snprintf(err, errlen, "out of memory");
		transport_tunnel_close(t);
		l2tp_cc_discard_restored(t->cc);
		goto fail;
	}
	/* it counts on its pool member again (pool_apply() at the start counts it) */
	t->pool_counted = t->pool != NULL;
	/* from here on it is a tunnel of ours: a failure clears it with a StopCCN */
	usl_unpack_init(&dp, dpp, dplen);
	if (!crashed && l2tpd.dp->tunnel_adopt != NULL && l2tpd.dp->tunnel_adopt(t, &dp) < 0) {
		snprintf(err, errlen, "tunnel %u: the data plane does not have it", t->id);
		tunnel_delete(t, L2TP_STOPCCN_GENERAL_ERROR, "lost in a restart");
		return NULL;
	}
	n = usl_unpack_u32(r);
	for (uint32_t i = 0; i < n && !r->bad; i++)
		if (session_restore(t, r, crashed) != NULL)
			(*n_sessions)++;
	tunnel_clear_unowned_sessions(t, *n_sessions);
	tunnel_describe(t, l2tpd.conf);	/* not in the record: the configuration's, as now */
	/* after a crash the data plane's objects went with the sockets: made again, same IDs */
	if (crashed)
		l2tp_cc_remake_dp(t->cc);
	return t;
fail:
	tunnel_restore_free(t);
	return NULL;
}
