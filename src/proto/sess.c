/*
 * src/proto/sess.c - session FSMs for incoming and outgoing calls (RFC 3931
 * 3.4, 5.4.4, 5.4.5, 7.3, 7.4).  See sess.h for who sends what.
 *
 * A session sits in its cc's hash by our Session ID, in a second hash by the
 * peer's once known (for a CDN that names only the sender's ID), and, while
 * a call we placed awaits its reply, in a third by Remote End ID (session
 * tie breaking, 5.4.4).  Closed sessions leave the hashes at once and are
 * freed when the engine unwinds (l2tp_sess_reap), so pointers held up the
 * stack stay valid.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "usl/log.h"
#include "engine.h"

static const char *const sess_state_names[L2TP_SESS_STATE__COUNT] = {
	[L2TP_SESS_IDLE] = "idle",
	[L2TP_SESS_WAIT_TUNNEL] = "wait-tunnel",
	[L2TP_SESS_WAIT_REPLY] = "wait-reply",
	[L2TP_SESS_WAIT_CONNECT] = "wait-connect",
	[L2TP_SESS_WAIT_CS_ANSWER] = "wait-cs-answer",
	[L2TP_SESS_ESTABLISHED] = "established",
	[L2TP_SESS_CLOSED] = "closed",
};

const char *l2tp_sess_state_name(enum l2tp_sess_state s)
{
	return (unsigned)s < L2TP_SESS_STATE__COUNT ? sess_state_names[s] : "unknown";
}

#define sess_log(lvl, s, fmt, ...) \
	log_##lvl("tunnel %u session %u/%u: " fmt, (s)->cc->local_ccid, (s)->local_sid, \
		  (s)->peer_sid, ##__VA_ARGS__)

static void sess_setup_expired(struct usl_timer *t);

void l2tp_sess_cfg_init(struct l2tp_sess_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->pw_type = L2TP_PW_ETH;
	cfg->circuit_status = L2TP_CIRCUIT_ACTIVE | L2TP_CIRCUIT_NEW;
}

/* ------------------------------------------------------------------ */
/* indexes */

struct end_key {
	const uint8_t *p;
	uint16_t len;
	bool outgoing;
};

static uint8_t no_end_id[1];	/* the Remote End ID of length 0 */

static bool sess_eq_sid(const struct usl_hnode *n, const void *key)
{
	return usl_hash_entry(n, struct l2tp_sess, by_sid)->local_sid == *(const uint32_t *)key;
}

static bool sess_eq_peer_sid(const struct usl_hnode *n, const void *key)
{
	return usl_hash_entry(n, struct l2tp_sess, by_peer_sid)->peer_sid ==
	       *(const uint32_t *)key;
}

static bool sess_eq_end(const struct usl_hnode *n, const void *key)
{
	const struct l2tp_sess *s = usl_hash_entry(n, struct l2tp_sess, by_end_id);
	const struct end_key *k = key;

	return s->cfg.outgoing == k->outgoing && s->cfg.remote_end_id_len == k->len &&
	       memcmp(s->end_id, k->p, k->len) == 0;
}

static uint32_t end_hash(const uint8_t *p, uint16_t len)
{
	return usl_hash_bytes(p, len, 0x6c327470);
}

int l2tp_sess_init_cc(struct l2tp_cc *cc)
{
	usl_list_init(&cc->sessions);
	usl_list_init(&cc->dead);
	/* most tunnels carry one or two sessions: start small, the tables grow */
	if (usl_hash_init(&cc->sess_by_sid, 1, sess_eq_sid) < 0)
		return -1;
	if (usl_hash_init(&cc->sess_by_peer_sid, 1, sess_eq_peer_sid) < 0)
		return -1;
	if (usl_hash_init(&cc->sess_by_end_id, 1, sess_eq_end) < 0)
		return -1;
	return 0;
}

static void sess_free(struct l2tp_sess *s)
{
	usl_timer_cancel(&s->setup_timer);
	usl_list_del(&s->link);
	if (s->end_id != no_end_id)
		free(s->end_id);
	l2tp_reason_free(&s->reason);
	free(s);
}

void l2tp_sess_fini_cc(struct l2tp_cc *cc)
{
	struct usl_list *pos, *tmp;

	/* sessions is initialised first, so a half-made cc is safe here */
	if (cc->sessions.next != NULL) {
		usl_list_foreach_safe(pos, tmp, &cc->sessions)
			sess_free(usl_list_entry(pos, struct l2tp_sess, link));
	}
	if (cc->dead.next != NULL) {
		usl_list_foreach_safe(pos, tmp, &cc->dead)
			sess_free(usl_list_entry(pos, struct l2tp_sess, link));
	}
	if (cc->sess_by_sid.buckets != NULL)
		usl_hash_destroy(&cc->sess_by_sid);
	if (cc->sess_by_peer_sid.buckets != NULL)
		usl_hash_destroy(&cc->sess_by_peer_sid);
	if (cc->sess_by_end_id.buckets != NULL)
		usl_hash_destroy(&cc->sess_by_end_id);
}

void l2tp_sess_reap(struct l2tp_cc *cc)
{
	while (!usl_list_empty(&cc->dead))
		sess_free(usl_list_first_entry(&cc->dead, struct l2tp_sess, link));
}

struct l2tp_sess *l2tp_cc_find_session(const struct l2tp_cc *cc, uint32_t local_sid)
{
	struct usl_hnode *n = usl_hash_lookup(&cc->sess_by_sid, &local_sid,
					      usl_hash_u32(local_sid));

	return n ? usl_hash_entry(n, struct l2tp_sess, by_sid) : NULL;
}

static struct l2tp_sess *sess_find_peer_sid(const struct l2tp_cc *cc, uint32_t peer_sid)
{
	struct usl_hnode *n = usl_hash_lookup(&cc->sess_by_peer_sid, &peer_sid,
					      usl_hash_u32(peer_sid));

	return n ? usl_hash_entry(n, struct l2tp_sess, by_peer_sid) : NULL;
}

static void sess_set_peer_sid(struct l2tp_sess *s, uint32_t peer_sid)
{
	if (s->in_peer_sid_hash)
		usl_hash_remove(&s->cc->sess_by_peer_sid, &s->by_peer_sid);
	s->peer_sid = peer_sid;
	s->in_peer_sid_hash = peer_sid != 0;
	if (peer_sid != 0)
		usl_hash_insert(&s->cc->sess_by_peer_sid, &s->by_peer_sid, usl_hash_u32(peer_sid));
}

static void sess_unlink_end_id(struct l2tp_sess *s)
{
	if (s->in_end_id_hash)
		usl_hash_remove(&s->cc->sess_by_end_id, &s->by_end_id);
	s->in_end_id_hash = false;
}

static void sess_unlink(struct l2tp_sess *s)
{
	struct l2tp_cc *cc = s->cc;

	if (s->in_sid_hash)
		usl_hash_remove(&cc->sess_by_sid, &s->by_sid);
	if (s->in_peer_sid_hash)
		usl_hash_remove(&cc->sess_by_peer_sid, &s->by_peer_sid);
	sess_unlink_end_id(s);
	s->in_sid_hash = s->in_peer_sid_hash = false;
	usl_list_del(&s->link);
	usl_list_add_tail(&cc->dead, &s->link);
	cc->n_sessions--;
}

/*
 * Live sessions, copied: callbacks may close any session while we walk, and
 * a closed one moves to the dead list (still valid memory until the reap).
 */
static struct l2tp_sess **sess_snapshot(struct l2tp_cc *cc, size_t *n)
{
	struct l2tp_sess **v;
	struct usl_list *pos;
	size_t i = 0;

	*n = 0;
	if (cc->n_sessions == 0)
		return NULL;
	v = calloc(cc->n_sessions, sizeof(*v));
	if (v == NULL)
		return NULL;
	usl_list_foreach(pos, &cc->sessions)
		if (i < cc->n_sessions)
			v[i++] = usl_list_entry(pos, struct l2tp_sess, link);
	*n = i;
	return v;
}

/* ------------------------------------------------------------------ */
/* state changes, closing */

static void sess_change_state(struct l2tp_sess *s, enum l2tp_sess_state to, const char *why)
{
	struct l2tp_cc *cc = s->cc;
	enum l2tp_sess_state from = s->state;

	if (from == to)
		return;
	s->state = to;
	if (to == L2TP_SESS_CLOSED && s->reason.set)
		sess_log(debug, s, "state change %s -> %s, reason: %s (result %u/%u%s%s)",
			 l2tp_sess_state_name(from), l2tp_sess_state_name(to), why,
			 s->reason.r.result, s->reason.r.error,
			 s->reason.text && s->reason.text[0] ? " " : "",
			 s->reason.text ? s->reason.text : "");
	else
		sess_log(debug, s, "state change %s -> %s, reason: %s",
			 l2tp_sess_state_name(from), l2tp_sess_state_name(to), why);
	if (to == L2TP_SESS_ESTABLISHED)
		usl_timer_cancel(&s->setup_timer);
	if (!cc->freed && cc->ops->sess_event != NULL)
		cc->ops->sess_event(cc, s, from, to,
				    to == L2TP_SESS_CLOSED && s->reason.set ? &s->reason.r : NULL);
}

static void sess_msg_init(struct l2tp_msg *m, uint16_t type, uint32_t local_sid,
			  uint32_t remote_sid)
{
	l2tp_msg_clear(m);
	m->type = type;
	l2tp_msg_set(m, L2TP_AVP_MESSAGE_TYPE);
	m->local_sid = local_sid;
	l2tp_msg_set(m, L2TP_AVP_LOCAL_SESSION_ID);
	m->remote_sid = remote_sid;
	l2tp_msg_set(m, L2TP_AVP_REMOTE_SESSION_ID);
}

static int sess_send_cdn_ids(struct l2tp_cc *cc, uint32_t local_sid, uint32_t remote_sid,
			     const struct l2tp_result *r)
{
	struct l2tp_msg m;

	sess_msg_init(&m, L2TP_MSG_CDN, local_sid, remote_sid);
	m.result = *r;
	l2tp_msg_set(&m, L2TP_AVP_RESULT_CODE);
	return l2tp_cc_send_msg(cc, &m);
}

/* Does the peer know of this session (so that a CDN means something)? */
static bool sess_peer_knows(const struct l2tp_sess *s)
{
	if (!s->initiator)
		return true;
	return s->state != L2TP_SESS_IDLE && s->state != L2TP_SESS_WAIT_TUNNEL;
}

static bool sess_dp_owes_delete(const struct l2tp_sess *s)
{
	return s->dp == L2TP_DP_PENDING || s->dp == L2TP_DP_UP || s->dp == L2TP_DP_PREPARED;
}

static void sess_dp_delete(struct l2tp_sess *s)
{
	struct l2tp_cc *cc = s->cc;

	s->dp_want = false;
	if (!sess_dp_owes_delete(s))
		return;		/* a failed create owes nothing */
	s->dp = L2TP_DP_NONE;
	if (!cc->freed && cc->ops->dp_session_delete != NULL)
		cc->ops->dp_session_delete(cc, s);
}

/* Tells the daemon, once, to let go of s (also after l2tp_cc_free()). */
static void sess_freed(struct l2tp_sess *s)
{
	struct l2tp_cc *cc = s->cc;

	if (!s->freed_owed)
		return;
	s->freed_owed = false;
	if (cc->ops->sess_freed != NULL)
		cc->ops->sess_freed(cc, s);
}

/*
 * Clears the session with s->reason: CDN when asked and the peer knows of
 * it, data plane deleted, closed reported, then sess_freed.
 */
static void sess_close(struct l2tp_sess *s, bool send_cdn, const char *why)
{
	struct l2tp_cc *cc = s->cc;

	if (s->state == L2TP_SESS_CLOSED)
		return;
	if (send_cdn && sess_peer_knows(s) && cc->state == L2TP_CC_ESTABLISHED)
		sess_send_cdn_ids(cc, s->local_sid, s->peer_sid, &s->reason.r);
	usl_timer_cancel(&s->setup_timer);
	sess_dp_delete(s);
	sess_unlink(s);
	sess_change_state(s, L2TP_SESS_CLOSED, why);
	sess_freed(s);
}

static void sess_closef(struct l2tp_sess *s, bool send_cdn, const char *why, uint16_t result,
			uint16_t error, const char *text)
{
	l2tp_reason_set(&s->reason, result, error, result == L2TP_CDN_GENERAL_ERROR,
			"%s", text);
	sess_close(s, send_cdn, why);
}

/* 7.3/7.4: a message the state does not expect: CDN, clean up. */
static enum l2tp_drop sess_fsm_error(struct l2tp_sess *s, const struct l2tp_msg *m)
{
	char text[64];

	snprintf(text, sizeof(text), "%s in state %s", l2tp_msg_type_name(m->type),
		 l2tp_sess_state_name(s->state));
	sess_closef(s, true, "unexpected message", L2TP_CDN_FSM_ERROR, 0, text);
	return L2TP_DROP_WRONG_STATE;
}

/* ------------------------------------------------------------------ */
/* creation */

static bool sess_cookie_len_ok(uint8_t len)
{
	return len == 0 || len == 4 || len == 8;
}

static void sess_apply_cfg(struct l2tp_sess *s, const struct l2tp_sess_cfg *cfg)
{
	const uint8_t *end = s->end_id;

	s->cfg = *cfg;
	s->cfg.remote_end_id = end;
	s->cookie_len = cfg->cookie_len;
	if (s->cookie_len > 0)
		l2tp_cc_random(s->cc, s->cookie, s->cookie_len);
}

static struct l2tp_sess *sess_new(struct l2tp_cc *cc, const struct l2tp_sess_cfg *cfg,
				  bool initiator, void *user)
{
	struct l2tp_sess *s;
	uint32_t sid = cfg->local_sid;

	if (sid == 0 && cc->ops->alloc_session_id != NULL)
		sid = cc->ops->alloc_session_id(cc);
	if (sid == 0 || l2tp_cc_find_session(cc, sid) != NULL) {
		errno = EAGAIN;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	/* most pseudowires have no Remote End ID: no allocation for them */
	s->end_id = cfg->remote_end_id_len ? malloc(cfg->remote_end_id_len) : no_end_id;
	if (s->end_id == NULL) {
		free(s);
		return NULL;
	}
	if (cfg->remote_end_id_len > 0)
		memcpy(s->end_id, cfg->remote_end_id, cfg->remote_end_id_len);
	s->cc = cc;
	s->user = user;
	s->initiator = initiator;
	s->local_sid = sid;
	s->peer_active = true;
	s->freed_owed = true;
	usl_timer_init(&s->setup_timer, sess_setup_expired);
	sess_apply_cfg(s, cfg);
	usl_hash_insert(&cc->sess_by_sid, &s->by_sid, usl_hash_u32(sid));
	s->in_sid_hash = true;
	usl_list_add_tail(&cc->sessions, &s->link);
	cc->n_sessions++;
	return s;
}

static void sess_arm_setup(struct l2tp_sess *s)
{
	usl_time t = s->cc->cfg.sess_setup_timeout;

	if (!usl_time_is_never(t) && t.ns > 0)
		usl_timer_arm(s->cc->timers, &s->setup_timer, t);
}

static void sess_setup_expired(struct usl_timer *t)
{
	struct l2tp_sess *s = usl_container_of(t, struct l2tp_sess, setup_timer);
	struct l2tp_cc *cc = s->cc;

	l2tp_cc_hold(cc);
	sess_closef(s, true, "setup timeout", L2TP_CDN_FSM_ERROR, 0,
		    "session setup timed out");
	l2tp_cc_release(cc);
}

/* ------------------------------------------------------------------ */
/* sending */

static void sess_put_common(struct l2tp_sess *s, struct l2tp_msg *m)
{
	if (s->cookie_len > 0) {
		memcpy(m->cookie, s->cookie, s->cookie_len);
		m->cookie_len = s->cookie_len;
		l2tp_msg_set(m, L2TP_AVP_ASSIGNED_COOKIE);
	}
	m->l2ss = s->cfg.l2ss;
	l2tp_msg_set(m, L2TP_AVP_L2_SPECIFIC_SUBLAYER);
	if (s->cfg.data_seq != 0) {
		m->data_seq = s->cfg.data_seq;
		l2tp_msg_set(m, L2TP_AVP_DATA_SEQUENCING);
	}
	m->circuit_status = s->cfg.circuit_status;
	l2tp_msg_set(m, L2TP_AVP_CIRCUIT_STATUS);
}

/* ICRQ or OCRQ (6.6, 6.9): Remote Session ID 0 is sent, never left out. */
static int sess_send_request(struct l2tp_sess *s)
{
	struct l2tp_msg m;

	sess_msg_init(&m, s->cfg.outgoing ? L2TP_MSG_OCRQ : L2TP_MSG_ICRQ, s->local_sid, 0);
	s->serial = ++s->cc->next_serial;
	m.serial = s->serial;
	l2tp_msg_set(&m, L2TP_AVP_SERIAL_NUMBER);
	m.pw_type = s->cfg.pw_type;
	l2tp_msg_set(&m, L2TP_AVP_PW_TYPE);
	m.remote_end_id.p = s->end_id;
	m.remote_end_id.len = s->cfg.remote_end_id_len;
	l2tp_msg_set(&m, L2TP_AVP_REMOTE_END_ID);
	if (s->sent_tie_breaker) {
		m.tie_breaker = s->tie_breaker;
		l2tp_msg_set(&m, L2TP_AVP_TIE_BREAKER);
	}
	sess_put_common(s, &m);
	return l2tp_cc_send_msg(s->cc, &m);
}

/* ICRP / OCRP (6.7, 6.10). */
static int sess_send_reply(struct l2tp_sess *s)
{
	struct l2tp_msg m;

	sess_msg_init(&m, s->cfg.outgoing ? L2TP_MSG_OCRP : L2TP_MSG_ICRP, s->local_sid,
		      s->peer_sid);
	sess_put_common(s, &m);
	return l2tp_cc_send_msg(s->cc, &m);
}

/* ICCN / OCCN (6.8, 6.11). */
static int sess_send_connected(struct l2tp_sess *s)
{
	struct l2tp_msg m;

	sess_msg_init(&m, s->cfg.outgoing ? L2TP_MSG_OCCN : L2TP_MSG_ICCN, s->local_sid,
		      s->peer_sid);
	m.l2ss = s->cfg.l2ss;
	l2tp_msg_set(&m, L2TP_AVP_L2_SPECIFIC_SUBLAYER);
	if (s->cfg.data_seq != 0) {
		m.data_seq = s->cfg.data_seq;
		l2tp_msg_set(&m, L2TP_AVP_DATA_SEQUENCING);
	}
	m.circuit_status = s->cfg.circuit_status;
	l2tp_msg_set(&m, L2TP_AVP_CIRCUIT_STATUS);
	return l2tp_cc_send_msg(s->cc, &m);
}

static int sess_send_sli(struct l2tp_sess *s)
{
	struct l2tp_msg m;

	sess_msg_init(&m, L2TP_MSG_SLI, s->local_sid, s->peer_sid);
	m.circuit_status = s->cfg.circuit_status;
	l2tp_msg_set(&m, L2TP_AVP_CIRCUIT_STATUS);
	return l2tp_cc_send_msg(s->cc, &m);
}

/* ------------------------------------------------------------------ */
/* data plane */

static void sess_on_dp_up(struct l2tp_sess *s)
{
	bool sender = s->initiator != s->cfg.outgoing;	/* ICRQ sender or OCRQ recipient */

	if (sender && sess_send_connected(s) < 0) {
		sess_closef(s, true, "cannot send ICCN/OCCN", L2TP_CDN_GENERAL_ERROR,
			    L2TP_ERR_NO_RESOURCES, "cannot send call connected");
		return;
	}
	sess_change_state(s, L2TP_SESS_ESTABLISHED, "data plane session up");
}

static void sess_dp_result(struct l2tp_sess *s, int err)
{
	char text[L2TP_REASON_MAX];

	if (err == 0) {
		s->dp = L2TP_DP_UP;
		/* made again after a crash (l2tp_cc_remake_dp): nothing to tell anyone */
		if (s->state != L2TP_SESS_ESTABLISHED)
			sess_on_dp_up(s);
		return;
	}
	s->dp = L2TP_DP_FAILED;	/* a failed create owes no delete */
	snprintf(text, sizeof(text), "data plane session: %s", strerror(err < 0 ? -err : err));
	sess_closef(s, true, "data plane session failed", L2TP_CDN_GENERAL_ERROR,
		    L2TP_ERR_NO_RESOURCES, text);
}

/*
 * We answered the call and wait for the peer's connected message: let the
 * data plane make the session now (cc.h, dp_session_prepare), so that its
 * work runs while the peer does its own rather than after.
 */
static void sess_dp_prepare(struct l2tp_sess *s)
{
	struct l2tp_cc *cc = s->cc;

	if (s->state != L2TP_SESS_WAIT_CONNECT || cc->dp != L2TP_DP_UP ||
	    cc->ops->dp_session_prepare == NULL || s->dp != L2TP_DP_NONE)
		return;
	if (cc->ops->dp_session_prepare(cc, s) == 0 && !cc->freed &&
	    s->state != L2TP_SESS_CLOSED)
		s->dp = L2TP_DP_PREPARED;
}

/* The call is agreed: ask for the data plane (once the tunnel's is up). */
static void sess_dp_start(struct l2tp_sess *s)
{
	struct l2tp_cc *cc = s->cc;
	int rc;

	if (cc->dp != L2TP_DP_UP) {
		s->dp_want = true;
		return;
	}
	s->dp_want = false;
	if (cc->ops->dp_session_create == NULL) {
		sess_dp_result(s, 0);
		return;
	}
	s->dp = L2TP_DP_PENDING;
	s->dp_in_call = true;
	s->dp_stashed = false;
	rc = cc->ops->dp_session_create(cc, s);
	s->dp_in_call = false;
	if (cc->freed || s->state == L2TP_SESS_CLOSED || s->dp != L2TP_DP_PENDING)
		return;
	if (rc != 0) {
		sess_dp_result(s, rc);
	} else if (s->dp_stashed) {
		sess_dp_result(s, s->dp_stashed_err);
	}
}

void l2tp_sess_dp_done(struct l2tp_sess *s, int err)
{
	struct l2tp_cc *cc;

	if (s == NULL || s->state == L2TP_SESS_CLOSED || s->dp != L2TP_DP_PENDING ||
	    s->cc->freed)
		return;
	if (s->dp_in_call) {
		s->dp_stashed = true;
		s->dp_stashed_err = err;
		return;
	}
	cc = s->cc;
	l2tp_cc_hold(cc);
	sess_dp_result(s, err);
	l2tp_cc_release(cc);
}

/* ------------------------------------------------------------------ */
/* received messages */

/* What every request/reply/connected message may tell us about the peer's side. */
static void sess_learn(struct l2tp_sess *s, const struct l2tp_msg *m)
{
	if (l2tp_msg_has(m, L2TP_AVP_ASSIGNED_COOKIE)) {
		s->peer_cookie_len = m->cookie_len <= 8 ? m->cookie_len : 8;
		memcpy(s->peer_cookie, m->cookie, s->peer_cookie_len);
	}
	if (l2tp_msg_has(m, L2TP_AVP_L2_SPECIFIC_SUBLAYER))
		s->peer_l2ss = m->l2ss;
	if (l2tp_msg_has(m, L2TP_AVP_DATA_SEQUENCING))
		s->peer_data_seq = m->data_seq;
	if (l2tp_msg_has(m, L2TP_AVP_CIRCUIT_STATUS)) {
		s->peer_circuit_status = m->circuit_status;
		s->peer_active = (m->circuit_status & L2TP_CIRCUIT_ACTIVE) != 0;
	}
}

/* 5.4.4: sequencing asked for, but no sublayer to carry the numbers. */
static bool sess_seq_without_l2ss(const struct l2tp_sess *s)
{
	return s->peer_data_seq != 0 && s->peer_l2ss == 0;
}

/*
 * L2-Specific Sublayer (5.4.4): the peer's AVP says what it requires on
 * what it receives, ours the same for us.  A data plane has one setting for
 * both directions (the kernel's l2spec_type), so both sides must agree: we
 * take the peer's type when we can carry it (none or default) and say so
 * (in our reply, or in our ICCN/OCCN when we asked first); without a
 * sublayer we cannot receive sequenced data either.  False, with the CDN
 * set, when the peer's type is one we cannot carry.
 */
static bool sess_agree_l2ss(struct l2tp_sess *s)
{
	if (s->peer_l2ss > L2TP_L2SS_DEFAULT) {
		char text[96];

		snprintf(text, sizeof(text), "L2-Specific Sublayer type %u not supported "
			 "(valid: 0 none, 1 default)", s->peer_l2ss);
		sess_closef(s, true, "unsupported L2-Specific Sublayer", L2TP_CDN_GENERAL_ERROR,
			    L2TP_ERR_BAD_VALUE, text);
		return false;
	}
	s->cfg.l2ss = s->peer_l2ss;
	if (s->cfg.l2ss == L2TP_L2SS_NONE)
		s->cfg.data_seq = 0;
	return true;
}

static enum l2tp_drop sess_on_reply(struct l2tp_sess *s, const struct l2tp_msg *m)
{
	s->got_reply = true;
	sess_unlink_end_id(s);
	sess_set_peer_sid(s, m->local_sid);
	sess_learn(s, m);
	if (sess_seq_without_l2ss(s)) {
		sess_closef(s, true, "sequencing without L2SS", L2TP_CDN_SEQ_WITHOUT_L2SS, 0,
			    "data sequencing requested without an L2-Specific Sublayer");
		return L2TP_DROP_NONE;
	}
	if (!sess_agree_l2ss(s))
		return L2TP_DROP_NONE;
	if (s->cfg.outgoing) {
		sess_change_state(s, L2TP_SESS_WAIT_CONNECT, "OCRP received");
		sess_dp_prepare(s);
		return L2TP_DROP_NONE;
	}
	sess_dp_start(s);	/* ICRP: our side first, ICCN when it is up */
	return L2TP_DROP_NONE;
}

static enum l2tp_drop sess_on_connected(struct l2tp_sess *s, const struct l2tp_msg *m)
{
	sess_learn(s, m);
	if (sess_seq_without_l2ss(s)) {
		sess_closef(s, true, "sequencing without L2SS", L2TP_CDN_SEQ_WITHOUT_L2SS, 0,
			    "data sequencing requested without an L2-Specific Sublayer");
		return L2TP_DROP_NONE;
	}
	/* the requester's last word (its ICCN may change its L2SS) */
	if (!sess_agree_l2ss(s))
		return L2TP_DROP_NONE;
	sess_dp_start(s);
	return L2TP_DROP_NONE;
}

static enum l2tp_drop sess_on_cdn(struct l2tp_sess *s, const struct l2tp_msg *m)
{
	l2tp_reason_from_msg(&s->reason, &m->result);
	if (s->peer_sid == 0 && m->local_sid != 0)
		sess_set_peer_sid(s, m->local_sid);
	sess_close(s, false, "CDN received");
	return L2TP_DROP_NONE;
}

/* 6.14: Circuit Status A=0 means stop sending towards the peer. */
static enum l2tp_drop sess_on_sli(struct l2tp_sess *s, const struct l2tp_msg *m)
{
	bool was = s->peer_active;

	sess_learn(s, m);
	if (was != s->peer_active)
		sess_log(debug, s, "peer circuit %s", s->peer_active ? "active" : "inactive");
	return L2TP_DROP_NONE;
}

static enum l2tp_drop sess_on_wen(struct l2tp_sess *s, const struct l2tp_msg *m)
{
	struct l2tp_cc *cc = s->cc;

	s->wen_count++;
	cc->st.wen_received++;
	if (cc->ops->sess_wen != NULL && !cc->freed)
		cc->ops->sess_wen(cc, s, m);
	return L2TP_DROP_NONE;
}

/* Was this reply/connected message meant for the kind of call s is? */
static bool sess_kind_ok(const struct l2tp_sess *s, uint16_t type)
{
	switch (type) {
	case L2TP_MSG_ICRP: case L2TP_MSG_ICCN:
		return !s->cfg.outgoing;
	case L2TP_MSG_OCRP: case L2TP_MSG_OCCN:
		return s->cfg.outgoing;
	default:
		return true;
	}
}

/* One FSM for the four roles: the state says where the call is, the type what came. */
static enum l2tp_drop sess_fsm(struct l2tp_sess *s, const struct l2tp_msg *m)
{
	bool reply = m->type == L2TP_MSG_ICRP || m->type == L2TP_MSG_OCRP;
	bool conn = m->type == L2TP_MSG_ICCN || m->type == L2TP_MSG_OCCN;

	switch (m->type) {
	case L2TP_MSG_CDN:
		return sess_on_cdn(s, m);
	case L2TP_MSG_SLI:
		return sess_on_sli(s, m);
	case L2TP_MSG_WEN:
		return sess_on_wen(s, m);
	default:
		break;
	}
	if (!sess_kind_ok(s, m->type))
		return sess_fsm_error(s, m);
	switch (s->state) {
	case L2TP_SESS_WAIT_REPLY:
		if (reply && s->initiator && !s->got_reply)
			return sess_on_reply(s, m);
		return sess_fsm_error(s, m);
	case L2TP_SESS_WAIT_CONNECT:
		/* ICRQ recipient waits for ICCN, OCRQ sender for OCCN */
		if (conn && (s->dp == L2TP_DP_NONE || s->dp == L2TP_DP_PREPARED) && !s->dp_want)
			return sess_on_connected(s, m);
		return sess_fsm_error(s, m);
	case L2TP_SESS_WAIT_CS_ANSWER:
	case L2TP_SESS_ESTABLISHED:
	default:
		return sess_fsm_error(s, m);
	}
}

static struct l2tp_sess *sess_lookup(const struct l2tp_cc *cc, const struct l2tp_msg *m)
{
	struct l2tp_sess *s = NULL;

	if (m->remote_sid != 0)
		s = l2tp_cc_find_session(cc, m->remote_sid);
	else if (m->local_sid != 0)	/* sent before the peer knew our ID */
		s = sess_find_peer_sid(cc, m->local_sid);
	return s;
}

/* ------------------------------------------------------------------ */
/* ICRQ / OCRQ received */

enum sess_tie { TIE_NONE, TIE_WIN, TIE_LOSE, TIE_BOTH_LOSE };

/* 5.4.4: lower value wins; only one sent: it wins; equal or none: both go. */
static enum sess_tie sess_tie_break(const struct l2tp_sess *ours, const struct l2tp_msg *m)
{
	bool t = l2tp_msg_has(m, L2TP_AVP_TIE_BREAKER);

	if (!ours->sent_tie_breaker && !t)
		return TIE_BOTH_LOSE;
	if (!t)
		return TIE_WIN;
	if (!ours->sent_tie_breaker)
		return TIE_LOSE;
	if (ours->tie_breaker == m->tie_breaker)
		return TIE_BOTH_LOSE;
	return ours->tie_breaker < m->tie_breaker ? TIE_WIN : TIE_LOSE;
}

static struct l2tp_sess *sess_find_crossing(struct l2tp_cc *cc, const struct l2tp_msg *m)
{
	struct end_key k = { m->remote_end_id.p, m->remote_end_id.len,
			     m->type == L2TP_MSG_OCRQ };
	struct usl_hnode *n;

	if (!l2tp_msg_has(m, L2TP_AVP_REMOTE_END_ID))
		return NULL;
	n = usl_hash_lookup(&cc->sess_by_end_id, &k, end_hash(k.p, k.len));
	return n ? usl_hash_entry(n, struct l2tp_sess, by_end_id) : NULL;
}

/*
 * A request crossing one of ours for the same circuit.  The loser drops its
 * own call silently (the winner's CDN 13 answers it); returns true when the
 * peer's request must be refused with CDN 13 (we won, or nobody did).
 */
static bool sess_resolve_tie(struct l2tp_cc *cc, const struct l2tp_msg *m, const char **text)
{
	struct l2tp_sess *ours = sess_find_crossing(cc, m);
	enum sess_tie t;

	if (ours == NULL)
		return false;
	t = sess_tie_break(ours, m);
	*text = t == TIE_BOTH_LOSE ? "session tie: both restart" : "lost session tie breaker";
	if (t == TIE_WIN)
		return true;
	sess_closef(ours, false, "session tie breaker lost", L2TP_CDN_LOST_TIE_BREAKER, 0,
		    *text);
	return t == TIE_BOTH_LOSE;
}

/* The engine's own checks on a request; 0 or a CDN result (reason set). */
static uint16_t sess_check_request(struct l2tp_sess *s, const struct l2tp_msg *m)
{
	struct l2tp_cc *cc = s->cc;
	unsigned i;
	bool pw_ok = false;

	if (m->has_unknown_mandatory) {
		l2tp_reason_set(&s->reason, L2TP_CDN_GENERAL_ERROR, L2TP_ERR_UNKNOWN_MANDATORY_AVP,
				true, "unknown mandatory AVP %u (vendor %u)",
				m->unknown_mandatory_type, m->unknown_mandatory_vendor);
		return L2TP_CDN_GENERAL_ERROR;
	}
	for (i = 0; i < cc->cfg.n_pw_caps; i++)
		pw_ok |= cc->cfg.pw_caps[i] == m->pw_type;
	if (!pw_ok) {
		l2tp_reason_set(&s->reason, L2TP_CDN_PW_TYPE_UNSUPPORTED, 0, false,
				"pseudowire type %u (%s) not supported", m->pw_type,
				l2tp_pw_type_name(m->pw_type));
		return L2TP_CDN_PW_TYPE_UNSUPPORTED;
	}
	if (sess_seq_without_l2ss(s)) {
		l2tp_reason_set(&s->reason, L2TP_CDN_SEQ_WITHOUT_L2SS, 0, false,
				"data sequencing requested without an L2-Specific Sublayer");
		return L2TP_CDN_SEQ_WITHOUT_L2SS;
	}
	return 0;
}

/* Defaults the daemon sees in sess_accept: the request's PW and End ID. */
static void sess_request_cfg(const struct l2tp_msg *m, struct l2tp_sess_cfg *cfg)
{
	l2tp_sess_cfg_init(cfg);
	cfg->pw_type = m->pw_type;
	cfg->outgoing = m->type == L2TP_MSG_OCRQ;
	if (l2tp_msg_has(m, L2TP_AVP_REMOTE_END_ID)) {
		cfg->remote_end_id = m->remote_end_id.p;
		cfg->remote_end_id_len = m->remote_end_id.len;
	}
}

static enum l2tp_drop sess_accept(struct l2tp_sess *s, const struct l2tp_msg *m)
{
	struct l2tp_cc *cc = s->cc;
	struct l2tp_sess_cfg cfg;
	int rc;

	if (sess_check_request(s, m) != 0) {
		sess_close(s, true, "request refused");
		return m->has_unknown_mandatory ? L2TP_DROP_UNKNOWN_MANDATORY : L2TP_DROP_NONE;
	}
	sess_request_cfg(m, &cfg);
	rc = cc->ops->sess_accept ? cc->ops->sess_accept(cc, s, m, &cfg) : 0;
	if (cc->freed || s->state == L2TP_SESS_CLOSED)
		return L2TP_DROP_NONE;
	if (rc == 0 && !sess_cookie_len_ok(cfg.cookie_len))
		rc = L2TP_CDN_GENERAL_ERROR;
	if (rc != 0) {
		sess_closef(s, true, "refused by the daemon", (uint16_t)rc,
			    rc == L2TP_CDN_GENERAL_ERROR ? L2TP_ERR_BAD_VALUE : 0,
			    "call refused");
		return L2TP_DROP_NONE;
	}
	/* the session's own settings; PW type and direction stay the request's */
	cfg.pw_type = m->pw_type;
	cfg.outgoing = m->type == L2TP_MSG_OCRQ;
	cfg.remote_end_id = s->end_id;
	cfg.remote_end_id_len = s->cfg.remote_end_id_len;
	sess_apply_cfg(s, &cfg);
	if (!sess_agree_l2ss(s))
		return L2TP_DROP_NONE;
	if (sess_send_reply(s) < 0) {
		sess_closef(s, true, "cannot send reply", L2TP_CDN_GENERAL_ERROR,
			    L2TP_ERR_NO_RESOURCES, "cannot send reply");
		return L2TP_DROP_NONE;
	}
	s->got_reply = true;
	sess_arm_setup(s);
	if (!cfg.outgoing) {
		sess_change_state(s, L2TP_SESS_WAIT_CONNECT, "ICRQ accepted");
		sess_dp_prepare(s);
		return L2TP_DROP_NONE;
	}
	sess_change_state(s, L2TP_SESS_WAIT_CS_ANSWER, "OCRQ accepted");
	if (s->state == L2TP_SESS_WAIT_CS_ANSWER)
		sess_dp_start(s);	/* "place the call", then OCCN */
	return L2TP_DROP_NONE;
}

static enum l2tp_drop sess_on_request(struct l2tp_cc *cc, const struct l2tp_msg *m)
{
	struct l2tp_sess_cfg cfg;
	struct l2tp_sess *s;
	const char *tie_text = NULL;
	bool refuse;

	if (m->local_sid == 0)
		return L2TP_DROP_BAD_AVP_VALUE;
	refuse = sess_resolve_tie(cc, m, &tie_text);
	sess_request_cfg(m, &cfg);
	s = sess_new(cc, &cfg, false, NULL);
	if (s == NULL) {
		/* a CDN needs a Local Session ID: the peer's setup timer clears it */
		log_warnx("tunnel %u: no session ID for the %s from session %u",
			  cc->local_ccid, l2tp_msg_type_name(m->type), m->local_sid);
		return L2TP_DROP_LIMIT;
	}
	sess_set_peer_sid(s, m->local_sid);
	s->serial = m->serial;
	if (!l2tp_msg_has(m, L2TP_AVP_SERIAL_NUMBER)) {
		/* RFC 3931 requires it, some LACs omit it, nothing needs it */
		cc->st.rx_no_serial++;
		log_debug("tunnel %u: %s from session %u without Serial Number: accepted",
			  cc->local_ccid, l2tp_msg_type_name(m->type), m->local_sid);
	}
	sess_learn(s, m);
	if (refuse) {
		sess_closef(s, true, "session tie breaker", L2TP_CDN_LOST_TIE_BREAKER, 0,
			    tie_text);
		return L2TP_DROP_NONE;
	}
	return sess_accept(s, m);
}

enum l2tp_drop l2tp_sess_input(struct l2tp_cc *cc, const struct l2tp_msg *m)
{
	struct l2tp_sess *s;

	if (m->type == L2TP_MSG_ICRQ || m->type == L2TP_MSG_OCRQ)
		return sess_on_request(cc, m);
	s = sess_lookup(cc, m);
	if (s == NULL)
		return L2TP_DROP_UNKNOWN_SESSION;
	if (m->has_unknown_mandatory && m->type != L2TP_MSG_CDN) {
		l2tp_reason_set(&s->reason, L2TP_CDN_GENERAL_ERROR, L2TP_ERR_UNKNOWN_MANDATORY_AVP,
				true, "unknown mandatory AVP %u (vendor %u) in %s",
				m->unknown_mandatory_type, m->unknown_mandatory_vendor,
				l2tp_msg_type_name(m->type));
		sess_close(s, true, "unknown mandatory AVP");
		return L2TP_DROP_UNKNOWN_MANDATORY;
	}
	return sess_fsm(s, m);
}

const char *l2tp_sess_answer_malformed(struct l2tp_cc *cc, const struct l2tp_msg *m,
				       uint16_t error, const char *text)
{
	struct l2tp_sess *s;

	if (m->type == L2TP_MSG_ICRQ || m->type == L2TP_MSG_OCRQ) {
		struct l2tp_sess_cfg cfg;

		/* refuse the call by the peer's ID, if it gave one (a CDN needs ours too) */
		if (m->local_sid == 0)
			return "ignored: no Local Session ID to answer";
		if (sess_find_peer_sid(cc, m->local_sid) != NULL)
			return "ignored: its Local Session ID is in use";
		l2tp_sess_cfg_init(&cfg);
		cfg.outgoing = m->type == L2TP_MSG_OCRQ;
		s = sess_new(cc, &cfg, false, NULL);
		if (s == NULL)
			return "ignored: no session ID left to refuse it with";
		sess_set_peer_sid(s, m->local_sid);
		sess_closef(s, true, "malformed request", L2TP_CDN_GENERAL_ERROR, error, text);
		return "refused with CDN result 2";
	}
	s = sess_lookup(cc, m);
	if (s == NULL)
		return "ignored: no such session";
	/* a malformed reply still names the peer's session: the CDN must reach it */
	if (s->peer_sid == 0 && m->local_sid != 0 && sess_find_peer_sid(cc, m->local_sid) == NULL)
		sess_set_peer_sid(s, m->local_sid);
	if (m->type == L2TP_MSG_CDN) {
		l2tp_reason_set(&s->reason, L2TP_CDN_GENERAL_ERROR, error, true, "%s", text);
		sess_close(s, false, "malformed CDN received");
		return "its session cleared as the CDN asks";
	}
	sess_closef(s, true, "malformed message", L2TP_CDN_GENERAL_ERROR, error, text);
	return "its session cleared with CDN result 2";
}

void l2tp_sess_input_malformed(struct l2tp_cc *cc, const struct l2tp_msg *m, uint16_t error,
			       const char *text)
{
	(void)l2tp_sess_answer_malformed(cc, m, error, text);
}

/* ------------------------------------------------------------------ */
/* connection events */

/* Sends the ICRQ/OCRQ of a call waiting for the connection. */
static void sess_start_call(struct l2tp_sess *s)
{
	if (!l2tp_cc_peer_has_pw(s->cc, s->cfg.pw_type)) {
		sess_closef(s, false, "PW type not offered by the peer",
			    L2TP_CDN_PW_TYPE_UNSUPPORTED, 0,
			    "peer did not advertise this pseudowire type");
		return;
	}
	if (sess_send_request(s) < 0) {
		sess_closef(s, false, "cannot send request", L2TP_CDN_GENERAL_ERROR,
			    L2TP_ERR_NO_RESOURCES, "cannot send request");
		return;
	}
	sess_arm_setup(s);
	sess_change_state(s, L2TP_SESS_WAIT_REPLY, s->cfg.outgoing ? "OCRQ sent" : "ICRQ sent");
}

void l2tp_sess_cc_up(struct l2tp_cc *cc)
{
	struct l2tp_sess **v;
	size_t i, n;

	v = sess_snapshot(cc, &n);
	for (i = 0; i < n && !cc->freed && cc->state == L2TP_CC_ESTABLISHED; i++)
		if (v[i]->state == L2TP_SESS_WAIT_TUNNEL)
			sess_start_call(v[i]);
	free(v);
}

void l2tp_sess_cc_dp_up(struct l2tp_cc *cc)
{
	struct l2tp_sess **v;
	size_t i, n;

	v = sess_snapshot(cc, &n);
	for (i = 0; i < n && !cc->freed && cc->dp == L2TP_DP_UP; i++) {
		if (v[i]->state == L2TP_SESS_CLOSED)
			continue;
		if (v[i]->dp_want)
			sess_dp_start(v[i]);
		else
			sess_dp_prepare(v[i]);	/* answered before the tunnel's was up */
	}
	free(v);
}

void l2tp_sess_cc_down(struct l2tp_cc *cc, const struct l2tp_reason *why)
{
	struct l2tp_sess **v;
	struct l2tp_sess *s;
	size_t i, n;

	v = sess_snapshot(cc, &n);
	for (i = 0; i < n; i++) {
		s = v[i];
		if (s->state == L2TP_SESS_CLOSED)
			continue;
		l2tp_reason_set(&s->reason, L2TP_CDN_GENERAL_ERROR, L2TP_ERR_NO_CONTROL_CONNECTION,
				true, "control connection down%s%s",
				why->text && why->text[0] ? ": " : "", why->text ? why->text : "");
		sess_close(s, false, "control connection down");
	}
	free(v);
}

void l2tp_sess_cc_forget(struct l2tp_cc *cc)
{
	struct l2tp_sess *s;
	struct usl_list *pos;
	bool had;

	while (!usl_list_empty(&cc->sessions)) {
		s = usl_list_first_entry(&cc->sessions, struct l2tp_sess, link);
		usl_timer_cancel(&s->setup_timer);
		had = sess_dp_owes_delete(s);
		s->dp = L2TP_DP_NONE;
		sess_unlink(s);
		s->state = L2TP_SESS_CLOSED;
		if (had && cc->ops->dp_session_delete != NULL)
			cc->ops->dp_session_delete(cc, s);
		sess_freed(s);
	}
	/* closing when the daemon freed the cc from inside its event */
	usl_list_foreach(pos, &cc->dead)
		sess_freed(usl_list_entry(pos, struct l2tp_sess, link));
}

/* ------------------------------------------------------------------ */
/* failover (RFC 4951): reconciling sessions after a control channel reset */

void l2tp_sess_remake_dp(struct l2tp_cc *cc)
{
	struct usl_list *pos;

	usl_list_foreach(pos, &cc->sessions) {
		struct l2tp_sess *s = usl_list_entry(pos, struct l2tp_sess, link);

		s->dp = L2TP_DP_NONE;
		s->dp_want = s->state == L2TP_SESS_ESTABLISHED;
	}
}

/* Step I: what was being set up is cleared on both sides, without CDN. */
void l2tp_sess_failover_reset(struct l2tp_cc *cc)
{
	struct l2tp_sess **v;
	size_t i, n;

	v = sess_snapshot(cc, &n);
	for (i = 0; i < n && !cc->freed; i++)
		if (v[i]->state != L2TP_SESS_ESTABLISHED && v[i]->state != L2TP_SESS_CLOSED)
			sess_closef(v[i], false, "failover", L2TP_CDN_GENERAL_ERROR,
				    L2TP_ERR_NONE, "not established when the control "
				    "connection failed over");
	free(v);
}

static int sess_send_fss(struct l2tp_cc *cc, uint16_t type, const struct l2tp_fss *fss,
			 unsigned n)
{
	struct l2tp_msg m;

	l2tp_msg_clear(&m);
	m.type = type;
	l2tp_msg_set(&m, L2TP_AVP_MESSAGE_TYPE);
	memcpy(m.fss, fss, n * sizeof(*fss));
	m.n_fss = (uint16_t)n;
	l2tp_msg_set(&m, L2TP_AVP_FAILOVER_SESSION);
	return l2tp_cc_send_msg(cc, &m);
}

/* Steps II and III: an FSQ for each established session (L2TP_MAX_FSS a message). */
unsigned l2tp_sess_failover_query(struct l2tp_cc *cc)
{
	struct l2tp_fss fss[L2TP_MAX_FSS];
	struct usl_list *pos;
	unsigned n = 0, total = 0;

	usl_list_foreach(pos, &cc->sessions) {
		struct l2tp_sess *s = usl_list_entry(pos, struct l2tp_sess, link);

		if (s->state != L2TP_SESS_ESTABLISHED)
			continue;
		fss[n].sid = s->local_sid;
		fss[n].remote_sid = s->peer_sid;
		total++;
		if (++n == L2TP_MAX_FSS) {
			sess_send_fss(cc, L2TP_MSG_FSQ, fss, n);
			n = 0;
		}
	}
	if (n > 0)
		sess_send_fss(cc, L2TP_MSG_FSQ, fss, n);
	return total;
}

/*
 * An FSQ: every Failover Session State gets one back.  Ours when the
 * session it names (by our ID) is established and paired with the
 * sender's ID; else Session ID 0, "clear it".  A session of ours paired
 * with another ID of the peer's is not cleared here: the FSQ we send after
 * our reset (l2tp_sess_failover_query) settles it.
 */
enum l2tp_drop l2tp_sess_on_fsq(struct l2tp_cc *cc, const struct l2tp_msg *m)
{
	struct l2tp_fss out[L2TP_MAX_FSS];

	for (unsigned i = 0; i < m->n_fss; i++) {
		const struct l2tp_sess *s = l2tp_cc_find_session(cc, m->fss[i].remote_sid);
		bool ours = s != NULL && s->state == L2TP_SESS_ESTABLISHED &&
			    s->peer_sid == m->fss[i].sid;

		out[i].sid = ours ? s->local_sid : 0;
		out[i].remote_sid = m->fss[i].sid;
	}
	if (m->n_fss > 0)
		sess_send_fss(cc, L2TP_MSG_FSR, out, m->n_fss);
	return L2TP_DROP_NONE;
}

/* An FSR: a session the peer answers with Session ID 0 is cleared, silently. */
enum l2tp_drop l2tp_sess_on_fsr(struct l2tp_cc *cc, const struct l2tp_msg *m)
{
	for (unsigned i = 0; i < m->n_fss && !cc->freed; i++) {
		struct l2tp_sess *s = l2tp_cc_find_session(cc, m->fss[i].remote_sid);

		if (s == NULL || s->state == L2TP_SESS_CLOSED)
			continue;
		if (m->fss[i].sid != 0 && m->fss[i].sid == s->peer_sid)
			continue;	/* recovered */
		sess_closef(s, false, "failover", L2TP_CDN_GENERAL_ERROR, L2TP_ERR_BAD_SESSION_ID,
			    m->fss[i].sid == 0 ? "the peer no longer has it (failover)"
					       : "the peer pairs it with another session (failover)");
	}
	return L2TP_DROP_NONE;
}

/* ------------------------------------------------------------------ */
/* local requests */

struct l2tp_sess *l2tp_sess_open(struct l2tp_cc *cc, const struct l2tp_sess_cfg *cfg,
				 void *user)
{
	struct l2tp_sess *s;

	if (cc->freed || cc->state >= L2TP_CC_STOPPING) {
		errno = ENOTCONN;
		return NULL;
	}
	if (!sess_cookie_len_ok(cfg->cookie_len) ||
	    (cfg->remote_end_id_len > 0 && cfg->remote_end_id == NULL)) {
		errno = EINVAL;
		return NULL;
	}
	if (cc->state == L2TP_CC_ESTABLISHED && !l2tp_cc_peer_has_pw(cc, cfg->pw_type)) {
		errno = EPROTONOSUPPORT;
		return NULL;
	}
	l2tp_cc_hold(cc);
	s = sess_new(cc, cfg, true, user);
	if (s == NULL)
		goto out;
	s->sent_tie_breaker = cfg->send_tie_breaker;
	s->tie_breaker = cfg->tie_breaker;
	while (s->sent_tie_breaker && s->tie_breaker == 0)
		l2tp_cc_random(cc, &s->tie_breaker, sizeof(s->tie_breaker));
	usl_hash_insert(&cc->sess_by_end_id, &s->by_end_id,
			end_hash(s->end_id, s->cfg.remote_end_id_len));
	s->in_end_id_hash = true;
	if (cc->state == L2TP_CC_ESTABLISHED)
		sess_start_call(s);
	else
		sess_change_state(s, L2TP_SESS_WAIT_TUNNEL, "waiting for the control connection");
	if (s->state == L2TP_SESS_CLOSED) {
		errno = EIO;
		s = NULL;
	}
out:
	l2tp_cc_release(cc);
	return s;
}

void l2tp_sess_close(struct l2tp_sess *s, uint16_t result, uint16_t error, const char *msg)
{
	struct l2tp_cc *cc = s->cc;

	if (cc->freed || s->state == L2TP_SESS_CLOSED)
		return;
	l2tp_cc_hold(cc);
	l2tp_reason_set(&s->reason, result, error, error != 0 || result == L2TP_CDN_GENERAL_ERROR,
			"%s", msg ? msg : "");
	sess_close(s, true, "local close");
	l2tp_cc_release(cc);
}

int l2tp_sess_set_circuit_status(struct l2tp_sess *s, bool active)
{
	struct l2tp_cc *cc = s->cc;
	int rc = 0;

	if (active)
		s->cfg.circuit_status |= L2TP_CIRCUIT_ACTIVE;
	else
		s->cfg.circuit_status &= (uint16_t)~L2TP_CIRCUIT_ACTIVE;
	s->cfg.circuit_status &= (uint16_t)~L2TP_CIRCUIT_NEW;
	if (s->state != L2TP_SESS_ESTABLISHED || cc->freed) {
		errno = ENOTCONN;
		return -1;
	}
	l2tp_cc_hold(cc);
	rc = sess_send_sli(s);
	l2tp_cc_release(cc);
	return rc;
}

/* ------------------------------------------------------------------ */
/* accessors */

enum l2tp_sess_state l2tp_sess_state(const struct l2tp_sess *s) { return s->state; }
enum l2tp_dp_state l2tp_sess_dp_state(const struct l2tp_sess *s) { return s->dp; }
struct l2tp_cc *l2tp_sess_cc(const struct l2tp_sess *s) { return s->cc; }
uint32_t l2tp_sess_local_sid(const struct l2tp_sess *s) { return s->local_sid; }
uint32_t l2tp_sess_remote_sid(const struct l2tp_sess *s) { return s->peer_sid; }
uint32_t l2tp_sess_serial(const struct l2tp_sess *s) { return s->serial; }
bool l2tp_sess_is_initiator(const struct l2tp_sess *s) { return s->initiator; }
bool l2tp_sess_is_outgoing(const struct l2tp_sess *s) { return s->cfg.outgoing; }
uint16_t l2tp_sess_pw_type(const struct l2tp_sess *s) { return s->cfg.pw_type; }
uint16_t l2tp_sess_l2ss(const struct l2tp_sess *s) { return s->cfg.l2ss; }
uint16_t l2tp_sess_peer_l2ss(const struct l2tp_sess *s) { return s->peer_l2ss; }
uint16_t l2tp_sess_data_seq(const struct l2tp_sess *s) { return s->cfg.data_seq; }
uint16_t l2tp_sess_peer_data_seq(const struct l2tp_sess *s) { return s->peer_data_seq; }
uint16_t l2tp_sess_circuit_status(const struct l2tp_sess *s) { return s->cfg.circuit_status; }
uint16_t l2tp_sess_peer_circuit_status(const struct l2tp_sess *s) { return s->peer_circuit_status; }
bool l2tp_sess_peer_active(const struct l2tp_sess *s) { return s->peer_active; }
uint64_t l2tp_sess_wen_count(const struct l2tp_sess *s) { return s->wen_count; }
void *l2tp_sess_user(const struct l2tp_sess *s) { return s->user; }
void l2tp_sess_set_user(struct l2tp_sess *s, void *user) { s->user = user; }

const uint8_t *l2tp_sess_cookie(const struct l2tp_sess *s, uint8_t *len)
{
	*len = s->cookie_len;
	return s->cookie;
}

const uint8_t *l2tp_sess_peer_cookie(const struct l2tp_sess *s, uint8_t *len)
{
	*len = s->peer_cookie_len;
	return s->peer_cookie;
}

const uint8_t *l2tp_sess_remote_end_id(const struct l2tp_sess *s, uint16_t *len)
{
	*len = s->cfg.remote_end_id_len;
	return s->end_id;
}

const struct l2tp_result *l2tp_sess_close_reason(const struct l2tp_sess *s)
{
	return s->state == L2TP_SESS_CLOSED && s->reason.set ? &s->reason.r : NULL;
}

/* ---- restart handover ---------------------------------------------------- */

bool l2tp_sess_can_save(const struct l2tp_sess *s)
{
	return s->state == L2TP_SESS_ESTABLISHED && s->dp == L2TP_DP_UP;
}

void l2tp_sess_save(const struct l2tp_sess *s, struct usl_pack *w)
{
	usl_pack_u32(w, s->local_sid);
	usl_pack_u32(w, s->peer_sid);
	usl_pack_u32(w, s->serial);
	usl_pack_u8(w, s->initiator);
	usl_pack_u8(w, s->got_reply);
	usl_pack_u16(w, s->cfg.pw_type);
	usl_pack_u16(w, s->cfg.l2ss);
	usl_pack_u16(w, s->cfg.data_seq);
	usl_pack_u16(w, s->cfg.circuit_status);
	usl_pack_u8(w, s->cfg.outgoing);
	usl_pack_blob(w, s->end_id, s->cfg.remote_end_id_len);
	usl_pack_blob(w, s->cookie, s->cookie_len);
	usl_pack_blob(w, s->peer_cookie, s->peer_cookie_len);
	usl_pack_u16(w, s->peer_l2ss);
	usl_pack_u16(w, s->peer_data_seq);
	usl_pack_u16(w, s->peer_circuit_status);
	usl_pack_u8(w, s->peer_active);
	usl_pack_u64(w, s->tie_breaker);
	usl_pack_u8(w, s->sent_tie_breaker);
	usl_pack_u64(w, s->wen_count);
}

static bool cookie_copy(uint8_t *dst, uint8_t *dst_len, const uint8_t *p, size_t n)
{
	if (n != 0 && n != 4 && n != 8)
		return false;
	if (n > 0)
		memcpy(dst, p, n);
	*dst_len = (uint8_t)n;
	return true;
}

struct l2tp_sess *l2tp_sess_restore(struct l2tp_cc *cc, struct usl_unpack *r)
{
	struct l2tp_sess_cfg cfg;
	const uint8_t *end, *cookie, *peer_cookie;
	size_t end_len, cookie_len, peer_cookie_len;
	uint32_t peer_sid, serial;
	bool initiator, got_reply;
	struct l2tp_sess *s;

	l2tp_sess_cfg_init(&cfg);
	cfg.local_sid = usl_unpack_u32(r);
	peer_sid = usl_unpack_u32(r);
	serial = usl_unpack_u32(r);
	initiator = usl_unpack_bool(r);
	got_reply = usl_unpack_bool(r);
	cfg.pw_type = usl_unpack_u16(r);
	cfg.l2ss = usl_unpack_u16(r);
	cfg.data_seq = usl_unpack_u16(r);
	cfg.circuit_status = usl_unpack_u16(r);
	cfg.outgoing = usl_unpack_bool(r);
	end = usl_unpack_blob(r, &end_len);
	cookie = usl_unpack_blob(r, &cookie_len);
	peer_cookie = usl_unpack_blob(r, &peer_cookie_len);
	if (r->bad || cfg.local_sid == 0 || peer_sid == 0 || end_len > UINT16_MAX ||
	    sess_find_peer_sid(cc, peer_sid) != NULL) {
		r->bad = true;
		return NULL;
	}
	cfg.remote_end_id = end;
	cfg.remote_end_id_len = (uint16_t)end_len;
	cfg.cookie_len = 0;	/* ours is restored below, not drawn */
	s = sess_new(cc, &cfg, initiator, NULL);
	if (s == NULL) {
		r->bad = true;
		return NULL;
	}
	s->serial = serial;
	s->got_reply = got_reply;
	sess_set_peer_sid(s, peer_sid);
	if (!cookie_copy(s->cookie, &s->cookie_len, cookie, cookie_len) ||
	    !cookie_copy(s->peer_cookie, &s->peer_cookie_len, peer_cookie, peer_cookie_len))
		r->bad = true;
	s->cfg.cookie_len = s->cookie_len;
	s->peer_l2ss = usl_unpack_u16(r);
	s->peer_data_seq = usl_unpack_u16(r);
	s->peer_circuit_status = usl_unpack_u16(r);
	s->peer_active = usl_unpack_bool(r);
	s->tie_breaker = usl_unpack_u64(r);
	s->sent_tie_breaker = usl_unpack_bool(r);
	s->wen_count = usl_unpack_u64(r);
	/* established with its data plane session in place: the kernel kept it */
	s->state = L2TP_SESS_ESTABLISHED;
	s->dp = L2TP_DP_UP;
	return r->bad ? NULL : s;
}

void l2tp_cc_close_unowned_sessions(struct l2tp_cc *cc, uint16_t result, const char *msg)
{
	struct usl_list *pos, *tmp;

	l2tp_cc_hold(cc);
	usl_list_foreach_safe(pos, tmp, &cc->sessions) {
		struct l2tp_sess *s = usl_list_entry(pos, struct l2tp_sess, link);

		if (s->user == NULL && s->state != L2TP_SESS_CLOSED)
			l2tp_sess_close(s, result, 0, msg);
	}
	l2tp_cc_release(cc);
}
