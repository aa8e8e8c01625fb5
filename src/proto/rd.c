/*
 * src/proto/rd.c - reliable delivery of control messages (RFC 3931 4.2,
 * Appendix A).  See rd.h.
 *
 * Sending: messages wait on `pending` until the window
 * min(CWND, peer Receive Window Size) has room, take the next Ns and move to
 * `inflight`.  One retransmit timer covers the oldest in-flight message; an
 * acknowledgement that advances Snd.Una resets the backoff and re-arms it
 * for the next oldest.  A timeout starts loss recovery: CWND collapses to 1
 * (Appendix A), the oldest message goes again, and as acknowledgements come
 * and the window reopens (slow start), the rest of what was in flight goes
 * again, oldest first (go-back-N); an acknowledgement that covers some but
 * not all of it (a partial ACK) resends the next unacknowledged message at
 * once.  A burst loss of k messages so recovers in O(log k) round trips,
 * not k timeouts.  Retries are per message (rd.h); the timer gives up.
 *
 * Receiving: Nr is checked first (acknowledging what we never sent drops
 * the message), then Ns is classified: in order, duplicate (acknowledged at
 * once: the peer lost our ACK), ahead within our window (held, in a ring
 * indexed by Ns - Nr: O(1) whatever the window), or beyond it (dropped).
 * The ACK rule is TCP's: at once after two in-order messages, a gap, or an
 * in-order message with others held beyond it (it filled part of a gap);
 * else after the delay, unless a transmission carries Nr first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "rd.h"

#define RD_DEFAULT_PEER_RWIN	4	/* RFC 3931 5.4.3: absent AVP means 4 */

static void rd_rtx_expired(struct usl_timer *t);
static void rd_ack_expired(struct usl_timer *t);

void l2tp_rd_init(struct l2tp_rd *rd, const struct l2tp_rd_cfg *cfg,
		  const struct l2tp_rd_ops *ops, struct usl_timerset *timers)
{
	memset(rd, 0, sizeof(*rd));
	rd->cfg = *cfg;
	if (rd->cfg.rx_window == 0)
		rd->cfg.rx_window = 1;
	rd->ops = ops;
	rd->timers = timers;
	usl_list_init(&rd->inflight);
	usl_list_init(&rd->pending);
	rd->peer_rwin = RD_DEFAULT_PEER_RWIN;
	rd->cwnd = 1;
	rd->ssthresh = rd->peer_rwin;
	rd->rto = cfg->rtx_initial;
	usl_timer_init(&rd->rtx_timer, rd_rtx_expired);
	usl_timer_init(&rd->ack_timer, rd_ack_expired);
}

static void rd_free_list(struct usl_list *h)
{
	struct usl_list *pos, *tmp;

	usl_list_foreach_safe(pos, tmp, h) {
		usl_list_del(pos);
		free(usl_list_entry(pos, struct l2tp_rd_buf, link));
	}
}

void l2tp_rd_stop_timers(struct l2tp_rd *rd)
{
	usl_timer_cancel(&rd->rtx_timer);
	usl_timer_cancel(&rd->ack_timer);
}

static void rd_free_held(struct l2tp_rd *rd)
{
	if (rd->held != NULL)
		for (unsigned i = 0; i < rd->cfg.rx_window; i++)
			free(rd->held[i]);
	free(rd->held);
	rd->held = NULL;
	rd->n_held = 0;
}

void l2tp_rd_destroy(struct l2tp_rd *rd)
{
	l2tp_rd_stop_timers(rd);
	rd_free_list(&rd->inflight);
	rd_free_list(&rd->pending);
	rd_free_held(rd);
	rd->rtx_cursor = NULL;
	rd->in_recovery = false;
	rd->n_inflight = rd->n_pending = 0;
}

/* Every transmission carries the current Nr, so a pending ACK rides along. */
static void rd_transmit(struct l2tp_rd *rd, struct l2tp_rd_buf *b, bool retransmit)
{
	if (retransmit) {
		b->retries++;
		rd->n_retransmits++;
	}
	l2tp_msg_set_seq(b->buf, b->len, false, b->ns, rd->rcv_nxt);
	rd->ack_pending = false;
	rd->ack_asap = false;
	rd->unacked_rx = 0;
	usl_timer_cancel(&rd->ack_timer);
	rd->ops->output(rd, b->buf, b->len, b->type, retransmit);
}

static uint16_t rd_window(const struct l2tp_rd *rd)
{
	return rd->cwnd < rd->peer_rwin ? rd->cwnd : rd->peer_rwin;
}

/* Messages sent again in this recovery and not yet acknowledged. */
static uint16_t rd_resent_outstanding(const struct l2tp_rd *rd)
{
	if (rd->rtx_cursor == NULL)
		return (uint16_t)(rd->recover - rd->snd_una);
	return (uint16_t)(rd->rtx_cursor->ns - rd->snd_una);
}

/*
 * Go-back-N: sends again, oldest first, what was in flight at the timeout,
 * as far as the window allows; new messages wait until all of it went.  It
 * stops at a message that used up its retries: once that one is the oldest,
 * the retransmit timer gives up on it.
 */
static void rd_recover(struct l2tp_rd *rd)
{
	struct l2tp_rd_buf *b;

	while (!rd->dead && rd->in_recovery && rd->rtx_cursor != NULL &&
	       rd_resent_outstanding(rd) < rd_window(rd)) {
		b = rd->rtx_cursor;
		if (b->retries >= b->max_retries)
			break;
		rd->rtx_cursor = b->link.next == &rd->inflight ? NULL :
			usl_list_entry(b->link.next, struct l2tp_rd_buf, link);
		if (rd->rtx_cursor != NULL && l2tp_seq_diff(rd->rtx_cursor->ns, rd->recover) >= 0)
			rd->rtx_cursor = NULL;
		rd_transmit(rd, b, true);
	}
}

/* Moves pending messages into flight while the window has room. */
static void rd_push(struct l2tp_rd *rd)
{
	struct l2tp_rd_buf *b;

	rd_recover(rd);
	if (rd->in_recovery && rd->rtx_cursor != NULL)
		return;		/* the lost ones first */
	while (!rd->dead && rd->n_pending > 0 && rd->n_inflight < rd_window(rd)) {
		b = usl_list_first_entry(&rd->pending, struct l2tp_rd_buf, link);
		usl_list_del(&b->link);
		rd->n_pending--;
		b->ns = rd->snd_nxt++;
		usl_list_add_tail(&rd->inflight, &b->link);
		rd->n_inflight++;
		if (!usl_timer_armed(&rd->rtx_timer)) {
			rd->rto = rd->cfg.rtx_initial;
			usl_timer_arm(rd->timers, &rd->rtx_timer, rd->rto);
		}
		rd_transmit(rd, b, false);
	}
}

int l2tp_rd_send(struct l2tp_rd *rd, const uint8_t *buf, size_t len, uint16_t type,
		 unsigned max_retries)
{
	struct l2tp_rd_buf *b;

	if (rd->dead) {
		errno = ESHUTDOWN;
		return -1;
	}
	if (len < L2TP_CTRL_HDR_LEN || len > L2TP_MAX_MSG) {
		errno = EMSGSIZE;
		return -1;
	}
	b = malloc(sizeof(*b) + len);
	if (b == NULL)
		return -1;
	memcpy(b->buf, buf, len);
	b->len = (uint16_t)len;
	b->type = type;
	b->ns = 0;
	b->retries = 0;
	b->max_retries = (uint16_t)(max_retries ? max_retries : rd->cfg.max_retries);
	usl_list_add_tail(&rd->pending, &b->link);
	rd->n_pending++;
	rd_push(rd);
	return 0;
}

/*
 * Appendix A: +1 per acknowledged message in slow start, +1 per CWND of
 * them in congestion avoidance.  Counted per message, not per Nr update:
 * one cumulative Nr acknowledging n messages is n acknowledgements (else
 * slow start would grow by one a round trip, with peers that acknowledge
 * a whole window at once).
 */
static void rd_cwnd_grow(struct l2tp_rd *rd, uint16_t n)
{
	while (n-- > 0) {
		if (rd->cwnd < rd->ssthresh) {
			rd->cwnd++;
		} else if (++rd->cwnd_acks >= rd->cwnd) {
			rd->cwnd_acks = 0;
			rd->cwnd++;
		}
		if (rd->cwnd >= rd->peer_rwin) {
			rd->cwnd = rd->peer_rwin;
			break;
		}
	}
}

static void rd_cwnd_collapse(struct l2tp_rd *rd)
{
	rd->ssthresh = rd->cwnd / 2 ? rd->cwnd / 2 : 1;
	rd->cwnd = 1;
	rd->cwnd_acks = 0;
}

/*
 * During recovery, an acknowledgement that advances Snd.Una but not past
 * what was in flight at the timeout means the next one was lost too: it
 * goes again at once (NewReno's partial ACK), not after another timeout.
 */
static void rd_partial_ack(struct l2tp_rd *rd)
{
	struct l2tp_rd_buf *b;

	if (l2tp_seq_diff(rd->snd_una, rd->recover) >= 0 || rd->n_inflight == 0) {
		rd->in_recovery = false;
		rd->rtx_cursor = NULL;
		return;
	}
	/*
	 * The next unacknowledged one goes now if this recovery has not sent
	 * it again yet (the ACK opened the window for it); if it has, its copy
	 * is in flight and a second copy would only add to the load.
	 */
	b = usl_list_first_entry(&rd->inflight, struct l2tp_rd_buf, link);
	if (rd->rtx_cursor == b)
		rd_recover(rd);
}

/* Flushes the n oldest in-flight messages. */
static void rd_ack(struct l2tp_rd *rd, uint16_t n)
{
	struct l2tp_rd_buf *b;
	uint16_t type, acked = 0;

	if (n == 0)
		return;
	while (n-- > 0 && rd->n_inflight > 0) {
		acked++;
		b = usl_list_first_entry(&rd->inflight, struct l2tp_rd_buf, link);
		if (rd->rtx_cursor == b)
			rd->rtx_cursor = b->link.next == &rd->inflight ? NULL :
				usl_list_entry(b->link.next, struct l2tp_rd_buf, link);
		usl_list_del(&b->link);
		rd->n_inflight--;
		rd->snd_una++;
		type = b->type;
		free(b);
		if (rd->ops->acked != NULL)
			rd->ops->acked(rd, type);
	}
	rd_cwnd_grow(rd, acked);
	rd->rto = rd->cfg.rtx_initial;
	if (rd->in_recovery && !rd->dead)
		rd_partial_ack(rd);
	if (rd->n_inflight > 0 && !rd->dead)
		usl_timer_arm(rd->timers, &rd->rtx_timer, rd->rto);
	else
		usl_timer_cancel(&rd->rtx_timer);
}

static void rd_send_ack(struct l2tp_rd *rd)
{
	uint8_t buf[256];
	int len;

	rd->ack_pending = false;
	rd->ack_asap = false;
	rd->unacked_rx = 0;
	usl_timer_cancel(&rd->ack_timer);
	len = rd->ops->build_ack(rd, buf, sizeof(buf));
	if (len < L2TP_CTRL_HDR_LEN)
		return;
	/* An ACK takes no Ns slot: it carries the next Ns we will use. */
	l2tp_msg_set_seq(buf, (size_t)len, false, rd->snd_nxt, rd->rcv_nxt);
	rd->n_acks_sent++;
	rd->ops->output(rd, buf, (size_t)len, 0, false);
}

void l2tp_rd_ack_now(struct l2tp_rd *rd)
{
	rd_send_ack(rd);
}

void l2tp_rd_resend_inflight(struct l2tp_rd *rd)
{
	struct usl_list *pos;

	if (rd->dead)
		return;
	usl_list_foreach(pos, &rd->inflight)
		rd_transmit(rd, usl_list_entry(pos, struct l2tp_rd_buf, link), true);
}

/*
 * Delayed ACK gives a reply the chance to carry Nr, but never throttles
 * the sender: with two in-order messages unacknowledged, a gap (the peer
 * must learn of it: the duplicate Nr tells it where we are), or an in-order
 * message with others held beyond it (it filled a gap, or part of one: the
 * peer is recovering and waits for this Nr), the ACK goes when this input
 * is processed (l2tp_rd_ack_flush), TCP's rule (RFC 5681 4.2).
 */
static void rd_schedule_ack(struct l2tp_rd *rd, bool in_order)
{
	rd->ack_pending = true;
	if (in_order)
		rd->unacked_rx++;
	if (!in_order || rd->unacked_rx >= 2 || rd->n_held > 0)
		rd->ack_asap = true;
	if (!usl_timer_armed(&rd->ack_timer))
		usl_timer_arm(rd->timers, &rd->ack_timer, rd->cfg.ack_delay);
}

void l2tp_rd_ack_flush(struct l2tp_rd *rd)
{
	if (rd->ack_pending && rd->ack_asap)
		rd_send_ack(rd);
}

static void rd_guard(struct l2tp_rd *rd, bool enter)
{
	if (rd->ops->guard != NULL)
		rd->ops->guard(rd, enter);
}

static void rd_ack_expired(struct usl_timer *t)
{
	struct l2tp_rd *rd = usl_container_of(t, struct l2tp_rd, ack_timer);

	rd_guard(rd, true);
	if (rd->ack_pending)
		rd_send_ack(rd);
	rd_guard(rd, false);
}

static void rd_retransmit(struct l2tp_rd *rd);

static void rd_rtx_expired(struct usl_timer *t)
{
	struct l2tp_rd *rd = usl_container_of(t, struct l2tp_rd, rtx_timer);

	rd_guard(rd, true);
	rd_retransmit(rd);
	rd_guard(rd, false);
}

/* The RTO after one more unanswered retransmission: doubled, up to the cap. */
static usl_time rd_backoff(const struct l2tp_rd *rd, usl_time rto)
{
	usl_time next = usl_time_add(rto, rto);

	return usl_time_cmp(next, rd->cfg.rtx_cap) > 0 ? rd->cfg.rtx_cap : next;
}

usl_time l2tp_rd_give_up_after(const struct l2tp_rd *rd, unsigned retries)
{
	usl_time rto = rd->rto, total = usl_time_ns(0);

	for (unsigned i = 0; i <= retries; i++) {
		total = usl_time_add(total, rto);
		rto = rd_backoff(rd, rto);
	}
	return total;
}

static void rd_limit_list(struct usl_list *list, unsigned retries)
{
	struct usl_list *pos;

	usl_list_foreach(pos, list) {
		struct l2tp_rd_buf *b = usl_list_entry(pos, struct l2tp_rd_buf, link);
		unsigned cap = b->retries > retries ? b->retries : retries;

		if (b->max_retries > cap)
			b->max_retries = (uint16_t)cap;
	}
}

void l2tp_rd_limit_retries(struct l2tp_rd *rd, unsigned retries)
{
	const struct l2tp_rd_buf *oldest;

	rd_limit_list(&rd->inflight, retries);
	rd_limit_list(&rd->pending, retries);
	if (rd->n_inflight == 0 || rd->dead)
		return;
	/*
	 * The oldest went past the limit: its retries-th retransmission already
	 * went unanswered for a whole RTO.  The timer gives up on it now, not an
	 * RTO later (and not from inside the caller's walk).
	 */
	oldest = usl_list_first_entry(&rd->inflight, struct l2tp_rd_buf, link);
	if (oldest->retries > retries)
		usl_timer_arm(rd->timers, &rd->rtx_timer, usl_time_ns(0));
}

/*
 * The oldest message went unacknowledged for a whole RTO: everything in
 * flight is presumed lost (go-back-N from the oldest, within the collapsed
 * window) and the backoff doubles.  When the oldest was already sent again
 * max_retries times (by earlier timeouts, go-back-N or a partial ACK), the
 * peer is given up on: a silent one after max_retries timeouts, as always.
 */
static void rd_retransmit(struct l2tp_rd *rd)
{
	struct l2tp_rd_buf *b;

	if (rd->n_inflight == 0 || rd->dead)
		return;
	b = usl_list_first_entry(&rd->inflight, struct l2tp_rd_buf, link);
	if (b->retries >= b->max_retries) {
		rd->dead = true;
		rd->ops->give_up(rd, b->type, b->retries);
		return;
	}
	rd_cwnd_collapse(rd);
	rd->rto = rd_backoff(rd, rd->rto);
	usl_timer_arm(rd->timers, &rd->rtx_timer, rd->rto);
	rd->in_recovery = true;
	rd->recover = rd->snd_nxt;
	rd->rtx_cursor = b;
	rd_recover(rd);		/* with CWND 1: the oldest, now */
}

/*
 * Nr must lie in [Snd.Una, Snd.Nxt]; one in the 32767 values before
 * Snd.Una is merely stale (reordered), anything else acknowledges messages
 * we never sent.  Returns how many messages it acknowledges, or -1.
 */
static int rd_check_nr(const struct l2tp_rd *rd, uint16_t nr)
{
	uint16_t d = (uint16_t)(nr - rd->snd_una);

	if (d <= rd->n_inflight)
		return d;
	if (l2tp_seq_diff(nr, rd->snd_una) < 0)
		return 0;
	return -1;
}

/*
 * Held messages all lie in (Nr, Nr + rx_window): the ring's slot for Ns is
 * its distance from Nr past held_head (the slot of Nr, which moves on with
 * it), so holding, finding a duplicate and taking the next in order are
 * O(1) whatever the window (1,024 is normal).  Not Ns modulo the window:
 * 65,536 is no multiple of most windows, and Ns wraps.
 */
static struct l2tp_rd_buf **rd_slot(struct l2tp_rd *rd, uint16_t ns)
{
	unsigned d = (uint16_t)(ns - rd->rcv_nxt);

	return &rd->held[(rd->held_head + d) % rd->cfg.rx_window];
}

/* Nr moves on by one; so does the ring's origin. */
static void rd_rcv_advance(struct l2tp_rd *rd)
{
	rd->rcv_nxt++;
	if (rd->held != NULL)
		rd->held_head = (uint16_t)((rd->held_head + 1u) % rd->cfg.rx_window);
}

static enum l2tp_rd_verdict rd_hold(struct l2tp_rd *rd, uint16_t ns,
				    const uint8_t *buf, size_t len)
{
	struct l2tp_rd_buf *nb, **slot;

	if (rd->held == NULL) {
		rd->held = calloc(rd->cfg.rx_window, sizeof(*rd->held));
		if (rd->held == NULL)
			return L2TP_RD_OUT_OF_WINDOW;	/* the peer will retransmit */
		rd->held_head = 0;
	}
	slot = rd_slot(rd, ns);
	if (*slot != NULL) {
		rd->n_duplicates++;
		return L2TP_RD_DUPLICATE;
	}
	nb = malloc(sizeof(*nb) + len);
	if (nb == NULL)
		return L2TP_RD_OUT_OF_WINDOW;
	memcpy(nb->buf, buf, len);
	nb->len = (uint16_t)len;
	nb->ns = ns;
	nb->type = 0;
	nb->max_retries = 0;
	nb->retries = 0;
	*slot = nb;
	rd->n_held++;
	rd->n_held_total++;
	return L2TP_RD_HELD;
}

static enum l2tp_rd_verdict rd_classify(struct l2tp_rd *rd, uint16_t ns,
					const uint8_t *buf, size_t len)
{
	int d = l2tp_seq_diff(ns, rd->rcv_nxt);

	if (d == 0) {
		/*
		 * A copy of the held one that is now in order but not yet
		 * taken (l2tp_rd_next_held): Nr must not pass it.
		 */
		if (rd->n_held > 0 && *rd_slot(rd, ns) != NULL) {
			rd->n_duplicates++;
			return L2TP_RD_DUPLICATE;
		}
		rd_rcv_advance(rd);
		return L2TP_RD_DELIVER;
	}
	if (d < 0) {
		rd->n_duplicates++;
		return L2TP_RD_DUPLICATE;
	}
	if (d < rd->cfg.rx_window)
		return rd_hold(rd, ns, buf, len);
	return L2TP_RD_OUT_OF_WINDOW;
}

/*
 * The ACK this input asks for is noted before anything goes out, so that
 * whatever the acknowledgement releases (window, partial ACK) carries Nr in
 * its place: no ZLB follows a message that already said as much.
 */
enum l2tp_rd_verdict l2tp_rd_input(struct l2tp_rd *rd, uint16_t ns, uint16_t nr,
				   bool sequenced, const uint8_t *buf, size_t len)
{
	enum l2tp_rd_verdict v = L2TP_RD_ACK_ONLY;
	int acked = rd_check_nr(rd, nr);

	if (acked < 0)
		return L2TP_RD_NR_INVALID;
	if (sequenced) {
		v = rd_classify(rd, ns, buf, len);
		if (v == L2TP_RD_OUT_OF_WINDOW)
			return v;
	}
	switch (v) {
	case L2TP_RD_DELIVER:
	case L2TP_RD_HELD:
		rd_schedule_ack(rd, v == L2TP_RD_DELIVER);
		break;
	case L2TP_RD_DUPLICATE:
		rd->ack_pending = true;		/* sent below, unless carried */
		break;
	default:
		break;
	}
	rd_ack(rd, (uint16_t)acked);
	rd_push(rd);
	/* 4.2: duplicates MUST be acknowledged (our ACK was lost): at once */
	if (v == L2TP_RD_DUPLICATE && rd->ack_pending)
		rd_send_ack(rd);
	return v;
}

struct l2tp_rd_buf *l2tp_rd_next_held(struct l2tp_rd *rd)
{
	struct l2tp_rd_buf *b, **slot;

	if (rd->n_held == 0)
		return NULL;
	slot = rd_slot(rd, rd->rcv_nxt);
	b = *slot;
	if (b == NULL || b->ns != rd->rcv_nxt)
		return NULL;
	*slot = NULL;
	rd->n_held--;
	rd_rcv_advance(rd);
	rd_schedule_ack(rd, true);
	if (rd->n_held == 0) {
		free(rd->held);		/* idle connections keep no ring */
		rd->held = NULL;
	}
	return b;
}

void l2tp_rd_set_peer_window(struct l2tp_rd *rd, uint16_t w)
{
	rd->peer_rwin = w ? w : RD_DEFAULT_PEER_RWIN;
	rd->ssthresh = rd->peer_rwin;
	if (rd->cwnd > rd->peer_rwin)
		rd->cwnd = rd->peer_rwin;
	rd_push(rd);
}

void l2tp_rd_drop_pending(struct l2tp_rd *rd)
{
	rd_free_list(&rd->pending);
	rd->n_pending = 0;
}

void l2tp_rd_quiesce(struct l2tp_rd *rd)
{
	l2tp_rd_drop_pending(rd);
	rd_free_list(&rd->inflight);
	rd->n_inflight = 0;
	rd->in_recovery = false;
	rd->rtx_cursor = NULL;
	rd->snd_una = rd->snd_nxt;
	usl_timer_cancel(&rd->rtx_timer);
}

void l2tp_rd_reset_seq(struct l2tp_rd *rd, uint16_t snd_nxt, uint16_t rcv_nxt)
{
	l2tp_rd_quiesce(rd);
	if (rd->held != NULL)
		for (unsigned i = 0; i < rd->cfg.rx_window; i++) {
			free(rd->held[i]);
			rd->held[i] = NULL;
		}
	rd->n_held = 0;
	rd->held_head = 0;
	rd->snd_una = rd->snd_nxt = snd_nxt;
	rd->rcv_nxt = rcv_nxt;
	rd->ack_pending = false;
	usl_timer_cancel(&rd->ack_timer);
	rd->dead = false;
	/* the window stays: the path is the one it was measured on, and an FSQ
	 * each way then does not wait for a delayed ACK before its FSR */
	rd->rto = rd->cfg.rtx_initial;
}

/* ---- restart handover ---------------------------------------------------- */

static void rd_save_list(const struct usl_list *h, uint16_t n, struct usl_pack *w)
{
	const struct usl_list *pos;

	usl_pack_u16(w, n);
	usl_list_foreach(pos, h) {
		const struct l2tp_rd_buf *b = usl_list_entry(pos, const struct l2tp_rd_buf, link);

		usl_pack_u16(w, b->ns);
		usl_pack_u16(w, b->type);
		usl_pack_u16(w, b->max_retries);
		usl_pack_u16(w, b->retries);
		usl_pack_blob(w, b->buf, b->len);
	}
}

void l2tp_rd_save(struct l2tp_rd *rd, struct usl_pack *w)
{
	/* what we owe the peer goes now: the next process may be a while */
	if (rd->ack_pending)
		rd_send_ack(rd);
	usl_pack_u16(w, rd->snd_una);
	usl_pack_u16(w, rd->snd_nxt);
	usl_pack_u16(w, rd->rcv_nxt);
	usl_pack_u16(w, rd->peer_rwin);
	usl_pack_u16(w, rd->cwnd);
	usl_pack_u16(w, rd->ssthresh);
	usl_pack_u16(w, rd->cwnd_acks);
	usl_pack_u8(w, rd->dead);
	usl_pack_u32(w, rd->n_retransmits);
	usl_pack_u32(w, rd->n_duplicates);
	usl_pack_u32(w, rd->n_held_total);
	usl_pack_u32(w, rd->n_acks_sent);
	/* held (out of order) messages are not kept: unacknowledged, the peer sends them again */
	rd_save_list(&rd->inflight, rd->n_inflight, w);
	rd_save_list(&rd->pending, rd->n_pending, w);
}

static int rd_restore_list(struct usl_list *h, uint16_t *n, struct usl_unpack *r)
{
	uint16_t count = usl_unpack_u16(r);

	for (unsigned i = 0; i < count && !r->bad; i++) {
		uint16_t ns = usl_unpack_u16(r), type = usl_unpack_u16(r);
		uint16_t max_retries = usl_unpack_u16(r), retries = usl_unpack_u16(r);
		size_t len;
		const uint8_t *p = usl_unpack_blob(r, &len);
		struct l2tp_rd_buf *b;

		if (r->bad || len < L2TP_CTRL_HDR_LEN || len > L2TP_MAX_MSG)
			return -1;
		b = malloc(sizeof(*b) + len);
		if (b == NULL)
			return -1;
		memcpy(b->buf, p, len);
		b->len = (uint16_t)len;
		b->ns = ns;
		b->type = type;
		b->max_retries = max_retries;
		b->retries = retries;
		usl_list_add_tail(h, &b->link);
		(*n)++;
	}
	return r->bad ? -1 : 0;
}

int l2tp_rd_restore(struct l2tp_rd *rd, struct usl_unpack *r)
{
	rd->snd_una = usl_unpack_u16(r);
	rd->snd_nxt = usl_unpack_u16(r);
	rd->rcv_nxt = usl_unpack_u16(r);
	rd->peer_rwin = usl_unpack_u16(r);
	rd->cwnd = usl_unpack_u16(r);
	rd->ssthresh = usl_unpack_u16(r);
	rd->cwnd_acks = usl_unpack_u16(r);
	rd->dead = usl_unpack_bool(r);
	rd->n_retransmits = usl_unpack_u32(r);
	rd->n_duplicates = usl_unpack_u32(r);
	rd->n_held_total = usl_unpack_u32(r);
	rd->n_acks_sent = usl_unpack_u32(r);
	if (r->bad || rd->peer_rwin == 0 || rd->cwnd == 0)
		return -1;
	if (rd_restore_list(&rd->inflight, &rd->n_inflight, r) < 0 ||
	    rd_restore_list(&rd->pending, &rd->n_pending, r) < 0)
		return -1;
	/* the in-flight ones must be exactly snd_una..snd_nxt-1, in order */
	if (rd->n_inflight != (uint16_t)(rd->snd_nxt - rd->snd_una))
		return -1;
	/* what was in flight goes again after a fresh timeout, as after a loss */
	if (rd->n_inflight > 0) {
		rd->rto = rd->cfg.rtx_initial;
		usl_timer_arm(rd->timers, &rd->rtx_timer, rd->rto);
	}
	/* waiting ones move when an acknowledgement makes room, as before */
	return 0;
}
