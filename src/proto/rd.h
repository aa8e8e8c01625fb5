/*
 * src/proto/rd.h - reliable delivery of control messages (RFC 3931 4.2 and
 * Appendix A): Ns/Nr modulo 2^16, a send window bounded by the peer's
 * Receive Window Size and by slow start / congestion avoidance, retransmit
 * with exponential backoff and a cap, out-of-order messages held for
 * in-order delivery, duplicates acknowledged and dropped, delayed ACK.
 *
 * rd knows nothing of message contents beyond the header it patches: the
 * owner (cc.c) encodes messages, rd queues the bytes, gives them Ns when
 * they first leave, patches Nr on every transmission and hands them back
 * through ops->output for signing and sending.  Two timers per instance:
 * retransmit (armed for the oldest unacknowledged message) and delayed ACK.
 *
 * Retries are counted per message, whatever sent it again (a timeout,
 * go-back-N, a partial ACK): none is sent more than 1 + max_retries times,
 * and the retransmit timer gives up on the oldest once its retries are used
 * up and it still goes unacknowledged for an RTO.
 */
#ifndef L2TP_RD_H
#define L2TP_RD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "usl/list.h"
#include "usl/time.h"
#include "usl/timer.h"
#include "usl/pack.h"

struct l2tp_rd;

struct l2tp_rd_cfg {
	uint16_t rx_window;	/* ours: how far ahead of Nr we hold messages */
	usl_time rtx_initial;
	usl_time rtx_cap;
	unsigned max_retries;	/* default for l2tp_rd_send(..., 0) */
	usl_time ack_delay;
};

struct l2tp_rd_ops {
	/*
	 * Transmits buf (Ns/Nr already patched).  The owner may rewrite the
	 * bytes in place (Message Digest).  type is the message type.
	 */
	void (*output)(struct l2tp_rd *rd, uint8_t *buf, size_t len, uint16_t type,
		       bool retransmit);
	/* Encodes an acknowledgement (ZLB or ACK) into buf; its length or -1. */
	int (*build_ack)(struct l2tp_rd *rd, uint8_t *buf, size_t cap);
	/* A queued message of this type was acknowledged by the peer. */
	void (*acked)(struct l2tp_rd *rd, uint16_t type);
	/* The oldest message went unacknowledged after its last retry. */
	void (*give_up)(struct l2tp_rd *rd, uint16_t type, unsigned retries);
	/*
	 * Brackets rd's own timer callbacks (on true, then false), so the
	 * owner can defer its frees until they return.  May be NULL.
	 */
	void (*guard)(struct l2tp_rd *rd, bool enter);
};

/* An outgoing message, or an out-of-order received one. */
struct l2tp_rd_buf {
	struct usl_list link;		/* pending or inflight (not used when held) */
	uint16_t ns;
	uint16_t type;
	uint16_t len;
	uint16_t max_retries;
	uint16_t retries;		/* times sent again (any cause) */
	uint8_t buf[];
};

enum l2tp_rd_verdict {
	L2TP_RD_DELIVER,	/* in order: process it now, then l2tp_rd_next_held() */
	L2TP_RD_ACK_ONLY,	/* ZLB / ACK: Nr used, nothing to deliver */
	L2TP_RD_DUPLICATE,	/* already received: acknowledged, drop */
	L2TP_RD_HELD,		/* ahead of a gap: queued for later */
	L2TP_RD_NR_INVALID,	/* acknowledges what we never sent: drop */
	L2TP_RD_OUT_OF_WINDOW,	/* too far ahead: drop */
};

struct l2tp_rd {
	const struct l2tp_rd_ops *ops;
	struct usl_timerset *timers;
	struct l2tp_rd_cfg cfg;

	/* sending */
	struct usl_list inflight;	/* sent, unacknowledged, Ns order */
	struct usl_list pending;	/* waiting for the window, no Ns yet */
	uint16_t snd_una;		/* oldest unacknowledged Ns */
	uint16_t snd_nxt;		/* Ns of the next new transmission */
	uint16_t n_inflight, n_pending;
	uint16_t peer_rwin;		/* 4 until the peer says (4.2) */
	uint16_t cwnd, ssthresh, cwnd_acks;
	usl_time rto;
	struct usl_timer rtx_timer;
	bool dead;			/* gave up: no more transmissions */
	/*
	 * Loss recovery after a timeout: everything sent before it (up to
	 * `recover`) is presumed lost and sent again, oldest first, within the
	 * congestion window (go-back-N); a partial ACK resends the next
	 * unacknowledged message at once (NewReno).  rtx_cursor: the next one
	 * to send again, NULL when all were.  A message whose retries are used
	 * up stops it there: the retransmit timer decides.
	 */
	bool in_recovery;
	uint16_t recover;
	struct l2tp_rd_buf *rtx_cursor;

	/* receiving */
	uint16_t rcv_nxt;		/* Nr: next Ns expected */
	struct l2tp_rd_buf **held;	/* out of order: a ring of rx_window slots,
					   allocated at the first gap, freed when empty */
	uint16_t n_held;
	uint16_t unacked_rx;		/* in-order messages received since our last Nr */
	uint16_t held_head;		/* the ring's slot for Ns == rcv_nxt */
	struct usl_timer ack_timer;
	bool ack_pending;
	bool ack_asap;			/* acknowledge when the current input is done */

	/* counters */
	uint32_t n_retransmits, n_duplicates, n_held_total, n_acks_sent;
};

void l2tp_rd_init(struct l2tp_rd *rd, const struct l2tp_rd_cfg *cfg,
		  const struct l2tp_rd_ops *ops, struct usl_timerset *timers);
/* Cancels the timers and frees every queued message. */
void l2tp_rd_destroy(struct l2tp_rd *rd);
/* Cancels the timers only (memory stays valid until l2tp_rd_destroy). */
void l2tp_rd_stop_timers(struct l2tp_rd *rd);

/*
 * Queues an encoded message (copied) and sends it when the window allows.
 * max_retries 0 uses the configured default.  0, or -1 (ENOMEM, EMSGSIZE,
 * ESHUTDOWN after give-up).
 */
int l2tp_rd_send(struct l2tp_rd *rd, const uint8_t *buf, size_t len, uint16_t type,
		 unsigned max_retries);

/*
 * Header of a received, authenticated message.  sequenced is false for ZLB
 * and ACK (20), which take no Ns slot.  buf/len are kept (copied) when the
 * message is held.  ACKs and window advances happen inside.
 */
enum l2tp_rd_verdict l2tp_rd_input(struct l2tp_rd *rd, uint16_t ns, uint16_t nr,
				   bool sequenced, const uint8_t *buf, size_t len);

/* The held message that is now in order, or NULL; the caller free()s it. */
struct l2tp_rd_buf *l2tp_rd_next_held(struct l2tp_rd *rd);

/* The peer's Receive Window Size (from its SCCRQ/SCCRP); 0 means absent (4). */
void l2tp_rd_set_peer_window(struct l2tp_rd *rd, uint16_t w);

/* Drops messages that never left (no Ns used yet): before a StopCCN. */
void l2tp_rd_drop_pending(struct l2tp_rd *rd);
/*
 * Forgets everything we were sending (the peer is gone, e.g. after its
 * StopCCN) while still acknowledging what arrives.
 */
void l2tp_rd_quiesce(struct l2tp_rd *rd);
/*
 * A control channel reset (RFC 4951): everything queued, in flight or held
 * is thrown away, the next message sent gets snd_nxt and the next one
 * expected is rcv_nxt; the congestion window stays.
 */
void l2tp_rd_reset_seq(struct l2tp_rd *rd, uint16_t snd_nxt, uint16_t rcv_nxt);
/* Sends an acknowledgement now (duplicates, StopCCN received). */
void l2tp_rd_ack_now(struct l2tp_rd *rd);
/* Sends once more, now, what is in flight (each with the current Nr). */
void l2tp_rd_resend_inflight(struct l2tp_rd *rd);

/*
 * After a received message was processed: sends the acknowledgement that
 * the ACK rule asks for at once (two or more in-order messages, a gap, or
 * messages held beyond one), unless a reply already carried it.  The owner
 * calls it once per input.
 */
void l2tp_rd_ack_flush(struct l2tp_rd *rd);

/*
 * For a message just sent from idle (its RTO the current one): how long it
 * may go unacknowledged before the peer is given up on, with `retries`
 * retransmissions, the RTO doubling up to its cap at each (rd_retransmit).
 */
usl_time l2tp_rd_give_up_after(const struct l2tp_rd *rd, unsigned retries);

/*
 * Caps every queued or unacknowledged message at `retries` retransmissions,
 * or at those it already had: the connection is given up on at the next
 * timeout that finds its oldest message's retries used up (at once, from
 * the timer, if the oldest already went past the cap).  Never raises a cap.
 */
void l2tp_rd_limit_retries(struct l2tp_rd *rd, unsigned retries);

/* Nothing queued or unacknowledged. */
static inline bool l2tp_rd_idle(const struct l2tp_rd *rd)
{
	return rd->n_inflight == 0 && rd->n_pending == 0;
}

/* a - b in sequence space: negative when a is "before" b (window 32767). */
static inline int l2tp_seq_diff(uint16_t a, uint16_t b)
{
	return (int16_t)(uint16_t)(a - b);
}

/*
 * Restart handover.  l2tp_rd_save() first sends an acknowledgement that is
 * owed, then writes the sequence state and every message in flight or
 * waiting; held out-of-order messages are left out (the peer sends them
 * again).  l2tp_rd_restore() reads that into an rd fresh from l2tp_rd_init()
 * and sends what was in flight again after one initial timeout.  -1: the
 * input is malformed (what was read is freed by l2tp_rd_destroy()).
 */
void l2tp_rd_save(struct l2tp_rd *rd, struct usl_pack *w);
int l2tp_rd_restore(struct l2tp_rd *rd, struct usl_unpack *r);

#endif
