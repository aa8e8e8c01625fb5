/*
 * src/proto/engine.h - what cc.c and sess.c share.  Not for the daemon: it
 * uses the accessors in cc.h and sess.h.  Unit tests may include it to
 * inspect internals or to inject hand-made messages.
 */
#ifndef L2TP_ENGINE_H
#define L2TP_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include "usl/hash.h"
#include "usl/list.h"
#include "usl/timer.h"
#include "auth.h"
#include "cc.h"
#include "msg.h"
#include "rd.h"
#include "sess.h"

#define L2TP_NAME_MAX		255	/* peer Host/Vendor Name kept (truncated) */
#define L2TP_REASON_MAX		128	/* text of a locally made result */

/* A result code with text owned by the object that went down. */
struct l2tp_reason {
	struct l2tp_result r;
	bool set;
	char *text;			/* allocated when set; "" when that failed */
};
/* Frees a reason's text (owner going away). */
void l2tp_reason_free(struct l2tp_reason *rs);

/*
 * Per-connection counters, 32-bit: control messages of one tunnel do not
 * reach 2^32, and 10,000 tunnels of 64-bit arrays would cost 3 MB.
 */
struct l2tp_cc_counters {
	uint32_t rx_msgs[L2TP_MSG_TYPE_MAX + 1];
	uint32_t tx_msgs[L2TP_MSG_TYPE_MAX + 1];
	uint32_t *drops;		/* [L2TP_DROP__COUNT], allocated at the first drop */
	uint32_t retransmits;
	uint32_t rx_duplicates;
	uint32_t rx_held;
	uint32_t wen_received;
	uint32_t rx_no_serial;		/* ICRQ/OCRQ accepted without Serial Number */
};

struct l2tp_cc {
	struct l2tp_cc_cfg cfg;		/* strings and secret point into allocations below */
	char *host_name, *vendor_name;
	uint8_t *secret;
	const struct l2tp_cc_ops *ops;
	struct usl_timerset *timers;
	void *user;

	enum l2tp_cc_state state;
	bool initiator;
	uint32_t local_ccid, peer_ccid;
	char *peer_host_name;		/* NULL until known (10,000 tunnels: no 512-byte arrays) */
	char *peer_vendor_name;
	uint32_t peer_router_id;
	uint16_t peer_pw_caps[L2TP_MAX_PW_CAPS];
	uint8_t n_peer_pw_caps;
	uint16_t peer_rx_window;
	uint64_t tie_breaker;
	bool sent_tie_breaker;
	bool sent_sccrx;		/* we sent SCCRQ or SCCRP: StopCCN carries our CCID */

	struct l2tp_auth *auth;		/* only when authentication is configured */

	struct l2tp_rd rd;
	struct usl_timer timer;		/* HELLO keepalive; while stopping, the StopCCN hold */
	usl_time last_rx;
	usl_time hello_ival;		/* the current (jittered) interval */
	uint64_t prng;

	enum l2tp_dp_state dp;
	bool dp_in_call;		/* inside ops->dp_tunnel_create */
	bool dp_stashed;		/* l2tp_cc_dp_done() came from inside it */
	int dp_stashed_err;

	struct l2tp_reason reason;

	/* RFC 4951 */
	uint16_t peer_fo_flags;		/* the peer's Failover Capability (0: none) */
	uint32_t peer_recovery_ms;
	enum l2tp_failover_state fo;
	uint32_t recovery_of;		/* a recovery connection: the old one's CCID */
	uint16_t scs_ns, scs_nr;	/* its Suggested Control Sequence (sent or received) */
	bool recovery_reset;		/* ops->recovery(RESET) done */

	/* l2tp_cc_input_refuse(): answer the SCCRQ with this StopCCN */
	bool refuse;
	uint16_t refuse_result, refuse_error;
	const char *refuse_msg;

	/* sessions */
	struct usl_hash sess_by_sid;	/* our Session ID */
	struct usl_hash sess_by_peer_sid;
	struct usl_hash sess_by_end_id;	/* calls we placed, awaiting the reply */
	struct usl_list sessions;	/* live */
	struct usl_list dead;		/* closed, freed when the engine unwinds */
	uint32_t n_sessions;
	uint32_t next_serial;

	/* re-entrancy: frees are deferred until depth drops to 0 */
	unsigned depth;
	bool freed;			/* l2tp_cc_free() was called: no more callbacks */

	struct l2tp_cc_counters st;	/* the counter part of l2tp_cc_get_stats() */
};

struct l2tp_sess {
	struct l2tp_cc *cc;
	struct usl_list link;		/* cc->sessions, then cc->dead */
	struct usl_hnode by_sid, by_peer_sid, by_end_id;
	bool in_peer_sid_hash, in_end_id_hash, in_sid_hash;
	void *user;

	enum l2tp_sess_state state;
	struct l2tp_sess_cfg cfg;	/* remote_end_id points at end_id */
	uint8_t *end_id;
	bool initiator;
	bool got_reply;			/* ICRP/OCRP seen (or sent) */
	bool freed_owed;		/* sess_freed not yet called */
	uint32_t local_sid, peer_sid, serial;
	uint8_t cookie[8], cookie_len;
	uint8_t peer_cookie[8], peer_cookie_len;
	uint16_t peer_l2ss, peer_data_seq, peer_circuit_status;
	bool peer_active;
	uint64_t tie_breaker;
	bool sent_tie_breaker;

	enum l2tp_dp_state dp;
	bool dp_in_call, dp_stashed;
	int dp_stashed_err;
	bool dp_want;			/* ready for the data plane, waiting for the tunnel's */

	struct usl_timer setup_timer;
	uint64_t wen_count;
	struct l2tp_reason reason;
};

/* cc.c, for sess.c */
void l2tp_cc_hold(struct l2tp_cc *cc);
void l2tp_cc_release(struct l2tp_cc *cc);
/* Fills the header and digest, encodes and queues m.  0 or -1. */
int l2tp_cc_send_msg(struct l2tp_cc *cc, struct l2tp_msg *m);
void l2tp_cc_random(struct l2tp_cc *cc, void *buf, size_t len);
void l2tp_reason_set(struct l2tp_reason *rs, uint16_t result, uint16_t error,
		     bool has_error, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void l2tp_reason_from_msg(struct l2tp_reason *rs, const struct l2tp_result *r);

/* sess.c, for cc.c */
int l2tp_sess_init_cc(struct l2tp_cc *cc);
void l2tp_sess_fini_cc(struct l2tp_cc *cc);	/* frees what is left */
/* A session message (ICRQ...SLI) received on an established connection. */
enum l2tp_drop l2tp_sess_input(struct l2tp_cc *cc, const struct l2tp_msg *m);
/*
 * A session message acknowledged but unusable (m->bad, 7.1): the session it
 * names is cleared with a CDN (result 2, error), a request refused by the
 * peer's Session ID; a malformed CDN just clears the session.
 */
void l2tp_sess_input_malformed(struct l2tp_cc *cc, const struct l2tp_msg *m, uint16_t error,
			       const char *text);
void l2tp_sess_cc_up(struct l2tp_cc *cc);	/* established: send waiting requests */
void l2tp_sess_cc_dp_up(struct l2tp_cc *cc);	/* tunnel in the data plane */
/* The connection goes (no CDN: StopCCN clears them all, RFC 3931 3.3.2). */
void l2tp_sess_cc_down(struct l2tp_cc *cc, const struct l2tp_reason *why);
/* l2tp_cc_free(): dp deletes and sess_freed now, memory later. */
void l2tp_sess_cc_forget(struct l2tp_cc *cc);
void l2tp_sess_reap(struct l2tp_cc *cc);
/* RFC 4951: clear what was not established (Step I); query (FSQ) and answer. */
void l2tp_sess_failover_reset(struct l2tp_cc *cc);
void l2tp_sess_remake_dp(struct l2tp_cc *cc);	/* sessions wait for the tunnel's data plane */
unsigned l2tp_sess_failover_query(struct l2tp_cc *cc);
enum l2tp_drop l2tp_sess_on_fsq(struct l2tp_cc *cc, const struct l2tp_msg *m);
enum l2tp_drop l2tp_sess_on_fsr(struct l2tp_cc *cc, const struct l2tp_msg *m);
/* Restart handover (cc.h): one session's state, and a session made again from it. */
void l2tp_sess_save(const struct l2tp_sess *s, struct usl_pack *w);
struct l2tp_sess *l2tp_sess_restore(struct l2tp_cc *cc, struct usl_unpack *r);

#endif
