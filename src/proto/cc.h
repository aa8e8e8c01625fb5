/*
 * src/proto/cc.h - the L2TPv3 control connection engine (RFC 3931 3.3, 4.2,
 * 4.3, 4.4, 5.4.3, 7.2).
 *
 * A struct l2tp_cc is one control connection ("tunnel").  The engine is pure:
 * it never touches a socket or the kernel.  Encoded messages leave through
 * ops->send, data plane objects are requested through ops->dp_*, and every
 * state change is reported through ops->cc_event / ops->sess_event.  Time
 * comes from the usl_timerset given to l2tp_cc_new() (the daemon's loop, or
 * a fake clock in tests); a connection arms a handful of timers (retransmit,
 * delayed ACK, hello, hold), never one per message.
 *
 * Buffers handed to l2tp_cc_input() and ops->send start at the L2TP control
 * header for both encapsulations: over IP the L2TPIP socket strips and adds
 * the zero Session ID itself.
 *
 * Lifetime and re-entrancy.  The daemon owns the cc: it calls l2tp_cc_free()
 * when it is done, typically from its cc_event handler on the transition to
 * L2TP_CC_CLOSED.  Any callback may call back into the engine (close a
 * session, free the cc, complete a dp request synchronously): the engine
 * defers frees until its outermost call returns, so that is safe.
 * Sessions are owned by the engine (see sess.h).
 */
#ifndef L2TP_CC_H
#define L2TP_CC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "usl/time.h"
#include "usl/timer.h"
#include "msg.h"
#include "auth.h"
#include "sess.h"

struct l2tp_cc;

/*
 * Control connection states.  The first four are RFC 3931 7.2's; stopping
 * is the StopCCN hold (sent or received: the reliable layer keeps running
 * and acknowledging); closed is final: the daemon frees the cc.
 */
enum l2tp_cc_state {
	L2TP_CC_IDLE = 0,
	L2TP_CC_WAIT_CTL_REPLY,		/* initiator: SCCRQ sent */
	L2TP_CC_WAIT_CTL_CONN,		/* responder: SCCRP sent */
	L2TP_CC_ESTABLISHED,
	L2TP_CC_STOPPING,		/* StopCCN sent or received, holding */
	L2TP_CC_CLOSED,
	L2TP_CC_STATE__COUNT
};
/* "idle", "wait-ctl-reply", "wait-ctl-conn", "established", "stopping", "closed" */
const char *l2tp_cc_state_name(enum l2tp_cc_state s);

/* Data plane progress of the tunnel or of a session. */
enum l2tp_dp_state {
	L2TP_DP_NONE = 0,	/* not requested */
	L2TP_DP_PENDING,	/* dp_*_create returned 0, waiting for *_dp_done */
	L2TP_DP_UP,
	L2TP_DP_FAILED,
	L2TP_DP_PREPARED,	/* session: dp_session_prepare returned 0, no create yet */
};
/* "none", "pending", "up", "failed", "prepared" */
const char *l2tp_dp_state_name(enum l2tp_dp_state s);

/*
 * Configuration of one control connection.  l2tp_cc_cfg_init() fills the
 * defaults below; the caller overrides what its profile sets.  l2tp_cc_new()
 * copies everything (strings and secret included), so the caller's config
 * may go away (reload) afterwards.
 */
struct l2tp_cc_cfg {
	const char *host_name;		/* Host Name AVP; required, >= 1 octet */
	uint32_t router_id;		/* Router ID AVP; required (not an address) */
	const char *vendor_name;	/* optional Vendor Name AVP, NULL: none */
	enum l2tp_encap encap;		/* informational: buffers never carry session0 */

	/* reliable delivery (RFC 3931 4.2, Appendix A) */
	uint16_t rx_window;		/* our Receive Window Size: 16 */
	/*
	 * At most this many of our messages unacknowledged, whatever the
	 * peer's Receive Window Size (or the 4 its absence means) allows: for
	 * peers that advertise more than they take.  0 (default): the peer's.
	 */
	uint16_t tx_window_max;
	usl_time rtx_initial;		/* first retransmit timeout: 1 s */
	usl_time rtx_cap;		/* backoff cap: 8 s */
	unsigned max_retries;		/* retransmissions before giving up: 10 */
	unsigned sccrq_max_retries;	/* same for the SCCRQ: 10 */
	usl_time ack_delay;		/* delayed ACK when nothing to piggyback: 100 ms */
	bool explicit_ack;		/* acknowledge with ACK (20) instead of ZLB: false */

	/* keepalive (RFC 3931 4.4) */
	usl_time hello_interval;	/* 60 s; USL_TIME_NEVER disables HELLO */
	unsigned hello_jitter_pct;	/* each interval drawn in +-pct%: 25 */
	uint64_t seed;			/* jitter PRNG seed; 0: random per connection */

	/* teardown: how long a StopCCN sender/recipient holds state: 31 s */
	usl_time stop_hold;

	/* Pseudowire Capabilities List we advertise (and accept in ICRQ/OCRQ) */
	uint16_t pw_caps[L2TP_MAX_PW_CAPS];
	uint8_t n_pw_caps;		/* default: Ethernet, Ethernet VLAN */

	/* Control Message Authentication (RFC 3931 4.3): off by default */
	bool auth_enabled;
	const uint8_t *secret;
	size_t secret_len;
	enum l2tp_digest_type digest_type;	/* HMAC-MD5 (default) or HMAC-SHA-1 */

	/*
	 * Control Connection Tie Breaker AVP in our SCCRQ: off by default.
	 * tie_breaker 0 draws a random value at every l2tp_cc_connect().
	 */
	bool send_tie_breaker;
	uint64_t tie_breaker;

	/*
	 * How long a session may stay between its first message and
	 * established before it is cleared with CDN 16 (covers a peer that
	 * acknowledges an ICRQ but never answers it): 60 s; NEVER disables.
	 */
	usl_time sess_setup_timeout;

	/*
	 * How long a connection may stay between its first message and
	 * established (wait-ctl-reply, wait-ctl-conn), even when every message
	 * was acknowledged: 60 s; NEVER disables.  Every state but established
	 * then ends by a deadline.
	 */
	usl_time setup_timeout;

	/*
	 * Retransmissions of our SCCRP: a responder half-open to a peer that
	 * may be forged costs little and reflects little: 4 (5 SCCRPs at most).
	 * 0 takes max_retries; never more than max_retries.
	 */
	unsigned sccrp_max_retries;

	/*
	 * RFC 3931 5.3: send Assigned Cookie and Remote End ID hidden (with a
	 * Random Vector); needs a secret.  Off by default.
	 */
	bool hide_avps;

	/*
	 * RFC 4951 failover: advertise the Failover Capability AVP (C and D
	 * bits) in SCCRQ/SCCRP, asking the peer to wait recovery_time_ms more
	 * for us once we go silent; a failover-capable peer that goes silent
	 * is then kept (with its sessions) for the Recovery Time it asked
	 * for.  Off by default.
	 */
	bool failover;
	uint32_t recovery_time_ms;

	/*
	 * A recovery connection (RFC 4951): non-zero makes our SCCRQ carry the
	 * Tunnel Recovery AVP for the old connection (our CCID, the peer's);
	 * such a connection carries no session and no data plane, and reports
	 * its progress through ops->recovery.
	 */
	uint32_t recover_ccid, recover_peer_ccid;
};
void l2tp_cc_cfg_init(struct l2tp_cc_cfg *cfg);

/* The longest Recovery Time a peer gets (its AVP may ask for 49 days): 10 min */
#define L2TP_RECOVERY_MAX_MS	600000u

/* Progress of a recovery connection (ops->recovery). */
enum l2tp_recovery_step {
	/* the old connection's sequence numbers are agreed: l2tp_cc_resume() it */
	L2TP_RECOVERY_RESET,
	/*
	 * the peer reset its side too (our SCCCN was acknowledged; the
	 * responder gets this right after RESET): reconcile the old
	 * connection's sessions (l2tp_cc_reconcile), close this one
	 */
	L2TP_RECOVERY_DONE,
};

/*
 * Callbacks into the daemon.  All are called from inside engine calls and
 * may call back into the engine.  NULL members are allowed except send.
 */
struct l2tp_cc_ops {
	/* Transmits one encoded, sequenced and signed control message. */
	int (*send)(struct l2tp_cc *cc, const uint8_t *buf, size_t len);

	/*
	 * Every connection state change.  why is set on the way down
	 * (stopping, closed): the result code we sent or received (message
	 * points at text valid during the call), NULL otherwise.
	 */
	void (*cc_event)(struct l2tp_cc *cc, enum l2tp_cc_state from,
			 enum l2tp_cc_state to, const struct l2tp_result *why);

	/*
	 * Data plane tunnel, requested once the connection is established
	 * (the peer's CCID is known).  Return 0 when started, then call
	 * l2tp_cc_dp_done() (possibly from inside this callback); non-zero
	 * fails at once.  A failure tears the connection down with StopCCN
	 * result 2.  dp_tunnel_delete is called exactly once for every create
	 * that returned 0 and did not complete with an error, also while still
	 * pending (meaning "cancel": do not call l2tp_cc_dp_done() afterwards).
	 * The create comes after the cc_event to established: the tunnel is up
	 * for the daemon when both happened (l2tp_cc_dp_state() == UP).
	 */
	int (*dp_tunnel_create)(struct l2tp_cc *cc);
	void (*dp_tunnel_delete)(struct l2tp_cc *cc);

	/* A random, non-zero, host-unique Session ID; 0 when none is left. */
	uint32_t (*alloc_session_id)(struct l2tp_cc *cc);

	/*
	 * An ICRQ or OCRQ arrived and passed the engine's own checks (PW type
	 * advertised, L2SS for sequencing, tie breaker).  out comes filled
	 * with defaults (the request's PW type and Remote End ID, no cookie,
	 * no L2SS, no sequencing, circuit active); adjust it and return 0 to
	 * accept, or a CDN result code (enum l2tp_cdn_result) to refuse.  s
	 * is the new session: l2tp_sess_set_user() may be called on it.  NULL
	 * accepts everything with the defaults.
	 */
	int (*sess_accept)(struct l2tp_cc *cc, struct l2tp_sess *s,
			   const struct l2tp_msg *req, struct l2tp_sess_cfg *out);

	/* Data plane session: same contract as the tunnel's, with l2tp_sess_dp_done(). */
	int (*dp_session_create)(struct l2tp_cc *cc, struct l2tp_sess *s);
	void (*dp_session_delete)(struct l2tp_cc *cc, struct l2tp_sess *s);
	/*
	 * The side that waits for the peer's ICCN/OCCN knows the call's
	 * parameters once it has answered (ICRP sent, OCRP received): the
	 * data plane may make its session then, not yet passing traffic, so
	 * that its work overlaps the peer's instead of following it.  No
	 * completion: the dp_session_create that follows the connected
	 * message finishes the job (reprogramming what that message changed)
	 * and completes as usual; a failed preparation is retried or reported
	 * there.  Return 0 when something was made: dp_session_delete is then
	 * owed, also if no create ever follows; non-zero when nothing was.
	 * It must not call back into the engine.  NULL: sessions are made at
	 * the connected message.
	 */
	int (*dp_session_prepare)(struct l2tp_cc *cc, struct l2tp_sess *s);

	/* Every session state change; why as for cc_event (CDN result). */
	void (*sess_event)(struct l2tp_cc *cc, struct l2tp_sess *s,
			   enum l2tp_sess_state from, enum l2tp_sess_state to,
			   const struct l2tp_result *why);

	/* The session is about to be freed: drop every reference to it. */
	void (*sess_freed)(struct l2tp_cc *cc, struct l2tp_sess *s);

	/* A WAN-Error-Notify arrived for s (counters are in the message). */
	void (*sess_wen)(struct l2tp_cc *cc, struct l2tp_sess *s, const struct l2tp_msg *wen);

	/* A recovery connection's progress (RFC 4951); NULL: not used. */
	void (*recovery)(struct l2tp_cc *cc, enum l2tp_recovery_step step);

	/*
	 * Cryptographic randomness (nonces, cookies, tie breakers).  NULL uses
	 * getrandom(2).
	 */
	void (*random)(struct l2tp_cc *cc, void *buf, size_t len);
};

/*
 * Creates a connection in idle.  local_ccid is our Assigned Control
 * Connection ID (non-zero, host-unique: the daemon's index owns it).
 * Returns NULL with errno set (EINVAL for a bad config, ENOMEM).
 */
struct l2tp_cc *l2tp_cc_new(const struct l2tp_cc_cfg *cfg, const struct l2tp_cc_ops *ops,
			    struct usl_timerset *timers, uint32_t local_ccid, void *user);

/*
 * Frees cc at once: no message is sent.  Sessions are freed (sess_freed),
 * data plane objects deleted (dp_*_delete), timers cancelled.  Safe from
 * inside any callback of this cc (the free then happens when the engine
 * call that made the callback returns).
 */
void l2tp_cc_free(struct l2tp_cc *cc);

/* Initiator: sends the SCCRQ (idle -> wait-ctl-reply).  -1 with errno. */
int l2tp_cc_connect(struct l2tp_cc *cc);

/*
 * One received control message (header first).  The engine decodes it
 * (with the secret, for hidden AVPs), checks the Message Digest when
 * authentication is on, runs reliable delivery and then the FSMs.  The
 * responder is a fresh cc fed the SCCRQ that created it.  Returns
 * L2TP_DROP_NONE when the message was used (or was a valid ACK), else why it
 * was dropped; the cc counts drops itself.
 */
enum l2tp_drop l2tp_cc_input(struct l2tp_cc *cc, const uint8_t *buf, size_t len);

/*
 * A fresh cc answers the SCCRQ in buf with a StopCCN carrying result (e.g.
 * lost tie breaker: L2TP_STOPCCN_ALREADY_EXISTS; not allowed:
 * L2TP_STOPCCN_NOT_AUTHORIZED) instead of an SCCRP, holds, then closes.
 */
enum l2tp_drop l2tp_cc_input_refuse(struct l2tp_cc *cc, const uint8_t *buf, size_t len,
				    uint16_t result, uint16_t error, const char *msg);

/*
 * Checks an SCCRQ before anything is allocated for it (the listener), as a
 * fresh responder with cfg would: m is decoded (with cfg's secret for hidden
 * AVPs), buf/len its bytes.  Returns L2TP_DROP_NONE when a responder may be
 * created.  Otherwise the drop reason; when the peer should be told (a
 * policy mismatch, not forged or corrupt input), *refuse is set to the
 * StopCCN result to answer with (l2tp_cc_encode_refusal()), else its result
 * is 0 and the message is dropped silently (failed authentication).
 * refuse->message points at static text.
 */
enum l2tp_drop l2tp_cc_check_sccrq(const struct l2tp_cc_cfg *cfg, const struct l2tp_msg *m,
				   const uint8_t *buf, size_t len, struct l2tp_result *refuse);

/*
 * Encodes the StopCCN that refuses an SCCRQ without creating any state:
 * addressed to the SCCRQ's Assigned CCID, Ns 0, acknowledging the SCCRQ.
 * Sent once, never retransmitted.  Returns the length or -1.
 */
int l2tp_cc_encode_refusal(const struct l2tp_msg *sccrq, const struct l2tp_result *why,
			   uint8_t *buf, size_t cap);

/*
 * The same refusal, signed (4.3, 5.4.1) with secret when the SCCRQ (sbuf,
 * slen, decoded into sccrq) carries a nonce and a Message Digest that
 * verifies with it: the LAC, which drops every unauthenticated message once
 * it asked for authentication, then acts on it at once.  The digest is
 * HMAC(key, sccrq nonce + message): we advertised no nonce, and that is
 * what an initiator in wait-ctl-reply computes.  *is_signed says whether it
 * was (else it is l2tp_cc_encode_refusal()'s).  Returns the length or -1.
 */
int l2tp_cc_encode_refusal_signed(const struct l2tp_msg *sccrq, const uint8_t *sbuf, size_t slen,
				  const uint8_t *secret, size_t secret_len,
				  const struct l2tp_result *why, uint8_t *buf, size_t cap,
				  bool *is_signed);

/*
 * Encodes the StopCCN that answers a control message (header decoded into
 * hdr) for a Control Connection ID we do not know, such as a restarted
 * LCCE's forgotten ones: header CCID 0 (the peer's CCID for it is what was
 * forgotten), Ns 0, Nr one past the message's Ns, Result Code 2 with error
 * 1 ("no control connection exists"), no text, and as Assigned Control
 * Connection ID the unknown one, so that the peer finds its connection by
 * a reverse lookup (5.4.1, Assigned Control Connection ID AVP).  Unsigned:
 * the connection's nonces are gone.  40 octets.  Returns the length or -1.
 */
int l2tp_cc_encode_unknown_ccid(const struct l2tp_msg *hdr, uint8_t *buf, size_t cap);

/*
 * True when cc is bound to end by itself: established (HELLO and
 * retransmission limits end it), or any other state with a timer armed
 * (setup deadline, retransmission, StopCCN hold).  Daemon invariant.
 */
bool l2tp_cc_has_deadline(const struct l2tp_cc *cc);

/*
 * Administrative close: sessions are cleared, a StopCCN with result/error/
 * msg is sent (when the peer knows us) and held until acknowledged or one
 * retransmission cycle has passed; then closed.  Idle closes at once.
 */
void l2tp_cc_close(struct l2tp_cc *cc, uint16_t result, uint16_t error, const char *msg);

/*
 * Drops the connection silently (no StopCCN): the loser of a tie break
 * (RFC 3931 5.4.3, "the loser MUST discard its control connection").
 * Goes to closed with result/msg as the reason.
 */
void l2tp_cc_discard(struct l2tp_cc *cc, uint16_t result, const char *msg);

/* Completion of ops->dp_tunnel_create: 0 or a negative errno. */
void l2tp_cc_dp_done(struct l2tp_cc *cc, int err);

/*
 * Crossed SCCRQs (RFC 3931 5.4.3).  The daemon calls this when an SCCRQ
 * arrives from a peer towards which ours (in wait-ctl-reply) is pending.
 */
enum l2tp_tie {
	L2TP_TIE_NONE = 0,	/* no tie (neither sent a tie breaker, or ours not waiting): both proceed */
	L2TP_TIE_WE_WIN,	/* refuse theirs (l2tp_cc_input_refuse, result 3), keep ours */
	L2TP_TIE_WE_LOSE,	/* l2tp_cc_discard ours, accept theirs on a new cc */
	L2TP_TIE_RESTART,	/* equal values: discard ours, drop theirs, reconnect */
};
enum l2tp_tie l2tp_cc_tie_break(const struct l2tp_cc *ours_waiting,
				const struct l2tp_msg *their_sccrq);
const char *l2tp_tie_name(enum l2tp_tie t);

/* ---- RFC 4951 failover ---- */

/* Where a connection stands in a failover. */
enum l2tp_failover_state {
	L2TP_FO_NONE = 0,
	L2TP_FO_AWAITING_PEER,	/* the peer went silent: kept for its Recovery Time */
	L2TP_FO_RESYNC,		/* ours: sequence numbers lost, silent until resumed */
};
/* "none", "awaiting-peer", "resync" */
const char *l2tp_failover_state_name(enum l2tp_failover_state s);
enum l2tp_failover_state l2tp_cc_failover_state(const struct l2tp_cc *cc);
/* Both ends advertised control channel failover (the C bit). */
bool l2tp_cc_failover_ok(const struct l2tp_cc *cc);
/* The peer's Failover Capability: flags (0: none) and Recovery Time. */
uint16_t l2tp_cc_peer_failover(const struct l2tp_cc *cc, uint32_t *recovery_ms);

/*
 * A restored connection whose sequence numbers are lost (a crash): it
 * sends nothing and drops what it receives until l2tp_cc_resume(); if
 * that has not happened within `deadline`, it goes to closed silently
 * (no StopCCN, no CDN: RFC 4951, a recovery that failed).
 */
void l2tp_cc_set_resync(struct l2tp_cc *cc, usl_time deadline);

/*
 * A restored connection whose data plane objects are gone (a crash): the
 * tunnel's is made again (ops->dp_tunnel_create), then, once it is up,
 * every established session's; they stay established throughout, and a
 * session whose object cannot be made is cleared.
 */
void l2tp_cc_remake_dp(struct l2tp_cc *cc);

/*
 * Makes a fresh responder a recovery connection for old (the daemon has
 * matched the SCCRQ's Tunnel Recovery AVP to it): its SCCRP suggests
 * random sequence numbers for the old connection.  Call before feeding it
 * the SCCRQ.
 */
void l2tp_cc_set_recovery_of(struct l2tp_cc *cc, const struct l2tp_cc *old);
/* The old connection's CCID of a recovery connection (ours), 0 for others. */
uint32_t l2tp_cc_recovery_of(const struct l2tp_cc *cc);

/*
 * The control channel reset of RFC 4951: old takes the sequence numbers
 * (and, with authentication, the nonces) agreed on the recovery connection
 * rec, drops what it had queued, in flight or held, and resumes; sessions
 * that were not established are cleared silently.  -1 (EINVAL) when rec is
 * not an established recovery connection for old.
 */
int l2tp_cc_resume(struct l2tp_cc *old, const struct l2tp_cc *rec);

/*
 * Sends FSQs (Failover Session Query) for every established session of
 * cc; the peer's FSR then clears silently those it no longer has.
 * Returns the number of sessions queried.
 */
unsigned l2tp_cc_reconcile(struct l2tp_cc *cc);

/* Finds a session by our (local) Session ID, or NULL. */
struct l2tp_sess *l2tp_cc_find_session(const struct l2tp_cc *cc, uint32_t local_sid);

/* Counters; per-type arrays are indexed by message type (0 = ZLB). */
struct l2tp_cc_stats {
	uint64_t rx_msgs[L2TP_MSG_TYPE_MAX + 1];	/* accepted (digest ok, in order) */
	uint64_t tx_msgs[L2TP_MSG_TYPE_MAX + 1];	/* first transmissions and ACK/ZLB */
	uint64_t retransmits;
	uint64_t drops[L2TP_DROP__COUNT];
	uint64_t rx_duplicates;		/* also in drops[L2TP_DROP_DUPLICATE] */
	uint64_t rx_held;		/* out-of-order messages queued */
	uint64_t wen_received;
	uint64_t rx_no_serial;		/* ICRQ/OCRQ accepted without Serial Number */
	uint16_t cwnd, ssthresh;	/* congestion window (Appendix A) */
	uint16_t peer_rx_window;	/* the peer's Receive Window Size (4 if absent) */
	uint16_t tx_window;		/* ours: that, capped at cfg.tx_window_max */
	uint16_t in_flight;		/* sent, not yet acknowledged */
	uint16_t queued;		/* waiting for the window */
	uint16_t next_ns, next_nr;
	uint32_t sessions;
};
void l2tp_cc_get_stats(const struct l2tp_cc *cc, struct l2tp_cc_stats *out);
/* Zeroes the counters (messages, retransmits, drops...); the window state stays. */
void l2tp_cc_reset_counters(struct l2tp_cc *cc);

/* Accessors. */
enum l2tp_cc_state l2tp_cc_state(const struct l2tp_cc *cc);
/* Stopping with nothing of ours left to deliver: it only acknowledges (the StopCCN hold). */
bool l2tp_cc_holding(const struct l2tp_cc *cc);
enum l2tp_dp_state l2tp_cc_dp_state(const struct l2tp_cc *cc);
bool l2tp_cc_is_initiator(const struct l2tp_cc *cc);
uint32_t l2tp_cc_local_ccid(const struct l2tp_cc *cc);
uint32_t l2tp_cc_peer_ccid(const struct l2tp_cc *cc);		/* 0 until known */
const char *l2tp_cc_peer_host_name(const struct l2tp_cc *cc);	/* "" until known */
const char *l2tp_cc_peer_vendor_name(const struct l2tp_cc *cc);
uint32_t l2tp_cc_peer_router_id(const struct l2tp_cc *cc);
/* PW types the peer advertised; returns the count, *caps points into cc. */
unsigned l2tp_cc_peer_pw_caps(const struct l2tp_cc *cc, const uint16_t **caps);
bool l2tp_cc_peer_has_pw(const struct l2tp_cc *cc, uint16_t pw_type);
bool l2tp_cc_auth_on(const struct l2tp_cc *cc);	/* digest negotiated */
uint64_t l2tp_cc_tie_breaker(const struct l2tp_cc *cc);	/* value sent, 0 if none */
bool l2tp_cc_sent_tie_breaker(const struct l2tp_cc *cc);
/* Why the connection went down (valid from stopping on), else NULL. */
const struct l2tp_result *l2tp_cc_close_reason(const struct l2tp_cc *cc);
const struct l2tp_cc_cfg *l2tp_cc_cfg(const struct l2tp_cc *cc);	/* the engine's copy */
void *l2tp_cc_user(const struct l2tp_cc *cc);
void l2tp_cc_set_user(struct l2tp_cc *cc, void *user);

/*
 * Tells the engine that data arrived on one of this connection's sessions
 * (RFC 3931 4.4: HELLO follows silence on data *and* control).  Optional:
 * the daemon may call it from a periodic kernel statistics poll.
 */
void l2tp_cc_note_rx(struct l2tp_cc *cc);
/* When the peer was last heard from on this connection. */
usl_time l2tp_cc_last_rx(const struct l2tp_cc *cc);
/*
 * Probes an established connection.  With nothing in flight it sends a
 * HELLO on the connection's own retransmission budget and returns 0; with
 * messages in flight (they probe the peer already) it cuts their budget to
 * `retries` (as l2tp_cc_probe_cut) and returns 1.  Either way *answer_by
 * (if not NULL) becomes how long, from now, the probe takes to go
 * unanswered: `retries` retransmissions of the HELLO, or what is left of
 * the cut budget.  -1 (EBUSY) unless established.
 */
int l2tp_cc_probe(struct l2tp_cc *cc, unsigned retries, usl_time *answer_by);
/*
 * A probed connection judged dead: what it has unacknowledged (the probe's
 * HELLO, or anything else) gets at most `retries` retransmissions, or those
 * it already had, and the connection is cleared as a silent one when they
 * go unanswered.
 */
void l2tp_cc_probe_cut(struct l2tp_cc *cc, unsigned retries);

/*
 * A reload changed settings a live connection can take: timers
 * (retransmission, delayed ACK, setup deadlines), HELLO interval and jitter,
 * explicit ACKs, the cap on our send window.  Everything else in cfg is
 * ignored (identity, window advertised, authentication: they need a new
 * connection).  Messages already queued keep their retransmission budget.
 * -1 with EINVAL when the values are refused (nothing changed).
 */
int l2tp_cc_reconfigure(struct l2tp_cc *cc, const struct l2tp_cc_cfg *cfg);

/*
 * Restart handover (the daemon's next process continues the connection).
 * Only an established connection with its data plane tunnel up is saved,
 * with its sessions that are established with theirs up (l2tp_cc_can_save,
 * l2tp_sess_can_save); the daemon clears the others first.  l2tp_cc_save()
 * sends an acknowledgement that is owed before it writes.  -1 with errno
 * (EBUSY: not savable; ENOMEM).
 *
 * l2tp_cc_restore() makes the connection again from what was saved:
 * established, data plane up (the kernel kept its objects), sessions in
 * place (find them with l2tp_cc_find_session() and set their user), the
 * reliable layer's messages in flight sent again after one timeout, the
 * HELLO timer counting from the last message heard.  No callback is made.
 * NULL with errno EINVAL when the input is malformed (r->bad set) or the
 * configuration it holds is refused; nothing is left behind.
 */
struct usl_pack;
struct usl_unpack;
bool l2tp_cc_can_save(const struct l2tp_cc *cc);
int l2tp_cc_save(struct l2tp_cc *cc, struct usl_pack *w);
struct l2tp_cc *l2tp_cc_restore(struct usl_unpack *r, const struct l2tp_cc_ops *ops,
				struct usl_timerset *timers, void *user);
bool l2tp_sess_can_save(const struct l2tp_sess *s);
/*
 * A restored connection the daemon could not take after all: freed with no
 * callback, no message and no data plane delete (what it stood for stays).
 */
void l2tp_cc_discard_restored(struct l2tp_cc *cc);
/* Clears, with a CDN, every session of cc that has no user (none was set on it). */
void l2tp_cc_close_unowned_sessions(struct l2tp_cc *cc, uint16_t result, const char *msg);

#endif
