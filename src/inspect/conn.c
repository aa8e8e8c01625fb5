/*
 * src/inspect/conn.c - follows control connections through a capture and
 * checks what one message cannot show alone: Ns/Nr continuity (4.2),
 * retransmissions (acknowledged? backing off?), the control connection and
 * session state machines (7.2, 7.3, 7.4), Control Message Authentication
 * (4.3, 5.4.1).
 *
 * A connection has two sides: A, the SCCRQ sender (or whoever spoke first
 * when the capture starts mid-connection), and B.  Each side is found by
 * (host address, its Assigned CCID), because the header of every message
 * carries the recipient's CCID: the SCCRQ's Assigned CCID keys A, the
 * SCCRP's keys B, and both directions map to the one connection.  Ports
 * are left out of the key: a responder may answer from another port.
 *
 * The capture is assumed complete (taken on the path, before any loss):
 * a gap in Ns is the sender's fault, not the capture's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "usl/hash.h"
#include "proto/auth.h"
#include "inspect.h"

#define RING		512		/* sequenced messages remembered per side */
#define SEC		1000000000LL
#define GRACE_NS	SEC		/* an ACK may still be on its way at the end */
#define SLACK_NS	(SEC / 50)	/* timer granularity and scheduling */
#define CAP_NS		(SEC * 15 / 2)	/* 4.2: a backoff cap SHOULD be >= 8 s */
#define MAX_SCAN	10000		/* connections searched for a stray message */

enum cstate { CS_UNKNOWN, CS_WAIT_REPLY, CS_WAIT_CONN, CS_ESTABLISHED, CS_CLOSING };
enum sstate { SS_WAIT_REPLY, SS_WAIT_CONNECT, SS_ESTABLISHED, SS_CLOSED };

static const char *const cstate_names[] = {
	[CS_UNKNOWN]		= "unknown (started before the capture)",
	[CS_WAIT_REPLY]		= "wait-ctl-reply",
	[CS_WAIT_CONN]		= "wait-ctl-conn",
	[CS_ESTABLISHED]	= "established",
	[CS_CLOSING]		= "closing",
};

static const char *const sstate_names[] = {
	[SS_WAIT_REPLY]		= "wait-reply",
	[SS_WAIT_CONNECT]	= "wait-connect",
	[SS_ESTABLISHED]	= "established",
	[SS_CLOSED]		= "closed",
};

/* One sequenced message a side sent, and its copies. */
struct sent {
	bool used;
	uint16_t ns, type;
	unsigned frame, copies;
	int64_t t_first, t_last, gap_last;
	bool head;			/* its first timeout ran from its own sending */
	bool backoff_flagged;
	struct insp_rec *waiting;	/* last retransmitted copy, until acknowledged */
};

struct side {
	struct usl_hnode node;		/* in ccids, once ccid_known */
	struct conn *conn;
	struct insp_addr addr;
	uint32_t ccid;			/* its Assigned CCID: the other side's header CCID */
	bool ccid_known;
	bool seq_known;			/* next_ns is meaningful */
	uint16_t next_ns;
	bool nr_seen;
	uint16_t max_nr;		/* how far it acknowledged the other side */
	unsigned n_waiting;
	struct sent ring[RING];
	uint8_t nonce[L2TP_NONCE_MAX];
	uint8_t nonce_len;
	bool has_nonce;
	bool sent_sccrx;
	uint16_t pw_caps[L2TP_MAX_PW_CAPS];
	uint8_t n_pw_caps;
	bool caps_seen;
	char host[96];			/* JSON-escaped Host Name */
	unsigned n_msgs, n_zlb, n_ack, n_rtx;
};

struct sess {
	struct sess *next;
	uint32_t sid[2];		/* each side's Local Session ID, 0 until known */
	int init;			/* side that sent the ICRQ/OCRQ */
	uint16_t req;
	enum sstate state;
};

struct conn {
	unsigned id;
	bool from_start;		/* its SCCRQ is in the capture: state checks apply */
	bool over_ip;
	bool auth;			/* a nonce in SCCRQ/SCCRP (4.3) */
	bool sccrq_seen, sccrp_seen;
	enum cstate state;
	int stop_side;			/* -1, or the side that sent the first StopCCN */
	uint16_t stop_ns;
	unsigned n_sessions;
	struct sess *sessions;
	struct side side[2];
};

static const struct insp_opts *opts;
static struct usl_hash ccids;
static struct conn **conns;
static unsigned n_conns, cap_conns;
static struct l2tp_msg msg;		/* big (scratch space): one, reused */

/* ---- sequence numbers modulo 2^16 (4.2) ---- */

static bool seq_before(uint16_t a, uint16_t b)
{
	return a != b && (uint16_t)(b - a) < 0x8000;
}

static bool seq_after(uint16_t a, uint16_t b)
{
	return seq_before(b, a);
}

/* ---- finding connections ---- */

struct ccid_key {
	const struct insp_addr *addr;
	uint32_t ccid;
};

static uint32_t ccid_hash(const struct insp_addr *a, uint32_t ccid)
{
	return usl_hash_bytes(a->a, sizeof(a->a), ccid ^ a->family);
}

static bool ccid_eq(const struct usl_hnode *n, const void *key)
{
	const struct side *s = usl_hash_entry(n, struct side, node);
	const struct ccid_key *k = key;

	return s->ccid_known && s->ccid == k->ccid && insp_addr_same_host(&s->addr, k->addr);
}

static int side_index(const struct side *s)
{
	return s == &s->conn->side[1];
}

static void side_set_ccid(struct side *s, uint32_t ccid)
{
	if (s->ccid_known)
		return;
	s->ccid = ccid;
	s->ccid_known = true;
	usl_hash_insert(&ccids, &s->node, ccid_hash(&s->addr, ccid));
}

/*
 * The side that owns CCID ccid on host to, in a connection whose other side
 * is on host from.  Newest first: a CCID may be reused after a connection
 * closed.
 */
static struct side *lookup_side(const struct insp_addr *to, uint32_t ccid,
				const struct insp_addr *from)
{
	struct ccid_key k = { to, ccid };
	uint32_t h = ccid_hash(to, ccid);
	struct usl_hnode *n;
	struct side *s;

	for (n = usl_hash_lookup(&ccids, &k, h); n != NULL; n = n->next) {
		if (n->hash != h || !ccid_eq(n, &k))
			continue;
		s = usl_hash_entry(n, struct side, node);
		if (insp_addr_same_host(&s->conn->side[!side_index(s)].addr, from))
			return s;
	}
	return NULL;
}

static struct conn *conn_new(const struct insp_pkt *pk, bool from_start)
{
	struct conn *c, **nc;

	if (n_conns == cap_conns) {
		cap_conns = cap_conns ? cap_conns * 2 : 64;
		nc = realloc(conns, cap_conns * sizeof(*conns));
		if (nc == NULL)
			goto oom;
		conns = nc;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		goto oom;
	c->id = n_conns + 1;
	c->from_start = from_start;
	c->over_ip = pk->over_ip;
	c->stop_side = -1;
	c->state = from_start ? CS_WAIT_REPLY : CS_UNKNOWN;
	c->side[0].conn = c->side[1].conn = c;
	c->side[0].addr = pk->src;
	c->side[1].addr = pk->dst;
	/* both sequences start at 0 (4.2) when we see the connection born */
	c->side[0].seq_known = c->side[1].seq_known = from_start;
	conns[n_conns++] = c;
	return c;
oom:
	perror("l2tpv3-inspect");
	exit(2);
}

/*
 * The newest connection between the two hosts with the sender on one side;
 * recv_unknown: only where the receiver's CCID is still to be learnt.
 */
static struct conn *by_hosts(const struct insp_pkt *pk, bool recv_unknown, int *sender)
{
	unsigned i, scanned = 0;
	struct conn *c;
	int s;

	for (i = n_conns; i-- > 0 && scanned++ < MAX_SCAN;) {
		c = conns[i];
		if (c->over_ip != pk->over_ip)
			continue;
		for (s = 0; s < 2; s++) {
			if (!insp_addr_same_host(&c->side[s].addr, &pk->src) ||
			    !insp_addr_same_host(&c->side[!s].addr, &pk->dst))
				continue;
			if (recv_unknown && c->side[!s].ccid_known)
				continue;
			*sender = s;
			return c;
		}
	}
	return NULL;
}

/* An SCCRQ opens a connection, unless it is a copy of one still being set up. */
static struct conn *sccrq_conn(const struct insp_pkt *pk, const struct l2tp_msg *m, int *sender)
{
	struct side *s = NULL;
	struct conn *c;

	*sender = 0;
	if (l2tp_msg_has(m, L2TP_AVP_ASSIGNED_CCID))
		s = lookup_side(&pk->src, m->assigned_ccid, &pk->dst);
	if (s != NULL && side_index(s) == 0 && s->conn->from_start &&
	    s->conn->state != CS_CLOSING)
		return s->conn;
	c = conn_new(pk, true);
	if (l2tp_msg_has(m, L2TP_AVP_ASSIGNED_CCID))
		side_set_ccid(&c->side[0], m->assigned_ccid);
	return c;
}

static bool is_sccrq(const struct l2tp_msg *m)
{
	return l2tp_msg_has(m, L2TP_AVP_MESSAGE_TYPE) && m->type == L2TP_MSG_SCCRQ;
}

/*
 * Which connection a message belongs to, and which side sent it.  A CCID
 * nobody announced is learnt from the newest connection between the two
 * hosts that still lacks it (an SCCCN after an SCCRP we did not see, a
 * connection that began before the capture); failing that, the message
 * opens a connection "joined late".
 */
static struct conn *find_conn(const struct insp_pkt *pk, const struct l2tp_msg *m, int *sender)
{
	struct side *s;
	struct conn *c;

	if (is_sccrq(m))
		return sccrq_conn(pk, m, sender);
	if (m->ccid == 0) {
		c = by_hosts(pk, false, sender);
		return c ? c : conn_new(pk, false);
	}
	s = lookup_side(&pk->dst, m->ccid, &pk->src);
	if (s != NULL) {
		*sender = !side_index(s);
		return s->conn;
	}
	c = by_hosts(pk, true, sender);
	if (c == NULL) {
		c = conn_new(pk, false);
		*sender = 0;
	}
	side_set_ccid(&c->side[!*sender], m->ccid);
	return c;
}

/* ---- reliable delivery (4.2) ---- */

/* A message from side s with this Nr acknowledges the other side's copies below it. */
static void release_acked(struct side *r, uint16_t nr)
{
	struct sent *e;
	unsigned i;

	for (i = 0; i < RING && r->n_waiting; i++) {
		e = &r->ring[i];
		if (e->waiting == NULL || !seq_before(e->ns, nr))
			continue;
		insp_rec_hold(e->waiting, false);
		e->waiting = NULL;
		r->n_waiting--;
	}
}

static void check_nr(struct conn *c, int s, struct insp_rec *r, uint16_t nr)
{
	struct side *S = &c->side[s], *R = &c->side[!s];

	if (R->seq_known && seq_after(nr, R->next_ns))
		insp_rec_violation(r, V_NR_INVALID, "Nr %u acknowledges messages never sent "
				   "(the peer's next Ns is %u)", nr, R->next_ns);
	else if (S->nr_seen && seq_before(nr, S->max_nr))
		insp_rec_violation(r, V_NR_BACKWARDS, "Nr %u below the Nr %u this side already "
				   "sent (4.2: Nr MUST be the next expected Ns)", nr, S->max_nr);
	else if (!S->nr_seen || seq_after(nr, S->max_nr)) {
		S->max_nr = nr;
		S->nr_seen = true;
	}
	release_acked(R, nr);
}

static void new_sent(struct conn *c, int s, const struct insp_pkt *pk, uint16_t ns,
		     uint16_t type)
{
	struct side *S = &c->side[s];
	struct sent *e = &S->ring[ns % RING];

	if (e->waiting) {
		insp_rec_hold(e->waiting, false);
		S->n_waiting--;
	}
	memset(e, 0, sizeof(*e));
	e->used = true;
	e->ns = ns;
	e->type = type;
	e->frame = pk->frame;
	e->copies = 1;
	e->t_first = e->t_last = pk->t_ns;
	/*
	 * Only a connection's first message surely timed out from its own
	 * transmission; any later one may have waited behind an older
	 * message's timer (an ACK seen here may never have reached the sender).
	 */
	e->head = c->from_start && ns == 0;
}

/*
 * Each retransmission MUST back off exponentially (4.2), up to a cap that
 * SHOULD be at least 8 s.  The interval before the first retransmission
 * counts only for a connection's first message (see new_sent()): later
 * ones wait behind an older message's timer, and implementations restart
 * the backoff for them once that one is acknowledged.
 */
static void check_backoff(struct sent *e, struct insp_rec *r, int64_t gap)
{
	if (e->backoff_flagged || e->copies < 3 || (e->copies == 3 && !e->head))
		return;
	if (gap + SLACK_NS >= e->gap_last * 3 / 2 || gap >= CAP_NS)
		return;
	e->backoff_flagged = true;
	insp_rec_violation(r, V_NO_BACKOFF, "retransmitted %.3f s after the previous copy, which "
			   "came %.3f s after the one before (4.2: exponential backoff, any cap "
			   ">= 8 s)", (double)gap / SEC, (double)e->gap_last / SEC);
}

static void retransmission(struct side *S, struct sent *e, struct insp_rec *r, int64_t t)
{
	int64_t gap = t - e->t_last;

	e->copies++;
	S->n_rtx++;
	insp_rec_retransmission(r, e->copies, gap);
	check_backoff(e, r, gap);
	e->gap_last = gap;
	e->t_last = t;
	/* 4.2: duplicates MUST be acknowledged; a superseded copy may have been lost */
	if (e->waiting)
		insp_rec_hold(e->waiting, false);
	else
		S->n_waiting++;
	e->waiting = r;
	insp_rec_hold(r, true);
}

/* Returns true for a new message, false for a copy of one already seen. */
static bool check_ns(struct conn *c, int s, struct insp_rec *r, const struct insp_pkt *pk,
		     uint16_t ns, uint16_t type, bool is_ack)
{
	struct side *S = &c->side[s];
	struct sent *e;

	if (!S->seq_known) {
		S->seq_known = true;
		S->next_ns = ns;
	}
	if (is_ack) {
		/* an ACK takes no Ns slot: it carries the next Ns (4.2) */
		if (seq_after(ns, S->next_ns)) {
			insp_rec_violation(r, V_NS_GAP, "Ns %u, but this side's next Ns is %u: "
					   "messages missing", ns, S->next_ns);
			S->next_ns = ns;
		}
		return true;
	}
	if (ns == S->next_ns || seq_after(ns, S->next_ns)) {
		if (ns != S->next_ns)
			insp_rec_violation(r, V_NS_GAP, "Ns %u, expected %u (%u messages missing)",
					   ns, S->next_ns, (uint16_t)(ns - S->next_ns));
		new_sent(c, s, pk, ns, type);
		S->next_ns = ns + 1;
		return true;
	}
	e = &S->ring[ns % RING];
	if (!e->used || e->ns != ns) {
		insp_rec_note(r, "copy of Ns %u, sent too long ago to compare", ns);
		return false;
	}
	if (e->type != type) {
		insp_rec_violation(r, V_NS_REUSED, "Ns %u carried %s in frame %u, now %s", ns,
				   l2tp_msg_type_name(e->type), e->frame, l2tp_msg_type_name(type));
		return true;
	}
	retransmission(S, e, r, pk->t_ns);
	return false;
}

/* ---- control connection and session state (7.2 - 7.4) ---- */

static void wrong_state(struct conn *c, struct insp_rec *r, const struct l2tp_msg *m,
			const char *why)
{
	insp_rec_violation(r, V_WRONG_STATE, "%s %s (connection %s)", l2tp_msg_type_name(m->type),
			   why, cstate_names[c->state]);
}

static void remember_handshake(struct conn *c, int s, const struct l2tp_msg *m)
{
	struct side *S = &c->side[s];

	S->sent_sccrx = true;
	if (l2tp_msg_has(m, L2TP_AVP_PW_CAP_LIST)) {
		memcpy(S->pw_caps, m->pw_caps, sizeof(S->pw_caps));
		S->n_pw_caps = m->n_pw_caps;
		S->caps_seen = true;
	}
	if (l2tp_msg_has(m, L2TP_AVP_CTRL_MSG_AUTH_NONCE) && m->nonce.len <= L2TP_NONCE_MAX) {
		memcpy(S->nonce, m->nonce.p, m->nonce.len);
		S->nonce_len = (uint8_t)m->nonce.len;
		S->has_nonce = true;
		c->auth = true;
	}
	if (l2tp_msg_has(m, L2TP_AVP_HOST_NAME))
		insp_json_str(S->host, sizeof(S->host), m->host_name.p, m->host_name.len);
	if (l2tp_msg_has(m, L2TP_AVP_ASSIGNED_CCID))
		side_set_ccid(S, m->assigned_ccid);
	if (m->type == L2TP_MSG_SCCRQ)
		c->sccrq_seen = true;
	else
		c->sccrp_seen = true;
}

static struct sess *find_sess(struct conn *c, int side, uint32_t sid)
{
	struct sess *x;

	if (sid == 0)
		return NULL;
	for (x = c->sessions; x != NULL; x = x->next)
		if (x->sid[side] == sid && x->state != SS_CLOSED)
			return x;
	return NULL;
}

static void pw_type_check(struct conn *c, int s, struct insp_rec *r, const struct l2tp_msg *m)
{
	const struct side *R = &c->side[!s];
	unsigned i;

	if (!R->caps_seen || !l2tp_msg_has(m, L2TP_AVP_PW_TYPE))
		return;
	for (i = 0; i < R->n_pw_caps; i++)
		if (R->pw_caps[i] == m->pw_type)
			return;
	insp_rec_violation(r, V_PW_TYPE, "PW type %u (%s) is not in the peer's Pseudowire "
			   "Capabilities List (6.6: the peer answers CDN 14)", m->pw_type,
			   l2tp_pw_type_name(m->pw_type));
}

static void sess_request(struct conn *c, int s, struct insp_rec *r, const struct l2tp_msg *m)
{
	struct sess *x;

	pw_type_check(c, s, r, m);
	if (find_sess(c, s, m->local_sid)) {
		wrong_state(c, r, m, "reuses a Local Session ID still in use");
		return;
	}
	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return;
	x->sid[s] = m->local_sid;
	x->init = s;
	x->req = m->type;
	x->state = SS_WAIT_REPLY;
	x->next = c->sessions;
	c->sessions = x;
	c->n_sessions++;
}

static void sess_reply(struct conn *c, int s, struct insp_rec *r, const struct l2tp_msg *m)
{
	uint16_t req = m->type == L2TP_MSG_ICRP ? L2TP_MSG_ICRQ : L2TP_MSG_OCRQ;
	struct sess *x = find_sess(c, !s, m->remote_sid);

	if (x == NULL || x->init == s || x->req != req) {
		wrong_state(c, r, m, "answers no request (Remote Session ID unknown)");
		return;
	}
	if (x->state != SS_WAIT_REPLY) {
		insp_rec_violation(r, V_WRONG_STATE, "%s for a session in state %s",
				   l2tp_msg_type_name(m->type), sstate_names[x->state]);
		return;
	}
	x->sid[s] = m->local_sid;
	x->state = SS_WAIT_CONNECT;
}

/* ICCN comes from the ICRQ sender, OCCN from the OCRQ recipient (7.3, 7.4). */
static void sess_connected(struct conn *c, int s, struct insp_rec *r, const struct l2tp_msg *m)
{
	int want_init = m->type == L2TP_MSG_ICCN ? s : !s;
	struct sess *x = find_sess(c, s, m->local_sid);

	if (x == NULL || x->init != want_init || x->sid[!s] != m->remote_sid) {
		wrong_state(c, r, m, "for no session being set up");
		return;
	}
	if (x->state != SS_WAIT_CONNECT) {
		insp_rec_violation(r, V_WRONG_STATE, "%s for a session in state %s",
				   l2tp_msg_type_name(m->type), sstate_names[x->state]);
		return;
	}
	x->state = SS_ESTABLISHED;
}

/* CDN, SLI, WEN: the session by either ID (the Remote one may still be 0). */
static void sess_other(struct conn *c, int s, struct insp_rec *r, const struct l2tp_msg *m)
{
	struct sess *x = find_sess(c, s, m->local_sid);

	if (x == NULL)
		x = find_sess(c, !s, m->remote_sid);
	if (x == NULL) {
		/* crossing CDNs: the session is already closed on the wire */
		for (x = c->sessions; m->type == L2TP_MSG_CDN && x; x = x->next)
			if (x->state == SS_CLOSED && (x->sid[s] == m->local_sid ||
						      (m->remote_sid && x->sid[!s] == m->remote_sid)))
				return;
		wrong_state(c, r, m, "for an unknown session");
		return;
	}
	if (m->type == L2TP_MSG_CDN)
		x->state = SS_CLOSED;
}

static bool session_msg(uint16_t type)
{
	switch (type) {
	case L2TP_MSG_OCRQ: case L2TP_MSG_OCRP: case L2TP_MSG_OCCN:
	case L2TP_MSG_ICRQ: case L2TP_MSG_ICRP: case L2TP_MSG_ICCN:
	case L2TP_MSG_CDN: case L2TP_MSG_WEN: case L2TP_MSG_SLI:
		return true;
	default:
		return false;
	}
}

static void track_session(struct conn *c, int s, struct insp_rec *r, const struct l2tp_msg *m)
{
	if (!l2tp_msg_has(m, L2TP_AVP_LOCAL_SESSION_ID))
		return;
	switch (m->type) {
	case L2TP_MSG_ICRQ: case L2TP_MSG_OCRQ:
		sess_request(c, s, r, m);
		break;
	case L2TP_MSG_ICRP: case L2TP_MSG_OCRP:
		sess_reply(c, s, r, m);
		break;
	case L2TP_MSG_ICCN: case L2TP_MSG_OCCN:
		sess_connected(c, s, r, m);
		break;
	default:
		sess_other(c, s, r, m);
		break;
	}
}

/* After a StopCCN, its sender sends nothing new; nor does the peer once it acknowledged it. */
static void after_stopccn(struct conn *c, int s, struct insp_rec *r, const struct l2tp_msg *m)
{
	if (c->stop_side < 0 || m->type == L2TP_MSG_STOPCCN)
		return;
	if (s == c->stop_side)
		wrong_state(c, r, m, "after this side's own StopCCN");
	else if (c->side[s].nr_seen && seq_after(c->side[s].max_nr, c->stop_ns))
		wrong_state(c, r, m, "after acknowledging the peer's StopCCN");
}

static void stopccn(struct conn *c, int s, struct insp_rec *r, const struct l2tp_msg *m)
{
	if (c->side[s].sent_sccrx && !l2tp_msg_has(m, L2TP_AVP_ASSIGNED_CCID))
		insp_rec_violation(r, l2tp_drop_name(L2TP_DROP_MISSING_AVP), "StopCCN without "
				   "Assigned Control Connection ID after this side's SCCRQ/SCCRP "
				   "(6.4)");
	if (c->stop_side < 0) {
		c->stop_side = s;
		c->stop_ns = m->ns;
	}
	c->state = CS_CLOSING;
}

static void track_state(struct conn *c, int s, struct insp_rec *r, const struct l2tp_msg *m)
{
	after_stopccn(c, s, r, m);
	switch (m->type) {
	case L2TP_MSG_SCCRQ:
		break;
	case L2TP_MSG_SCCRP:
		if (s != 1)
			wrong_state(c, r, m, "from the SCCRQ sender");
		else if (c->state != CS_WAIT_REPLY)
			wrong_state(c, r, m, "not in answer to an SCCRQ");
		else
			c->state = CS_WAIT_CONN;
		break;
	case L2TP_MSG_SCCCN:
		if (s != 0)
			wrong_state(c, r, m, "from the SCCRQ recipient");
		else if (c->state != CS_WAIT_CONN)
			wrong_state(c, r, m, c->state == CS_WAIT_REPLY ? "without SCCRP"
								: "not after an SCCRP");
		else
			c->state = CS_ESTABLISHED;
		break;
	case L2TP_MSG_STOPCCN:
		stopccn(c, s, r, m);
		break;
	default:
		if (c->state < CS_ESTABLISHED)
			wrong_state(c, r, m, "before the control connection is established (no SCCCN)");
		else if (session_msg(m->type))
			track_session(c, s, r, m);
		break;
	}
}

/* ---- authentication (4.3, 5.4.1) ---- */

static void add_keys(struct l2tp_auth *a, const uint8_t *secret, size_t len)
{
	l2tp_auth_add_key(a, L2TP_DIGEST_HMAC_MD5, secret, len);
	l2tp_auth_add_key(a, L2TP_DIGEST_HMAC_SHA1, secret, len);
}

/* The nonces as the receiver sees them: its own is local, the sender's is the peer's. */
static bool set_nonces(struct l2tp_auth *a, const struct conn *c, int s, const struct l2tp_msg *m)
{
	const struct side *S = &c->side[s], *R = &c->side[!s];
	struct l2tp_bytes peer = { S->nonce, S->nonce_len };

	if (m->type == L2TP_MSG_SCCRQ)
		return true;
	if (!R->has_nonce || (m->type != L2TP_MSG_SCCRP && !S->has_nonce))
		return false;
	memcpy(a->local_nonce, R->nonce, R->nonce_len);
	a->local_nonce_len = R->nonce_len;
	return l2tp_auth_set_peer_nonce(a, &peer) == 0;
}

/* False when the digest fails: the daemon drops such a message unread (4.3). */
static bool check_digest(struct conn *c, int s, struct insp_rec *r, const struct insp_pkt *pk,
			 const struct l2tp_msg *m)
{
	struct l2tp_auth a;
	enum l2tp_drop rc;

	if (m->n_digests == 0) {
		if (c->auth)
			insp_rec_violation(r, V_DIGEST_MISSING, "%s", m->type == L2TP_MSG_ZLB ?
					   "ZLB while authentication is on (6.15: send ACK with a "
					   "Message Digest)" : "no Message Digest while authentication "
					   "is on (4.3: nonce in SCCRQ/SCCRP)");
		return true;
	}
	l2tp_auth_init(&a);
	if (c->auth && !opts->have_secret) {
		insp_rec_note(r, "digest: not verified (no --secret)");
		return true;
	}
	if (c->auth)
		add_keys(&a, opts->secret.p, opts->secret.len);
	else if (c->sccrq_seen && c->sccrp_seen)
		add_keys(&a, NULL, 0);	/* 4.3: integrity check only, empty secret and nonces */
	if ((a.n_keys == 0 && m->type != L2TP_MSG_SCCRQ) || (c->auth && !set_nonces(&a, c, s, m))) {
		insp_rec_note(r, "digest: not verified (no nonce seen)");
		return true;
	}
	if (a.n_keys == 0)
		add_keys(&a, opts->have_secret ? opts->secret.p : NULL,
			 opts->have_secret ? opts->secret.len : 0);
	rc = l2tp_auth_verify(&a, m, pk->l2tp, pk->len, pk->over_ip);
	if (rc == L2TP_DROP_NONE) {
		insp_rec_note(r, "digest: verified");
		return true;
	}
	insp_rec_violation(r, V_DIGEST_MISMATCH, "Message Digest does not verify%s",
			   c->auth ? " with --secret and the nonces seen" :
			   " as an integrity check (empty secret, 4.3)");
	return false;
}

/* ---- codec verdicts ---- */

static const char *drop_detail(enum l2tp_drop rc)
{
	switch (rc) {
	case L2TP_DROP_SHORT_HEADER:	return "fewer octets than a control message header";
	case L2TP_DROP_BAD_VERSION:	return "Ver is not 3 (3.2.1)";
	case L2TP_DROP_NO_LENGTH_BIT:	return "L bit clear (3.2.1: MUST be 1)";
	case L2TP_DROP_NO_SEQ_BIT:	return "S bit clear (3.2.1: MUST be 1)";
	case L2TP_DROP_LENGTH_MISMATCH:	return "header Length differs from the datagram";
	case L2TP_DROP_AVP_TOO_SHORT:	return "AVP Length below 6 (5.1)";
	case L2TP_DROP_AVP_OVERRUN:	return "AVP runs past the end of the message (5.1)";
	case L2TP_DROP_FIRST_AVP_NOT_MSG_TYPE:
		return "the first AVP is not an unhidden Message Type (5.4.1)";
	case L2TP_DROP_BAD_AVP_LENGTH:	return "AVP of the wrong size for its type (5.4)";
	case L2TP_DROP_BAD_AVP_VALUE:	return "AVP value out of range, or AVP misplaced";
	case L2TP_DROP_HIDDEN_NO_RANDOM_VECTOR:
		return "hidden AVP with no Random Vector before it (5.3)";
	case L2TP_DROP_HIDDEN_BAD_LENGTH:
		return "hidden AVP does not unhide to a sane length (wrong --secret?)";
	case L2TP_DROP_DUPLICATE_AVP:	return "AVP repeated with another value";
	default:			return "rejected by the codec";
	}
}

/* The codec's verdict on one message, as the daemon would reach it. */
static void codec_verdict(struct insp_rec *r, const struct l2tp_msg *m, enum l2tp_drop rc,
			  const struct insp_avp_info *info)
{
	char names[256];

	switch (rc) {
	case L2TP_DROP_NONE:
		if (m->has_unknown_mandatory)
			insp_rec_violation(r, l2tp_drop_name(L2TP_DROP_UNKNOWN_MANDATORY),
					   "%s: unrecognised with M=1 (5.2: the receiver clears "
					   "the %s, result 2 error 8)", info->unknown_m,
					   session_msg(m->type) ? "session (CDN)"
								: "connection (StopCCN)");
		break;
	case L2TP_DROP_UNKNOWN_MSG_TYPE:
		if (m->type_m)
			insp_rec_violation(r, l2tp_drop_name(rc), "message type %u unknown with "
					   "M=1 (5.4.1: the connection is cleared)", m->type);
		else
			insp_rec_note(r, "message type %u unknown with M=0: ignored", m->type);
		break;
	case L2TP_DROP_HIDDEN_NO_SECRET:
		insp_rec_note(r, "hidden AVPs: not decoded (no --secret)");
		break;
	case L2TP_DROP_MISSING_AVP:
		insp_avp_missing(m, names, sizeof(names));
		insp_rec_violation(r, l2tp_drop_name(rc), "%s without %s (6)",
				   l2tp_msg_type_name(m->type), names);
		break;
	default:
		if (info->at[0])
			insp_rec_violation(r, l2tp_drop_name(rc), "%s (at %s)", drop_detail(rc),
					   info->at);
		else
			insp_rec_violation(r, l2tp_drop_name(rc), "%s", drop_detail(rc));
		break;
	}
	if (l2tp_msg_has(m, L2TP_AVP_MESSAGE_TYPE) && !m->type_m)
		insp_rec_violation(r, V_MSG_TYPE_M, "Message Type AVP with M=0 (5.4.1: MUST be 1)");
}

/* ---- one message ---- */

static bool type_known(const struct l2tp_msg *m, const struct insp_pkt *pk)
{
	size_t hdr = L2TP_CTRL_HDR_LEN + (pk->over_ip ? L2TP_IP_SESSION0_LEN : 0);

	return l2tp_msg_has(m, L2TP_AVP_MESSAGE_TYPE) || pk->len == hdr;
}

static void count(struct side *S, const struct l2tp_msg *m, bool known)
{
	S->n_msgs++;
	S->n_zlb += known && m->type == L2TP_MSG_ZLB;
	S->n_ack += known && m->type == L2TP_MSG_ACK;
}

static void track(struct conn *c, int s, struct insp_rec *r, const struct insp_pkt *pk,
		  const struct l2tp_msg *m, enum l2tp_drop rc)
{
	bool known = type_known(m, pk);
	bool is_ack = known && (m->type == L2TP_MSG_ZLB || m->type == L2TP_MSG_ACK);
	bool usable = rc == L2TP_DROP_NONE || rc == L2TP_DROP_HIDDEN_NO_SECRET;
	bool fresh;

	count(&c->side[s], m, known);
	check_nr(c, s, r, m->nr);
	fresh = check_ns(c, s, r, pk, m->ns, known ? m->type : 0xffff, is_ack);
	if (usable && fresh && (m->type == L2TP_MSG_SCCRQ || m->type == L2TP_MSG_SCCRP))
		remember_handshake(c, s, m);
	if (m->type == L2TP_MSG_STOPCCN && l2tp_msg_has(m, L2TP_AVP_ASSIGNED_CCID))
		side_set_ccid(&c->side[s], m->assigned_ccid);
	if (usable && !check_digest(c, s, r, pk, m))
		usable = false;
	if (m->ccid == 0 && m->type != L2TP_MSG_SCCRQ && c->side[!s].ccid_known &&
	    c->side[!s].sent_sccrx)
		insp_rec_violation(r, V_ZERO_CCID, "CCID 0, but the peer announced its Assigned "
				   "CCID 0x%08x (3.2.1)", c->side[!s].ccid);
	if (!usable || !fresh || is_ack || !known)
		return;
	if (c->from_start)
		track_state(c, s, r, m);
	else if (m->type == L2TP_MSG_STOPCCN)
		stopccn(c, s, r, m);
}

void insp_conn_message(const struct insp_pkt *pk)
{
	const struct l2tp_secret *secret = opts->have_secret ? &opts->secret : NULL;
	struct insp_rec *r = insp_rec_new(pk);
	struct insp_avp_info info;
	enum l2tp_drop rc;
	struct conn *c;
	int s = 0;

	rc = l2tp_msg_decode_header(&msg, pk->l2tp, pk->len, pk->over_ip);
	if (rc != L2TP_DROP_NONE) {
		insp_rec_header(r, 0, -1, &msg, NULL);
		insp_rec_violation(r, l2tp_drop_name(rc), "%s", drop_detail(rc));
		return;
	}
	insp_pkt_learn(pk);
	if (msg.ver == 2) {
		/* 4.7.3: an L2TPv2 peer on the same port is not ours to lint */
		insp_rec_header(r, 0, -1, &msg, "L2TPv2");
		insp_rec_note(r, "L2TPv2 message: not linted");
		return;
	}
	rc = l2tp_msg_decode(&msg, pk->l2tp, pk->len, pk->over_ip, secret);
	c = find_conn(pk, &msg, &s);
	insp_rec_header(r, c->id, s, &msg, type_known(&msg, pk) ||
			rc == L2TP_DROP_UNKNOWN_MSG_TYPE ? l2tp_msg_type_name(msg.type) : "?");
	insp_avp_render(r, pk, &msg, rc, &info);
	codec_verdict(r, &msg, rc, &info);
	if (pk->udp_csum_zero)
		insp_rec_violation(r, V_UDP_CSUM, "UDP checksum 0 (4.1.2.3: MUST be enabled for "
				   "control messages)");
	track(c, s, r, pk, &msg, rc);
}

/* ---- end of capture ---- */

static void finish_side(struct side *S, const struct side *R, int64_t end)
{
	char peer[INSP_ADDR_STRLEN];
	struct sent *e;
	unsigned i;

	insp_addr_str(&R->addr, false, peer, sizeof(peer));
	for (i = 0; i < RING && S->n_waiting; i++) {
		e = &S->ring[i];
		if (e->waiting == NULL)
			continue;
		if (end - e->t_last >= GRACE_NS)
			insp_rec_violation(e->waiting, V_UNACKED_RTX, "%s Ns %u sent %u times, "
					   "%s never acknowledged the last copy (4.2: duplicates "
					   "MUST be acknowledged)", l2tp_msg_type_name(e->type), e->ns,
					   e->copies, peer);
		else
			insp_rec_note(e->waiting, "not acknowledged before the capture ended");
		insp_rec_hold(e->waiting, false);
		e->waiting = NULL;
		S->n_waiting--;
	}
}

static void conn_summary(const struct conn *c)
{
	char a[2][INSP_ADDR_STRLEN], text[1024], json[1536], state[64];
	const struct side *S;
	int n = 0, k = 0, i;

	snprintf(state, sizeof(state), "%s", c->stop_side >= 0 ?
		 (c->stop_side ? "closed by B (StopCCN)" : "closed by A (StopCCN)") :
		 cstate_names[c->state]);
	k = snprintf(json, sizeof(json), "{\"conn\":%u,\"encap\":\"%s\",\"from_start\":%s,"
		     "\"state\":\"%s\",\"auth\":%s,\"sessions\":%u", c->id,
		     c->over_ip ? "ip" : "udp", c->from_start ? "true" : "false", state,
		     c->auth ? "true" : "false", c->n_sessions);
	for (i = 0; i < 2; i++) {
		S = &c->side[i];
		insp_addr_str(&S->addr, false, a[i], sizeof(a[i]));
		n += snprintf(text + n, sizeof(text) - (size_t)n, "%s%s %s ccid %s%08x%s%s%s: "
			      "%u messages (%u ZLB, %u ACK, %u retransmitted)", i ? "; " : "",
			      i ? "B" : "A", a[i], S->ccid_known ? "0x" : "?", S->ccid,
			      S->host[0] ? " \"" : "", S->host, S->host[0] ? "\"" : "", S->n_msgs,
			      S->n_zlb, S->n_ack, S->n_rtx);
		k += snprintf(json + k, sizeof(json) - (size_t)k, ",\"%s\":{\"addr\":\"%s\","
			      "\"ccid\":%u,\"host_name\":\"%s\",\"messages\":%u,\"zlb\":%u,"
			      "\"ack\":%u,\"retransmitted\":%u}", i ? "b" : "a", a[i],
			      S->ccid_known ? S->ccid : 0, S->host, S->n_msgs, S->n_zlb, S->n_ack,
			      S->n_rtx);
	}
	snprintf(text + n, sizeof(text) - (size_t)n, "; over %s, %s%s, %u sessions, "
		 "authentication %s", c->over_ip ? "IP" : "UDP", state,
		 c->from_start ? "" : ", joined late", c->n_sessions, c->auth ? "on" : "off");
	snprintf(json + k, sizeof(json) - (size_t)k, "}");
	insp_out_conn(c->id, text, json);
}

void insp_conn_finish(int64_t end_ns)
{
	unsigned i;

	for (i = 0; i < n_conns; i++) {
		finish_side(&conns[i]->side[0], &conns[i]->side[1], end_ns);
		finish_side(&conns[i]->side[1], &conns[i]->side[0], end_ns);
	}
	for (i = 0; i < n_conns; i++)
		conn_summary(conns[i]);
}

unsigned insp_conn_count(void)
{
	return n_conns;
}

void insp_conn_init(const struct insp_opts *o)
{
	opts = o;
	if (usl_hash_init(&ccids, 256, ccid_eq) < 0) {
		perror("l2tpv3-inspect");
		exit(2);
	}
}

void insp_conn_shutdown(void)
{
	struct sess *x, *nx;
	unsigned i;

	for (i = 0; i < n_conns; i++) {
		for (x = conns[i]->sessions; x != NULL; x = nx) {
			nx = x->next;
			free(x);
		}
		free(conns[i]);
	}
	free(conns);
	conns = NULL;
	n_conns = cap_conns = 0;
	usl_hash_destroy(&ccids);
}
