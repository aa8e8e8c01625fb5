/*
 * src/inspect/conn.c - follows control connections through a capture and
 * checks what one message cannot show alone: Ns/Nr continuity (4.2, in
 * seq.c), the state machines and authentication (7.2 - 7.4, 4.3, in
 * state.c).  This file finds each message's connection and drives both.
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

#include "usl/buf.h"
#include "conn.h"

static const struct insp_opts *opts;
static struct usl_hash ccids;
static struct usl_hash cookies;		/* struct cookie by receiving host and Session ID */
static struct cookie *cookie_list;	/* all of them, to free */
static struct conn **conns;
static unsigned n_conns, cap_conns;
static struct l2tp_msg msg;		/* big (scratch space): one, reused */

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

int insp_side_index(const struct side *s)
{
	return s == &s->conn->side[1];
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
		if (insp_addr_same_host(&s->conn->side[!insp_side_index(s)].addr, from))
			return s;
	}
	return NULL;
}

/*
 * Learns the CCID a side assigned.  When messages for it already went to
 * another connection (it was learnt late), neither holds all of this
 * connection's messages: both become loose.
 */
void insp_side_set_ccid(struct side *s, uint32_t ccid)
{
	struct side *o;

	if (s->ccid_known)
		return;
	o = lookup_side(&s->addr, ccid, &s->conn->side[!insp_side_index(s)].addr);
	if (o != NULL && o->conn != s->conn)
		o->conn->loose = s->conn->loose = true;
	s->ccid = ccid;
	s->ccid_known = true;
	usl_hash_insert(&ccids, &s->node, ccid_hash(&s->addr, ccid));
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
	c->side[0].synced = c->side[1].synced = from_start;
	conns[n_conns++] = c;
	return c;
oom:
	perror("l2tpv3-inspect");
	exit(2);
}

/*
 * The newest connection between the two hosts with the sender on one side
 * (recv_unknown: only those still to learn the receiver's CCID), and in
 * *n how many there are: more than one makes the choice a guess.
 */
static struct conn *by_hosts(const struct insp_pkt *pk, bool recv_unknown, int *sender,
			     unsigned *n)
{
	struct conn *c, *found = NULL;
	unsigned i, scanned = 0;
	int s;

	*n = 0;
	for (i = n_conns; i-- > 0 && scanned++ < MAX_SCAN;) {
		c = conns[i];
		if (c->over_ip != pk->over_ip)
			continue;
		for (s = 0; s < 2; s++) {
			if (!insp_addr_same_host(&c->side[s].addr, &pk->src) ||
			    !insp_addr_same_host(&c->side[!s].addr, &pk->dst) ||
			    (recv_unknown && c->side[!s].ccid_known))
				continue;
			if ((*n)++ == 0) {
				found = c;
				*sender = s;
			}
			break;
		}
	}
	return found;
}

/*
 * An SCCRQ opens a connection, unless it is a copy for one still open (its
 * SCCRP may have come first, when the capture began between the two).
 */
static struct conn *sccrq_conn(const struct insp_pkt *pk, const struct l2tp_msg *m, int *sender)
{
	struct side *s = NULL;
	struct conn *c;

	*sender = 0;
	if (l2tp_msg_has(m, L2TP_AVP_ASSIGNED_CCID))
		s = lookup_side(&pk->src, m->assigned_ccid, &pk->dst);
	if (s != NULL && s->conn->state != CS_CLOSING) {
		*sender = insp_side_index(s);
		return s->conn;
	}
	c = conn_new(pk, true);
	if (l2tp_msg_has(m, L2TP_AVP_ASSIGNED_CCID))
		insp_side_set_ccid(&c->side[0], m->assigned_ccid);
	return c;
}

static bool is_sccrq(const struct l2tp_msg *m)
{
	return l2tp_msg_has(m, L2TP_AVP_MESSAGE_TYPE) && m->type == L2TP_MSG_SCCRQ;
}

/*
 * Which connection a message belongs to, and which side sent it.  The
 * header CCID names the receiving side; only SCCRQ, SCCRP and StopCCN name
 * the sender's too (Assigned CCID), which pairs the two directions for
 * sure.  A CCID nobody announced is paired by guess with the one connection
 * between the two hosts that still lacks it (an SCCCN after an SCCRP we
 * did not see, the other direction of a connection that began before the
 * capture); with none or several, the message opens a connection "joined
 * late".  A guess only groups messages: the connection is marked loose,
 * and the checks that compare one direction with the other are left out.
 */
static struct conn *find_conn(const struct insp_pkt *pk, const struct l2tp_msg *m, int *sender)
{
	struct side *s;
	struct conn *c;
	unsigned n;

	if (is_sccrq(m))
		return sccrq_conn(pk, m, sender);
	if (m->ccid == 0) {
		c = by_hosts(pk, false, sender, &n);
		if (c != NULL && n > 1)
			c->loose = true;
		return c ? c : conn_new(pk, false);
	}
	s = lookup_side(&pk->dst, m->ccid, &pk->src);
	if (s != NULL) {
		*sender = !insp_side_index(s);
		return s->conn;
	}
	c = by_hosts(pk, true, sender, &n);
	if (c != NULL && n == 1) {
		c->loose = true;
	} else {
		c = conn_new(pk, false);
		*sender = 0;
	}
	insp_side_set_ccid(&c->side[!*sender], m->ccid);
	return c;
}

/* ---- data messages: the cookies the control messages assigned ---- */

/*
 * What a data message to one session must carry (4.1, 5.4.4): the session
 * is the receiver's Local Session ID on the receiver's host (data headers
 * have no CCID), the cookie the one the receiver assigned in its
 * ICRQ/ICRP/OCRQ/OCRP.  A later request or reply for the same ID (reused
 * after a CDN) replaces it.
 */
struct cookie {
	struct usl_hnode node;		/* in cookies */
	struct cookie *next;		/* cookie_list */
	struct insp_addr host;		/* the receiver of the data */
	uint32_t sid;
	bool over_ip;
	struct conn *conn;
	int side;			/* the receiver's side in conn */
	unsigned frame;			/* of the message that assigned it */
	uint16_t type;			/* and its type */
	uint8_t value[8], len;		/* len 0: none assigned, nothing to check */
	bool flagged;			/* one violation per session and direction */
};

struct cookie_key {
	const struct insp_addr *host;
	uint32_t sid;
	bool over_ip;
};

static uint32_t cookie_hash(const struct insp_addr *host, uint32_t sid)
{
	return usl_hash_bytes(host->a, sizeof(host->a), sid ^ host->family);
}

static bool cookie_eq(const struct usl_hnode *n, const void *key)
{
	const struct cookie *c = usl_hash_entry(n, struct cookie, node);
	const struct cookie_key *k = key;

	return c->sid == k->sid && c->over_ip == k->over_ip && insp_addr_same_host(&c->host, k->host);
}

static struct cookie *cookie_find(const struct insp_addr *host, uint32_t sid, bool over_ip)
{
	struct cookie_key k = { host, sid, over_ip };
	uint32_t h = cookie_hash(host, sid);
	struct usl_hnode *n;

	for (n = usl_hash_lookup(&cookies, &k, h); n != NULL; n = n->next)
		if (n->hash == h && cookie_eq(n, &k))
			return usl_hash_entry(n, struct cookie, node);
	return NULL;
}

static bool assigns_cookie(uint16_t type)
{
	return type == L2TP_MSG_ICRQ || type == L2TP_MSG_ICRP ||
	       type == L2TP_MSG_OCRQ || type == L2TP_MSG_OCRP;
}

/* Side s of c sent m, a session request or reply: the cookie it expects from now on. */
static void cookie_learn(struct conn *c, int s, const struct insp_pkt *pk, const struct l2tp_msg *m)
{
	const struct insp_addr *host = &c->side[s].addr;
	struct cookie *k;

	if (!assigns_cookie(m->type) || !l2tp_msg_has(m, L2TP_AVP_LOCAL_SESSION_ID))
		return;
	k = cookie_find(host, m->local_sid, c->over_ip);
	if (k == NULL) {
		k = calloc(1, sizeof(*k));
		if (k == NULL) {
			perror("l2tpv3-inspect");
			exit(2);
		}
		k->host = *host;
		k->sid = m->local_sid;
		k->over_ip = c->over_ip;
		k->next = cookie_list;
		cookie_list = k;
		usl_hash_insert(&cookies, &k->node, cookie_hash(host, k->sid));
	}
	k->conn = c;
	k->side = s;
	k->frame = pk->frame;
	k->type = m->type;
	k->len = l2tp_msg_has(m, L2TP_AVP_ASSIGNED_COOKIE) && m->cookie_len <= sizeof(k->value) ?
		 m->cookie_len : 0;
	memcpy(k->value, m->cookie, k->len);
	k->flagged = false;
}

/*
 * A data message: the Session ID first over IP, after
 * the 4-octet data header over UDP (4.1.1.2, 4.1.2.1), then the cookie.  A
 * message to a session that assigned a cookie and carrying another (or
 * none: its first octets then stand where the cookie belongs) is what the
 * receiver discards silently; reported at the first such message of each
 * session and direction, as every later one repeats it.
 */
void insp_conn_data(const struct insp_pkt *pk)
{
	size_t off = pk->over_ip ? 0 : 4;
	char want[17], got[17];
	struct insp_rec *r;
	struct cookie *k;
	uint32_t sid;

	if (pk->len < off + 4 || (!pk->over_ip && (usl_get_be16(pk->l2tp) & 0x000f) != 3))
		return;
	sid = usl_get_be32(pk->l2tp + off);
	k = cookie_find(&pk->dst, sid, pk->over_ip);
	if (k == NULL || k->len == 0 || k->flagged)
		return;
	off += 4;
	if (pk->len >= off + k->len && memcmp(pk->l2tp + off, k->value, k->len) == 0)
		return;
	k->flagged = true;
	insp_hex(want, sizeof(want), k->value, k->len);
	r = insp_rec_new(pk);
	insp_rec_data(r, k->conn->id, !k->side, sid);
	if (pk->len < off + k->len) {
		insp_rec_violation(r, V_COOKIE_MISMATCH, "session %u: the message ends before "
				   "the %u-octet cookie %s its %s (frame %u) assigned (4.1, "
				   "5.4.4: the receiver discards it)", sid, k->len, want,
				   l2tp_msg_type_name(k->type), k->frame);
		return;
	}
	insp_hex(got, sizeof(got), pk->l2tp + off, k->len);
	insp_rec_violation(r, V_COOKIE_MISMATCH, "session %u: %s where the cookie %s its %s "
			   "(frame %u) assigned belongs (4.1, 5.4.4: the receiver discards it; a "
			   "peer that ignores the Assigned Cookie AVP sends none)", sid, got, want,
			   l2tp_msg_type_name(k->type), k->frame);
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
					   insp_session_msg(m->type) ? "session (CDN)"
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
	/* RFC 4951 turns it round for FSQ and FSR: M=0, so that a peer without failover ignores them */
	if (m->type == L2TP_MSG_FSQ || m->type == L2TP_MSG_FSR) {
		if (m->type_m)
			insp_rec_violation(r, V_MSG_TYPE_M, "Message Type AVP of %s with M=1 "
					   "(RFC 4951: MUST be 0)", l2tp_msg_type_name(m->type));
	} else if (l2tp_msg_has(m, L2TP_AVP_MESSAGE_TYPE) && !m->type_m) {
		insp_rec_violation(r, V_MSG_TYPE_M, "Message Type AVP with M=0 (5.4.1: MUST be 1)");
	}
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

/*
 * The SCCRQ seen first may be a retransmission of one sent before the
 * capture started: then the responder's first message here is not its
 * Ns 0, the SCCRP went unseen, and so did the CCID that would have brought
 * the initiator's later messages here.  Treat the connection as joined late.
 */
static void born_before(struct conn *c, int s, const struct l2tp_msg *m)
{
	struct side *S = &c->side[s];

	if (!c->from_start || s != 1 || S->n_msgs != 0 || m->ns == 0)
		return;
	c->from_start = false;
	c->loose = true;
	c->state = CS_UNKNOWN;
	S->seq_known = false;
	c->side[0].synced = c->side[1].synced = false;
}

/*
 * zero-ccid-ack, a kind of its own beside zero-ccid: the peer announced its
 * CCID in a StopCCN only (a refusal of the SCCRQ, no SCCRP), and the ZLB or
 * ACK that acknowledges that StopCCN still carries CCID 0 (5.4.3).
 */

/* An ACK or ZLB from side s, Nr nr, acknowledges the StopCCN of a peer whose CCID is known. */
static bool acks_stopccn_of_known(const struct conn *c, int s, uint16_t nr)
{
	return c->stop_side == !s && c->side[!s].ccid_known && seq_after(nr, c->stop_ns);
}

static void track(struct conn *c, int s, struct insp_rec *r, const struct insp_pkt *pk,
		  const struct l2tp_msg *m, enum l2tp_drop rc)
{
	bool known = type_known(m, pk);
	bool is_ack = known && (m->type == L2TP_MSG_ZLB || m->type == L2TP_MSG_ACK);
	bool usable = rc == L2TP_DROP_NONE || rc == L2TP_DROP_HIDDEN_NO_SECRET;
	bool fresh;

	born_before(c, s, m);
	count(&c->side[s], m, known);
	insp_seq_nr(c, s, r, m->nr);
	fresh = insp_seq_ns(c, s, r, pk, m->ns, known ? m->type : 0xffff, is_ack);
	if (fresh && known && m->type == L2TP_MSG_STOPCCN)
		insp_seq_closed_by(c, s, m->nr);
	if (usable && fresh && (m->type == L2TP_MSG_SCCRQ || m->type == L2TP_MSG_SCCRP))
		insp_state_handshake(c, s, m);
	if (usable && fresh && known)
		cookie_learn(c, s, pk, m);
	if (m->type == L2TP_MSG_STOPCCN && l2tp_msg_has(m, L2TP_AVP_ASSIGNED_CCID))
		insp_side_set_ccid(&c->side[s], m->assigned_ccid);
	if (usable && !insp_state_digest(c, s, r, pk, m, opts))
		usable = false;
	if (m->ccid == 0 && m->type != L2TP_MSG_SCCRQ && c->side[!s].ccid_known &&
	    c->side[!s].sent_sccrx)
		insp_rec_violation(r, V_ZERO_CCID, "CCID 0, but the peer announced its Assigned "
				   "CCID 0x%08x (3.2.1)", c->side[!s].ccid);
	else if (m->ccid == 0 && is_ack && acks_stopccn_of_known(c, s, m->nr))
		insp_rec_violation(r, V_ZERO_CCID_ACK, "CCID 0 on the acknowledgement of a StopCCN "
				   "that announced the peer's Assigned CCID 0x%08x (5.4.3)",
				   c->side[!s].ccid);
	if (!usable || !fresh || is_ack || !known)
		return;
	if (c->from_start)
		insp_state_track(c, s, r, m);
	else if (m->type == L2TP_MSG_STOPCCN)
		insp_state_stopccn(c, s, r, m);
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

/* The StopCCN that closes the connection was acknowledged by its peer. */
static bool stop_acked(const struct conn *c)
{
	const struct side *P = &c->side[!c->stop_side];

	return P->nr_seen && seq_after(P->max_nr, c->stop_ns);
}

static void conn_summary(const struct conn *c)
{
	char a[2][INSP_ADDR_STRLEN], text[1024], json[1536], state[64];
	const struct side *S;
	int n = 0, k = 0, i;

	if (c->stop_side < 0)
		snprintf(state, sizeof(state), "%s", insp_cstate_name(c->state));
	else if (stop_acked(c))
		snprintf(state, sizeof(state), "closed by %c (StopCCN)", c->stop_side ? 'B' : 'A');
	else	/* the peer may never have received or processed it */
		snprintf(state, sizeof(state), "StopCCN from %c, not acknowledged",
			 c->stop_side ? 'B' : 'A');
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
	snprintf(text + n, sizeof(text) - (size_t)n, "; over %s, %s%s%s, %u sessions, "
		 "authentication %s", c->over_ip ? "IP" : "UDP", state,
		 c->from_start ? "" : ", joined late", c->loose ? ", directions paired by guess" : "",
		 c->n_sessions, c->auth ? "on" : "off");
	snprintf(json + k, sizeof(json) - (size_t)k, ",\"loose\":%s}",
		 c->loose ? "true" : "false");
	insp_out_conn(c->id, text, json);
}

void insp_conn_finish(int64_t end_ns)
{
	unsigned i;

	for (i = 0; i < n_conns; i++) {
		insp_seq_finish(&conns[i]->side[0], &conns[i]->side[1], end_ns);
		insp_seq_finish(&conns[i]->side[1], &conns[i]->side[0], end_ns);
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
	if (usl_hash_init(&ccids, 256, ccid_eq) < 0 || usl_hash_init(&cookies, 256, cookie_eq) < 0) {
		perror("l2tpv3-inspect");
		exit(2);
	}
}

void insp_conn_shutdown(void)
{
	struct cookie *k, *nk;
	struct sess *x, *nx;
	unsigned i;

	for (k = cookie_list; k != NULL; k = nk) {
		nk = k->next;
		free(k);
	}
	cookie_list = NULL;
	usl_hash_destroy(&cookies);

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
