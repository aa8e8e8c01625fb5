/*
 * src/proto/sess.h - L2TPv3 sessions (RFC 3931 3.4, 5.4.4, 5.4.5, 7.3, 7.4).
 *
 * A session lives inside one control connection (see cc.h).  The engine owns
 * session memory: it creates a session on l2tp_sess_open() or on an accepted
 * ICRQ/OCRQ, and frees it once it is closed, after ops->sess_freed; the
 * pointer must not be used after that callback.  A closed session leaves the
 * cc's index at once (l2tp_cc_find_session() no longer finds it).
 *
 * Who does what (the default is an incoming call, we are the LAC):
 *   ICRQ sender:    ICRQ -> (ICRP) -> dp_session_create -> ICCN -> established
 *   ICRQ recipient: (ICRQ) -> ICRP -> (ICCN) -> dp_session_create -> established
 *   OCRQ sender:    OCRQ -> (OCRP) -> (OCCN) -> dp_session_create -> established
 *   OCRQ recipient: (OCRQ) -> OCRP -> dp_session_create -> OCCN -> established
 * A data plane session is only requested once the tunnel's is up.  The two
 * that wait for a connected message may have it prepared while they wait
 * (dp_session_prepare, right after ICRP sent / OCRP received), so that both
 * ends' data plane work runs at once.
 */
#ifndef L2TP_SESS_H
#define L2TP_SESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "msg.h"

struct l2tp_cc;
struct l2tp_sess;

/* Session states: RFC 3931 7.3.1/7.3.2/7.4.1/7.4.2 plus the final closed. */
enum l2tp_sess_state {
	L2TP_SESS_IDLE = 0,
	L2TP_SESS_WAIT_TUNNEL,		/* wait-control-conn: opened before the cc is up */
	L2TP_SESS_WAIT_REPLY,		/* ICRQ/OCRQ sent (ICRQ sender: also dp pending) */
	L2TP_SESS_WAIT_CONNECT,		/* ICRP sent / OCRP received */
	L2TP_SESS_WAIT_CS_ANSWER,	/* OCRQ recipient: OCRP sent, placing the call */
	L2TP_SESS_ESTABLISHED,
	L2TP_SESS_CLOSED,
	L2TP_SESS_STATE__COUNT
};
/* "idle", "wait-tunnel", "wait-reply", "wait-connect", "wait-cs-answer", "established", "closed" */
const char *l2tp_sess_state_name(enum l2tp_sess_state s);

/*
 * Local settings of one session.  For l2tp_sess_open() the caller fills it;
 * for an incoming ICRQ/OCRQ the engine passes it pre-filled to
 * ops->sess_accept.  Copied by the engine.
 */
struct l2tp_sess_cfg {
	uint16_t pw_type;		/* enum l2tp_pw_type */
	uint8_t cookie_len;		/* 0, 4 or 8: the engine draws the cookie we assign */
	uint16_t l2ss;			/* L2-Specific Sublayer we require: 0 none, 1 default */
	uint16_t data_seq;		/* Data Sequencing we ask for: 0 none, 1 non-IP, 2 all */
	uint16_t circuit_status;	/* L2TP_CIRCUIT_ACTIVE / _NEW bits we send */
	const uint8_t *remote_end_id;	/* Remote End ID (the circuit's shared name) */
	uint16_t remote_end_id_len;
	bool outgoing;			/* l2tp_sess_open: OCRQ (outgoing call) instead of ICRQ */
	/*
	 * Session Tie Breaker AVP in our ICRQ/OCRQ: tie_breaker 0 draws a
	 * random value.  Off by default.
	 */
	bool send_tie_breaker;
	uint64_t tie_breaker;
	uint32_t local_sid;		/* 0: ask ops->alloc_session_id (the normal case) */
};
/* Zeroes cfg, Ethernet PW, circuit active+new, no cookie/L2SS/sequencing. */
void l2tp_sess_cfg_init(struct l2tp_sess_cfg *cfg);

/*
 * Opens a call on cc (ICRQ, or OCRQ when cfg->outgoing).  When cc is not
 * established yet the session waits (wait-tunnel) and the request goes out
 * once it is.  Returns NULL with errno: ENOTCONN (cc stopping/closed),
 * EPROTONOSUPPORT (the peer did not advertise cfg->pw_type), EINVAL (bad
 * cookie length), EAGAIN (no session ID), ENOMEM.
 */
struct l2tp_sess *l2tp_sess_open(struct l2tp_cc *cc, const struct l2tp_sess_cfg *cfg,
				 void *user);

/*
 * Clears the session: sends CDN with result/error/msg when the peer knows
 * of it, deletes the data plane session, reports closed and frees it.
 */
void l2tp_sess_close(struct l2tp_sess *s, uint16_t result, uint16_t error, const char *msg);

/*
 * Completion of ops->dp_session_create: 0 or a negative errno (-> CDN 2,
 * and no dp_session_delete is owed).  Not to be called after the engine
 * called dp_session_delete for s (a cancel) or sess_freed.
 */
void l2tp_sess_dp_done(struct l2tp_sess *s, int err);

/*
 * Sets the Circuit Status we report (A bit) and sends it to the peer in an
 * SLI when established.  -1 with errno ENOTCONN when not established.
 */
int l2tp_sess_set_circuit_status(struct l2tp_sess *s, bool active);

/* Accessors.  "peer_*" are what the peer sent; the rest is ours. */
enum l2tp_sess_state l2tp_sess_state(const struct l2tp_sess *s);
enum l2tp_dp_state l2tp_sess_dp_state(const struct l2tp_sess *s);
struct l2tp_cc *l2tp_sess_cc(const struct l2tp_sess *s);
uint32_t l2tp_sess_local_sid(const struct l2tp_sess *s);
uint32_t l2tp_sess_remote_sid(const struct l2tp_sess *s);	/* 0 until known */
uint32_t l2tp_sess_serial(const struct l2tp_sess *s);
bool l2tp_sess_is_initiator(const struct l2tp_sess *s);	/* we sent the ICRQ/OCRQ */
bool l2tp_sess_is_outgoing(const struct l2tp_sess *s);	/* OCRQ/OCRP/OCCN call */
uint16_t l2tp_sess_pw_type(const struct l2tp_sess *s);
/* Cookie we assigned (the peer puts it on data it sends us); *len 0, 4 or 8. */
const uint8_t *l2tp_sess_cookie(const struct l2tp_sess *s, uint8_t *len);
/* Cookie the peer assigned (we put it on the data we send). */
const uint8_t *l2tp_sess_peer_cookie(const struct l2tp_sess *s, uint8_t *len);
uint16_t l2tp_sess_l2ss(const struct l2tp_sess *s);		/* we require on rx */
uint16_t l2tp_sess_peer_l2ss(const struct l2tp_sess *s);	/* we must send (0 if absent) */
uint16_t l2tp_sess_data_seq(const struct l2tp_sess *s);
uint16_t l2tp_sess_peer_data_seq(const struct l2tp_sess *s);
const uint8_t *l2tp_sess_remote_end_id(const struct l2tp_sess *s, uint16_t *len);
uint16_t l2tp_sess_circuit_status(const struct l2tp_sess *s);	/* ours */
uint16_t l2tp_sess_peer_circuit_status(const struct l2tp_sess *s);
/*
 * False once the peer reported its circuit down (Circuit Status A=0 in
 * ICRQ/ICRP/ICCN/OCRQ/OCRP/OCCN/SLI): the data plane should stop sending
 * towards it (RFC 3931 5.4.5).
 */
bool l2tp_sess_peer_active(const struct l2tp_sess *s);
uint64_t l2tp_sess_wen_count(const struct l2tp_sess *s);
/* Why the session went down (valid from closed), else NULL. */
const struct l2tp_result *l2tp_sess_close_reason(const struct l2tp_sess *s);
void *l2tp_sess_user(const struct l2tp_sess *s);
void l2tp_sess_set_user(struct l2tp_sess *s, void *user);

/*
 * Engine internal (the cc calls it): answers an acknowledged session message
 * whose AVPs are malformed (RFC 3931 7.1), as l2tp_sess_input_malformed()
 * does, and says what was done ("refused with CDN result 2", "ignored: no
 * such session"...): static text for the log line.
 */
struct l2tp_msg;
const char *l2tp_sess_answer_malformed(struct l2tp_cc *cc, const struct l2tp_msg *m,
				       uint16_t error, const char *text);

#endif
