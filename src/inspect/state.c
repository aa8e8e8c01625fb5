/*
 * src/inspect/state.c - the control connection and session state machines
 * as seen on the wire (RFC 3931 7.2 - 7.4), and Control Message
 * Authentication (4.3, 5.4.1).
 *
 * Only connections whose SCCRQ is in the capture are checked: the state of
 * one that began before is unknown.  Session messages are matched to their
 * session by the Local Session ID of either side.
 */
#include <stdlib.h>
#include <string.h>

#include "proto/auth.h"
#include "conn.h"

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

const char *insp_cstate_name(enum cstate st)
{
	return cstate_names[st];
}

static void wrong_state(struct conn *c, struct insp_rec *r, const struct l2tp_msg *m,
			const char *why)
{
	insp_rec_violation(r, V_WRONG_STATE, "%s %s (connection %s)", l2tp_msg_type_name(m->type),
			   why, insp_cstate_name(c->state));
}

void insp_state_handshake(struct conn *c, int s, const struct l2tp_msg *m)
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
		insp_side_set_ccid(S, m->assigned_ccid);
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

/* True when x is in state want; else the message is recorded as in the wrong state. */
static bool sess_in_state(const struct sess *x, enum sstate want, struct insp_rec *r,
			  const struct l2tp_msg *m)
{
	if (x->state == want)
		return true;
	insp_rec_violation(r, V_WRONG_STATE, "%s for a session in state %s",
			   l2tp_msg_type_name(m->type), sstate_names[x->state]);
	return false;
}

static void sess_reply(struct conn *c, int s, struct insp_rec *r, const struct l2tp_msg *m)
{
	uint16_t req = m->type == L2TP_MSG_ICRP ? L2TP_MSG_ICRQ : L2TP_MSG_OCRQ;
	struct sess *x = find_sess(c, !s, m->remote_sid);

	if (x == NULL || x->init == s || x->req != req) {
		wrong_state(c, r, m, "answers no request (Remote Session ID unknown)");
		return;
	}
	if (!sess_in_state(x, SS_WAIT_REPLY, r, m))
		return;
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
	if (!sess_in_state(x, SS_WAIT_CONNECT, r, m))
		return;
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

bool insp_session_msg(uint16_t type)
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

void insp_state_stopccn(struct conn *c, int s, struct insp_rec *r, const struct l2tp_msg *m)
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

void insp_state_track(struct conn *c, int s, struct insp_rec *r, const struct l2tp_msg *m)
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
		insp_state_stopccn(c, s, r, m);
		break;
	default:
		if (c->state < CS_ESTABLISHED)
			wrong_state(c, r, m, "before the control connection is established (no SCCCN)");
		else if (insp_session_msg(m->type))
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
bool insp_state_digest(struct conn *c, int s, struct insp_rec *r, const struct insp_pkt *pk,
		       const struct l2tp_msg *m, const struct insp_opts *opts)
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
