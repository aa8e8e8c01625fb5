/*
 * src/proto/rd.c - reliable delivery of control messages (RFC 3931 4.2,
 * Appendix A).  See rd.h.
 *
 * Sending: messages wait on `pending` until the window
 * min(CWND, peer Receive Window Size) has room, take the next Ns and move to
 * `inflight`.  One retransmit timer covers the oldest in-flight message; an
 * acknowledgement that advances Snd.Una resets the backoff and re-arms it
 * for the next oldest.  Receiving: Nr is checked first (acknowledging what
 * we never sent drops the message), then Ns is classified: in order,
 * duplicate (acknowledged at once: the peer lost our ACK), ahead within our
 * window (held), or beyond it (dropped).
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
	usl_list_init(&rd->held);
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

void l2tp_rd_destroy(struct l2tp_rd *rd)
{
	l2tp_rd_stop_timers(rd);
	rd_free_list(&rd->inflight);
	rd_free_list(&rd->pending);
	rd_free_list(&rd->held);
	rd->n_inflight = rd->n_pending = rd->n_held = 0;
}

/* Every transmission carries the current Nr, so a pending ACK rides along. */
static void rd_transmit(struct l2tp_rd *rd, struct l2tp_rd_buf *b, bool retransmit)
{
	l2tp_msg_set_seq(b->buf, b->len, false, b->ns, rd->rcv_nxt);
	rd->ack_pending = false;
	usl_timer_cancel(&rd->ack_timer);
	rd->ops->output(rd, b->buf, b->len, b->type, retransmit);
}

static uint16_t rd_window(const struct l2tp_rd *rd)
{
	return rd->cwnd < rd->peer_rwin ? rd->cwnd : rd->peer_rwin;
}

/* Moves pending messages into flight while the window has room. */
static void rd_push(struct l2tp_rd *rd)
{
	struct l2tp_rd_buf *b;

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
	b->max_retries = (uint16_t)(max_retries ? max_retries : rd->cfg.max_retries);
	usl_list_add_tail(&rd->pending, &b->link);
	rd->n_pending++;
	rd_push(rd);
	return 0;
}

/* Appendix A: +1 per ACK in slow start, +1 per CWND ACKs in congestion avoidance. */
static void rd_cwnd_grow(struct l2tp_rd *rd)
{
	if (rd->cwnd < rd->ssthresh) {
		rd->cwnd++;
	} else if (++rd->cwnd_acks >= rd->cwnd) {
		rd->cwnd_acks = 0;
		rd->cwnd++;
	}
	if (rd->cwnd > rd->peer_rwin)
		rd->cwnd = rd->peer_rwin;
}

static void rd_cwnd_collapse(struct l2tp_rd *rd)
{
	rd->ssthresh = rd->cwnd / 2 ? rd->cwnd / 2 : 1;
	rd->cwnd = 1;
	rd->cwnd_acks = 0;
}

/* Flushes the n oldest in-flight messages. */
static void rd_ack(struct l2tp_rd *rd, uint16_t n)
{
	struct l2tp_rd_buf *b;
	uint16_t type;

	if (n == 0)
		return;
	while (n-- > 0 && rd->n_inflight > 0) {
		b = usl_list_first_entry(&rd->inflight, struct l2tp_rd_buf, link);
		usl_list_del(&b->link);
		rd->n_inflight--;
		rd->snd_una++;
		type = b->type;
		free(b);
		if (rd->ops->acked != NULL)
			rd->ops->acked(rd, type);
	}
	rd_cwnd_grow(rd);
	rd->retries = 0;
	rd->rto = rd->cfg.rtx_initial;
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

/* Delayed ACK: give a reply the chance to carry Nr, but never for flow control. */
static void rd_schedule_ack(struct l2tp_rd *rd)
{
	rd->ack_pending = true;
	if (!usl_timer_armed(&rd->ack_timer))
		usl_timer_arm(rd->timers, &rd->ack_timer, rd->cfg.ack_delay);
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

static void rd_retransmit(struct l2tp_rd *rd)
{
	struct l2tp_rd_buf *b;
	usl_time next;

	if (rd->n_inflight == 0 || rd->dead)
		return;
	b = usl_list_first_entry(&rd->inflight, struct l2tp_rd_buf, link);
	if (rd->retries >= b->max_retries) {
		rd->dead = true;
		rd->ops->give_up(rd, b->type, rd->retries);
		return;
	}
	rd->retries++;
	rd->n_retransmits++;
	rd_cwnd_collapse(rd);
	next = usl_time_add(rd->rto, rd->rto);
	rd->rto = usl_time_cmp(next, rd->cfg.rtx_cap) > 0 ? rd->cfg.rtx_cap : next;
	usl_timer_arm(rd->timers, &rd->rtx_timer, rd->rto);
	rd_transmit(rd, b, true);
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

static enum l2tp_rd_verdict rd_hold(struct l2tp_rd *rd, uint16_t ns,
				    const uint8_t *buf, size_t len)
{
	struct l2tp_rd_buf *b, *nb;
	struct usl_list *pos;
	int d = l2tp_seq_diff(ns, rd->rcv_nxt);

	usl_list_foreach(pos, &rd->held) {
		b = usl_list_entry(pos, struct l2tp_rd_buf, link);
		if (b->ns == ns) {
			rd->n_duplicates++;
			return L2TP_RD_DUPLICATE;
		}
		if (l2tp_seq_diff(b->ns, rd->rcv_nxt) > d)
			break;
	}
	nb = malloc(sizeof(*nb) + len);
	if (nb == NULL)
		return L2TP_RD_OUT_OF_WINDOW;	/* the peer will retransmit */
	memcpy(nb->buf, buf, len);
	nb->len = (uint16_t)len;
	nb->ns = ns;
	nb->type = 0;
	nb->max_retries = 0;
	usl_list_add_tail(pos, &nb->link);	/* before pos: keeps Ns order */
	rd->n_held++;
	rd->n_held_total++;
	return L2TP_RD_HELD;
}

static enum l2tp_rd_verdict rd_classify(struct l2tp_rd *rd, uint16_t ns,
					const uint8_t *buf, size_t len)
{
	int d = l2tp_seq_diff(ns, rd->rcv_nxt);

	if (d == 0) {
		rd->rcv_nxt++;
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
	rd_ack(rd, (uint16_t)acked);
	rd_push(rd);
	switch (v) {
	case L2TP_RD_DELIVER:
	case L2TP_RD_HELD:
		rd_schedule_ack(rd);
		break;
	case L2TP_RD_DUPLICATE:
		/* 4.2: duplicates MUST be acknowledged (our ACK was lost) */
		rd_send_ack(rd);
		break;
	default:
		break;
	}
	return v;
}

struct l2tp_rd_buf *l2tp_rd_next_held(struct l2tp_rd *rd)
{
	struct l2tp_rd_buf *b;

	if (rd->n_held == 0)
		return NULL;
	b = usl_list_first_entry(&rd->held, struct l2tp_rd_buf, link);
	if (b->ns != rd->rcv_nxt)
		return NULL;
	usl_list_del(&b->link);
	rd->n_held--;
	rd->rcv_nxt++;
	rd_schedule_ack(rd);
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
	rd->snd_una = rd->snd_nxt;
	usl_timer_cancel(&rd->rtx_timer);
}
