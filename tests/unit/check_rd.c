/*
 * tests/unit/check_rd.c - reliable delivery (RFC 3931 4.2, Appendix A).
 *
 * Most cases drive one struct l2tp_rd directly with a fake owner that
 * records every transmission; the last ones run two full engines through
 * the back-to-back harness to see ACK (20) and ZLB on the wire.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "usl/buf.h"
#include "proto/rd.h"
#include "proto/msg.h"
#include "engine_harness.h"

/* ------------------------------------------------------------------ */
/* a lone rd with a recording owner */

struct tx {
	usl_time t;
	uint16_t ns, nr, type;
	bool retransmit;
	bool ack;
};

static struct usl_fake_clock fclock;
static struct usl_timerset ts;
static struct l2tp_rd rd;
static struct tx txlog[256];
static int ntx;
static uint16_t acked_types[256];
static int nacked;
static int gave_up;
static unsigned gave_up_retries;

static void rec_output(struct l2tp_rd *r, uint8_t *buf, size_t len, uint16_t type, bool rtx)
{
	struct tx *t;

	ck_assert_int_lt(ntx, 256);
	t = &txlog[ntx++];
	t->t = fclock.now;
	t->ns = usl_get_be16(buf + 8);
	t->nr = usl_get_be16(buf + 10);
	t->type = type;
	t->retransmit = rtx;
	t->ack = len == L2TP_CTRL_HDR_LEN;
}

static int rec_build_ack(struct l2tp_rd *r, uint8_t *buf, size_t cap)
{
	memset(buf, 0, L2TP_CTRL_HDR_LEN);
	usl_put_be16(buf, L2TP_HDR_T | L2TP_HDR_L | L2TP_HDR_S | 3);
	usl_put_be16(buf + 2, L2TP_CTRL_HDR_LEN);
	return L2TP_CTRL_HDR_LEN;
}

static void rec_acked(struct l2tp_rd *r, uint16_t type)
{
	acked_types[nacked++ & 255] = type;
}

static void rec_give_up(struct l2tp_rd *r, uint16_t type, unsigned retries)
{
	gave_up++;
	gave_up_retries = retries;
}

static const struct l2tp_rd_ops rec_ops = {
	.output = rec_output,
	.build_ack = rec_build_ack,
	.acked = rec_acked,
	.give_up = rec_give_up,
};

static void setup(void)
{
	struct l2tp_rd_cfg cfg = {
		.rx_window = 16,
		.rtx_initial = usl_time_s(1),
		.rtx_cap = usl_time_s(8),
		.max_retries = 10,
		.ack_delay = usl_time_ms(100),
	};

	usl_fake_clock_init(&fclock, usl_time_s(1000));
	usl_timerset_init(&ts, &fclock.clock);
	l2tp_rd_init(&rd, &cfg, &rec_ops, &ts);
	ntx = nacked = gave_up = 0;
	gave_up_retries = 0;
}

static void teardown(void)
{
	l2tp_rd_destroy(&rd);
	ck_assert_int_eq(usl_timerset_count(&ts), 0);
}

/* A HELLO: header plus Message Type AVP; rd only patches Ns/Nr. */
static void send_one(uint16_t type)
{
	uint8_t b[20] = { 0 };

	usl_put_be16(b, L2TP_HDR_T | L2TP_HDR_L | L2TP_HDR_S | 3);
	usl_put_be16(b + 2, sizeof(b));
	usl_put_be16(b + 12, L2TP_AVP_F_M | 8);
	usl_put_be16(b + 18, type);
	ck_assert_int_eq(l2tp_rd_send(&rd, b, sizeof(b), type, 0), 0);
}

static enum l2tp_rd_verdict rx(uint16_t ns, uint16_t nr)
{
	static const uint8_t dummy[20];

	return l2tp_rd_input(&rd, ns, nr, true, dummy, sizeof(dummy));
}

static enum l2tp_rd_verdict rx_ack(uint16_t ns, uint16_t nr)
{
	static const uint8_t dummy[12];

	return l2tp_rd_input(&rd, ns, nr, false, dummy, sizeof(dummy));
}

/* Runs timers up to t (absolute), expiry by expiry. */
static void advance_to(usl_time t)
{
	usl_time next;

	for (;;) {
		next = usl_timerset_next(&ts);
		if (usl_time_cmp(next, t) > 0)
			break;
		fclock.now = next;
		usl_timerset_run(&ts);
	}
	fclock.now = t;
}

static usl_time at_ms(int64_t ms)
{
	return usl_time_add(usl_time_s(1000), usl_time_ms(ms));
}

/* ------------------------------------------------------------------ */

START_TEST(test_wraparound)
{
	int i;

	rd.snd_una = rd.snd_nxt = 65534;
	rd.rcv_nxt = 65534;
	rd.cwnd = 8;
	l2tp_rd_set_peer_window(&rd, 16);
	rd.cwnd = 8;
	for (i = 0; i < 4; i++)
		send_one(L2TP_MSG_HELLO);
	ck_assert_int_eq(ntx, 4);
	ck_assert_uint_eq(txlog[0].ns, 65534);
	ck_assert_uint_eq(txlog[1].ns, 65535);
	ck_assert_uint_eq(txlog[2].ns, 0);
	ck_assert_uint_eq(txlog[3].ns, 1);
	/* receive 65534, 65535, 0, 1 in order */
	ck_assert_int_eq(rx(65534, 65534), L2TP_RD_DELIVER);
	ck_assert_int_eq(rx(65535, 65534), L2TP_RD_DELIVER);
	ck_assert_int_eq(rx(0, 65534), L2TP_RD_DELIVER);
	ck_assert_int_eq(rx(1, 0), L2TP_RD_DELIVER);	/* acks 65534, 65535 */
	ck_assert_uint_eq(rd.rcv_nxt, 2);
	ck_assert_uint_eq(rd.n_inflight, 2);
	ck_assert_uint_eq(rd.snd_una, 0);
	/* Nr 2 acknowledges across the wrap */
	ck_assert_int_eq(rx_ack(2, 2), L2TP_RD_ACK_ONLY);
	ck_assert_uint_eq(rd.n_inflight, 0);
	ck_assert_int_eq(nacked, 4);
	/* 65535 is now "before" 2: a duplicate, acknowledged at once */
	ntx = 0;
	ck_assert_int_eq(rx(65535, 2), L2TP_RD_DUPLICATE);
	ck_assert_int_eq(ntx, 1);
	ck_assert(txlog[0].ack);
	ck_assert_uint_eq(txlog[0].nr, 2);
	ck_assert_uint_eq(txlog[0].ns, 2);
	/* 32768 ahead of Nr-1 is not a duplicate: it is out of window */
	ck_assert_int_eq(rx(2 + 32767, 2), L2TP_RD_OUT_OF_WINDOW);
	/* the duplicate range is the 32768 values before Nr */
	ck_assert_int_eq(rx((uint16_t)(2 - 32768), 2), L2TP_RD_DUPLICATE);
}
END_TEST

START_TEST(test_duplicate_acked_and_dropped)
{
	ck_assert_int_eq(rx(0, 0), L2TP_RD_DELIVER);
	ck_assert_int_eq(ntx, 0);		/* delayed, not immediate */
	ck_assert_int_eq(rx(0, 0), L2TP_RD_DUPLICATE);
	ck_assert_int_eq(ntx, 1);		/* the duplicate is acknowledged now */
	ck_assert(txlog[0].ack);
	ck_assert_uint_eq(txlog[0].nr, 1);
	ck_assert_uint_eq(rd.rcv_nxt, 1);
	ck_assert_uint_eq(rd.n_duplicates, 1);
	/* the pending delayed ACK was satisfied by that one */
	advance_to(at_ms(500));
	ck_assert_int_eq(ntx, 1);
}
END_TEST

START_TEST(test_out_of_order_held)
{
	static const uint8_t b1[] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0xaa };
	static const uint8_t b2[] = { 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 0xbb };
	struct l2tp_rd_buf *b;

	ck_assert_int_eq(l2tp_rd_input(&rd, 2, 0, true, b2, sizeof(b2)), L2TP_RD_HELD);
	ck_assert_int_eq(l2tp_rd_input(&rd, 1, 0, true, b1, sizeof(b1)), L2TP_RD_HELD);
	ck_assert_int_eq(l2tp_rd_input(&rd, 2, 0, true, b2, sizeof(b2)), L2TP_RD_DUPLICATE);
	ck_assert_int_eq(ntx, 1);		/* acknowledged (with the old Nr) */
	ck_assert_uint_eq(txlog[0].nr, 0);
	ntx = 0;
	ck_assert_uint_eq(rd.n_held, 2);
	ck_assert_ptr_null(l2tp_rd_next_held(&rd));	/* 0 still missing */
	ck_assert_uint_eq(rd.rcv_nxt, 0);
	ck_assert_int_eq(rx(0, 0), L2TP_RD_DELIVER);
	b = l2tp_rd_next_held(&rd);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(b->ns, 1);
	ck_assert_uint_eq(b->buf[12], 0xaa);
	free(b);
	b = l2tp_rd_next_held(&rd);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(b->ns, 2);
	ck_assert_uint_eq(b->buf[12], 0xbb);
	free(b);
	ck_assert_ptr_null(l2tp_rd_next_held(&rd));
	ck_assert_uint_eq(rd.rcv_nxt, 3);
	/* one delayed ACK covers all three */
	advance_to(at_ms(100));
	ck_assert_int_eq(ntx, 1);
	ck_assert_uint_eq(txlog[0].nr, 3);
	/* beyond our window (16): dropped, not held */
	ck_assert_int_eq(rx(3 + 16, 0), L2TP_RD_OUT_OF_WINDOW);
	ck_assert_int_eq(rx(3 + 15, 0), L2TP_RD_HELD);
}
END_TEST

/* The peer's Receive Window Size bounds what is in flight, whatever CWND says. */
START_TEST(test_window_limit)
{
	int i, max_inflight = 0;
	uint16_t nr;

	l2tp_rd_set_peer_window(&rd, 4);
	for (i = 0; i < 40; i++)
		send_one(L2TP_MSG_HELLO);
	ck_assert_int_eq(ntx, 1);		/* slow start: CWND 1 */
	while (rd.n_inflight > 0) {
		if (rd.n_inflight > max_inflight)
			max_inflight = rd.n_inflight;
		ck_assert_uint_le(rd.cwnd, 4);
		nr = rd.snd_nxt;		/* acknowledge everything sent */
		rx_ack(0, nr);
	}
	ck_assert_int_eq(max_inflight, 4);
	ck_assert_int_eq(nacked, 40);
	ck_assert_int_eq(ntx, 40);
	/* a window of 0 in the AVP means "absent": 4 */
	l2tp_rd_set_peer_window(&rd, 0);
	ck_assert_uint_eq(rd.peer_rwin, 4);
}
END_TEST

START_TEST(test_cwnd_growth_and_collapse)
{
	int i;

	l2tp_rd_set_peer_window(&rd, 16);
	ck_assert_uint_eq(rd.cwnd, 1);
	ck_assert_uint_eq(rd.ssthresh, 16);
	for (i = 0; i < 100; i++)
		send_one(L2TP_MSG_HELLO);
	/* slow start: +1 per ACK */
	for (i = 1; i <= 7; i++) {
		ck_assert_uint_eq(rd.cwnd, i);
		ck_assert_uint_eq(rd.n_inflight, i);
		rx_ack(0, (uint16_t)(rd.snd_una + 1));	/* one message per ACK */
	}
	ck_assert_uint_eq(rd.cwnd, 8);
	/* a retransmission: SSTHRESH = CWND/2, CWND = 1 */
	ntx = 0;
	advance_to(usl_time_add(fclock.now, usl_time_s(1)));
	ck_assert_int_eq(ntx, 1);
	ck_assert(txlog[0].retransmit);
	ck_assert_uint_eq(rd.cwnd, 1);
	ck_assert_uint_eq(rd.ssthresh, 4);
	/* slow start again up to SSTHRESH ... */
	rx_ack(0, (uint16_t)(rd.snd_una + 1));
	ck_assert_uint_eq(rd.cwnd, 2);
	rx_ack(0, (uint16_t)(rd.snd_una + 1));
	rx_ack(0, (uint16_t)(rd.snd_una + 1));
	ck_assert_uint_eq(rd.cwnd, 4);
	/* ... then congestion avoidance: +1 per CWND ACKs */
	for (i = 0; i < 3; i++)
		rx_ack(0, (uint16_t)(rd.snd_una + 1));
	ck_assert_uint_eq(rd.cwnd, 4);
	rx_ack(0, (uint16_t)(rd.snd_una + 1));
	ck_assert_uint_eq(rd.cwnd, 5);
	for (i = 0; i < 4; i++)
		rx_ack(0, (uint16_t)(rd.snd_una + 1));
	ck_assert_uint_eq(rd.cwnd, 5);
	rx_ack(0, (uint16_t)(rd.snd_una + 1));
	ck_assert_uint_eq(rd.cwnd, 6);
}
END_TEST

START_TEST(test_nr_invalid)
{
	send_one(L2TP_MSG_HELLO);		/* Ns 0 out, Snd.Nxt 1 */
	ck_assert_int_eq(rx(0, 2), L2TP_RD_NR_INVALID);
	ck_assert_uint_eq(rd.rcv_nxt, 0);	/* not taken */
	ck_assert_uint_eq(rd.n_inflight, 1);
	ck_assert_int_eq(rx_ack(0, 300), L2TP_RD_NR_INVALID);
	/* an old Nr (before Snd.Una) is merely stale */
	ck_assert_int_eq(rx(0, 65535), L2TP_RD_DELIVER);
	ck_assert_uint_eq(rd.n_inflight, 1);
	ck_assert_int_eq(rx(1, 1), L2TP_RD_DELIVER);
	ck_assert_uint_eq(rd.n_inflight, 0);
}
END_TEST

/* 1, 2, 4, 8, 8, 8 ... seconds between transmissions, then give up. */
START_TEST(test_retransmit_backoff_and_give_up)
{
	static const int64_t expect_s[] = { 0, 1, 3, 7, 15, 23, 31, 39, 47, 55, 63 };
	int i;

	send_one(L2TP_MSG_HELLO);
	advance_to(at_ms(70999));
	ck_assert_int_eq(gave_up, 0);
	ck_assert_int_eq(ntx, 11);
	for (i = 0; i < 11; i++) {
		ck_assert_int_eq(txlog[i].t.ns, at_ms(expect_s[i] * 1000).ns);
		ck_assert_uint_eq(txlog[i].ns, 0);
		ck_assert(txlog[i].retransmit == (i > 0));
	}
	advance_to(at_ms(71000));
	ck_assert_int_eq(gave_up, 1);
	ck_assert_uint_eq(gave_up_retries, 10);
	advance_to(at_ms(200000));
	ck_assert_int_eq(ntx, 11);
	ck_assert_int_eq(gave_up, 1);
	/* nothing more is accepted for sending */
	ck_assert_int_eq(l2tp_rd_send(&rd, (const uint8_t *)"xxxxxxxxxxxxxxxxxxxx", 20, 6, 0), -1);
}
END_TEST

/* A retransmission carries the current Nr, not the one of the first try. */
START_TEST(test_retransmit_updates_nr)
{
	send_one(L2TP_MSG_HELLO);
	ck_assert_uint_eq(txlog[0].nr, 0);
	rx(0, 0);
	rx(1, 0);
	advance_to(at_ms(1000));
	ck_assert(txlog[ntx - 1].retransmit);
	ck_assert_uint_eq(txlog[ntx - 1].nr, 2);
	ck_assert_uint_eq(txlog[ntx - 1].ns, 0);
}
END_TEST

/* A reply queued in time carries the ACK; otherwise a ZLB after ack_delay. */
START_TEST(test_delayed_zlb_vs_piggyback)
{
	ck_assert_int_eq(rx(0, 0), L2TP_RD_DELIVER);
	advance_to(at_ms(99));
	ck_assert_int_eq(ntx, 0);
	advance_to(at_ms(100));
	ck_assert_int_eq(ntx, 1);
	ck_assert(txlog[0].ack);
	ck_assert_uint_eq(txlog[0].nr, 1);
	ck_assert_uint_eq(txlog[0].ns, 0);	/* the ACK takes no Ns */

	ck_assert_int_eq(rx(1, 0), L2TP_RD_DELIVER);
	send_one(L2TP_MSG_HELLO);		/* the reply */
	ck_assert_int_eq(ntx, 2);
	ck_assert(!txlog[1].ack);
	ck_assert_uint_eq(txlog[1].nr, 2);
	ck_assert_uint_eq(txlog[1].ns, 0);	/* same Ns the ZLB carried */
	advance_to(at_ms(500));
	ck_assert_int_eq(ntx, 2);		/* no ZLB: piggybacked */
}
END_TEST

/* An ACK/ZLB from the peer acknowledges without taking an Ns slot. */
START_TEST(test_ack_not_sequenced)
{
	send_one(L2TP_MSG_HELLO);
	send_one(L2TP_MSG_HELLO);		/* waits: CWND 1 */
	ck_assert_int_eq(ntx, 1);
	ck_assert_int_eq(rx_ack(0, 1), L2TP_RD_ACK_ONLY);
	ck_assert_uint_eq(rd.rcv_nxt, 0);	/* the ACK's Ns was not consumed */
	ck_assert_int_eq(ntx, 2);		/* the window moved */
	ck_assert_int_eq(rx_ack(0, 2), L2TP_RD_ACK_ONLY);
	ck_assert_int_eq(rx(0, 2), L2TP_RD_DELIVER);	/* the peer's first real message */
	ck_assert_uint_eq(rd.rcv_nxt, 1);
	ck_assert_int_eq(nacked, 2);
	ck_assert(l2tp_rd_idle(&rd));
	ck_assert(!usl_timer_armed(&rd.rtx_timer));
}
END_TEST

/* ------------------------------------------------------------------ */
/* through two engines */

/*
 * The LNS acknowledges with ACK (20): the LAC accepts it, and the ACK
 * takes no Ns slot (the LNS's next message reuses its Ns).
 */
/*
 * A burst of 30 lost messages, window 1024: after one timeout the rest go
 * again oldest first as ACKs reopen the window (go-back-N in slow start),
 * so all 30 are delivered after 1 timeout and about log2(30) round trips,
 * not 30 timeouts.  The peer queues nothing out of order (it dropped all).
 */
START_TEST(test_burst_loss_go_back_n)
{
	int i, timeouts = 0, rtts = 0;
	uint16_t peer_rcv = 0;

	l2tp_rd_set_peer_window(&rd, 1024);
	rd.cwnd = 64;			/* the burst was sent with an open window */
	for (i = 0; i < 30; i++)
		send_one(L2TP_MSG_ICRQ);
	ck_assert_int_eq(ntx, 30);	/* all lost: the peer saw none */
	/* one RTO */
	advance_to(at_ms(1000));
	timeouts++;
	ck_assert_int_eq(rd.cwnd, 1);
	/* round trips: the peer acknowledges every copy it gets, in order */
	while (rd.n_inflight > 0 && rtts < 20) {
		int from = ntx;

		for (i = 0; i < from; i++)
			if (txlog[i].retransmit && txlog[i].ns == peer_rcv)
				peer_rcv++;
		rtts++;
		fclock.now = usl_time_add(fclock.now, usl_time_ms(10));
		rx_ack(0, peer_rcv);
		ck_assert_int_lt(usl_time_cmp(fclock.now, at_ms(1900)), 0);	/* no 2nd RTO */
	}
	ck_assert_uint_eq(rd.n_inflight, 0);
	ck_assert_int_eq(nacked, 30);
	ck_assert_int_eq(timeouts, 1);
	ck_assert_int_le(rtts, 6);	/* log2(30) + 1 */
	ck_assert_int_eq(gave_up, 0);
}
END_TEST

/* A partial ACK sends the next unacknowledged message at once, not after an RTO. */
START_TEST(test_partial_ack_resends_next)
{
	int i, n;

	l2tp_rd_set_peer_window(&rd, 16);
	rd.cwnd = 8;
	for (i = 0; i < 4; i++)
		send_one(L2TP_MSG_ICRQ);	/* Ns 0..3, all lost */
	advance_to(at_ms(1000));		/* timeout: Ns 0 again */
	ck_assert_int_eq(ntx, 5);
	ck_assert(txlog[4].retransmit && txlog[4].ns == 0);
	n = ntx;
	rx_ack(0, 1);				/* Ns 0 acknowledged, 1..3 not: partial */
	ck_assert_int_gt(ntx, n);
	ck_assert(txlog[n].retransmit && txlog[n].ns == 1);
	ck_assert(usl_time_cmp(txlog[n].t, at_ms(1000)) == 0);	/* at once */
	/* a copy in flight is not sent twice by the next partial ACK */
	n = ntx;
	rx_ack(0, 2);
	for (i = n; i < ntx; i++)
		ck_assert_uint_ne(txlog[i].ns, 1);
	rx_ack(0, 4);
	ck_assert_uint_eq(rd.n_inflight, 0);
	ck_assert(!rd.in_recovery);
}
END_TEST

/* The ACK rule: 1 in-order message waits for the delay, 2 are acknowledged at once. */
START_TEST(test_ack_rule)
{
	rx(0, 0);
	l2tp_rd_ack_flush(&rd);
	ck_assert_int_eq(ntx, 0);		/* one: delayed */
	rx(1, 0);
	l2tp_rd_ack_flush(&rd);
	ck_assert_int_eq(ntx, 1);		/* two: now */
	ck_assert(txlog[0].ack && txlog[0].nr == 2);
	ck_assert(usl_time_cmp(txlog[0].t, at_ms(0)) == 0);
	/* a gap is acknowledged at once too (the peer learns where we are) */
	ck_assert_int_eq(rx(3, 0), L2TP_RD_HELD);
	l2tp_rd_ack_flush(&rd);
	ck_assert_int_eq(ntx, 2);
	ck_assert(txlog[1].ack && txlog[1].nr == 2);
	ck_assert_int_eq(rx(2, 0), L2TP_RD_DELIVER);
	free(l2tp_rd_next_held(&rd));
	l2tp_rd_ack_flush(&rd);
	ck_assert_int_eq(ntx, 3);
	ck_assert(txlog[2].ack && txlog[2].nr == 4);
	/* one more in order: delayed again, and a reply in time carries Nr */
	rx(4, 0);
	l2tp_rd_ack_flush(&rd);
	ck_assert_int_eq(ntx, 3);
	send_one(L2TP_MSG_ICRP);
	ck_assert_int_eq(ntx, 4);
	ck_assert(!txlog[3].ack && txlog[3].nr == 5);
	advance_to(at_ms(500));
	ck_assert_int_eq(ntx, 4);		/* no ZLB after the piggyback */
	rx_ack(5, 1);
}
END_TEST

/*
 * An in-order message with others held beyond it fills (part of) a gap: the
 * peer is recovering and waits for this Nr, so it goes at once, whatever
 * our window (TCP's rule, RFC 5681 4.2).
 */
START_TEST(test_ack_gap_fill_at_once)
{
	ck_assert_int_eq(rx(2, 0), L2TP_RD_HELD);	/* 0 and 1 lost */
	l2tp_rd_ack_flush(&rd);
	ck_assert_int_eq(ntx, 1);
	ck_assert(txlog[0].ack && txlog[0].nr == 0);
	advance_to(at_ms(10));
	ck_assert_int_eq(rx(0, 0), L2TP_RD_DELIVER);	/* part of the gap */
	ck_assert_ptr_null(l2tp_rd_next_held(&rd));
	l2tp_rd_ack_flush(&rd);
	ck_assert_int_eq(ntx, 2);
	ck_assert(txlog[1].ack && txlog[1].nr == 1);
	ck_assert(usl_time_cmp(txlog[1].t, at_ms(10)) == 0);	/* not at 110 ms */
	advance_to(at_ms(20));
	ck_assert_int_eq(rx(1, 0), L2TP_RD_DELIVER);	/* the rest: 1 and 2 */
	free(l2tp_rd_next_held(&rd));
	l2tp_rd_ack_flush(&rd);
	ck_assert_int_eq(ntx, 3);
	ck_assert(txlog[2].ack && txlog[2].nr == 3);
	ck_assert(usl_time_cmp(txlog[2].t, at_ms(20)) == 0);
	advance_to(at_ms(1000));
	ck_assert_int_eq(ntx, 3);
}
END_TEST

/*
 * An acknowledgement that opens the window releases a queued message; that
 * message carries Nr for the one that brought the acknowledgement, so no
 * ZLB follows it (nor one for a duplicate that a release answered).
 */
START_TEST(test_released_message_carries_the_ack)
{
	send_one(L2TP_MSG_ICRQ);
	send_one(L2TP_MSG_ICRQ);		/* waits: CWND 1 */
	ck_assert_int_eq(ntx, 1);
	ck_assert_int_eq(rx(0, 1), L2TP_RD_DELIVER);	/* acknowledges Ns 0 */
	l2tp_rd_ack_flush(&rd);
	ck_assert_int_eq(ntx, 2);
	ck_assert(!txlog[1].ack && txlog[1].ns == 1 && txlog[1].nr == 1);
	advance_to(at_ms(500));
	ck_assert_int_eq(ntx, 2);		/* no ZLB: Nr 1 already went */
	/* a duplicate whose Nr releases a message: that message is the ACK */
	send_one(L2TP_MSG_ICRQ);
	send_one(L2TP_MSG_ICRQ);
	send_one(L2TP_MSG_ICRQ);		/* Ns 2 out (CWND 2), Ns 3, 4 wait */
	ck_assert_int_eq(ntx, 3);
	ck_assert_int_eq(rx(0, 3), L2TP_RD_DUPLICATE);
	ck_assert_int_eq(ntx, 5);
	ck_assert(!txlog[3].ack && txlog[3].ns == 3 && txlog[3].nr == 1);
	ck_assert(!txlog[4].ack && txlog[4].ns == 4 && txlog[4].nr == 1);
	advance_to(at_ms(900));
	ck_assert_int_eq(ntx, 5);
	rx_ack(1, 5);
}
END_TEST

/* How many times Ns went on the wire. */
static int copies(uint16_t ns)
{
	int i, n = 0;

	for (i = 0; i < ntx; i++)
		if (!txlog[i].ack && txlog[i].ns == ns)
			n++;
	return n;
}

/*
 * Retries are per message, whatever sends it again: a message resent by a
 * partial ACK has used a retry, goes at most 1 + max_retries times, and is
 * given up on one RTO after its last retry.
 */
START_TEST(test_retries_per_message)
{
	uint8_t b[20] = { 0 };
	int i;

	usl_put_be16(b, L2TP_HDR_T | L2TP_HDR_L | L2TP_HDR_S | 3);
	usl_put_be16(b + 2, sizeof(b));
	l2tp_rd_set_peer_window(&rd, 16);
	rd.cwnd = 2;
	for (i = 0; i < 2; i++)		/* Ns 0, 1: both lost, 2 retries each */
		ck_assert_int_eq(l2tp_rd_send(&rd, b, sizeof(b), L2TP_MSG_ICRQ, 2), 0);
	advance_to(at_ms(1000));		/* RTO: Ns 0 again */
	ck_assert_int_eq(copies(0), 2);
	advance_to(at_ms(1010));
	rx_ack(0, 1);				/* partial ACK: Ns 1 again at once (retry 1) */
	ck_assert_int_eq(copies(1), 2);
	advance_to(at_ms(2010));		/* RTO (reset by the ACK): retry 2 */
	ck_assert_int_eq(copies(1), 3);
	ck_assert_int_eq(gave_up, 0);
	advance_to(at_ms(4009));
	ck_assert_int_eq(gave_up, 0);
	advance_to(at_ms(4010));		/* retries used up: given up, not sent again */
	ck_assert_int_eq(gave_up, 1);
	ck_assert_uint_eq(gave_up_retries, 2);
	ck_assert_int_eq(copies(1), 3);
	advance_to(at_ms(100000));
	ck_assert_int_eq(copies(1), 3);
	ck_assert_int_eq(gave_up, 1);
}
END_TEST

/*
 * Go-back-N stops at a message whose retries are used up (and sends nothing
 * new behind it); once that one is the oldest, the timer gives up.
 */
START_TEST(test_recovery_stops_at_used_up_retries)
{
	struct l2tp_rd_buf *b;
	int i;

	l2tp_rd_set_peer_window(&rd, 16);
	rd.cwnd = 4;
	for (i = 0; i < 4; i++)
		send_one(L2TP_MSG_ICRQ);	/* Ns 0..3, all lost */
	b = usl_list_entry(rd.inflight.next->next->next, struct l2tp_rd_buf, link);
	ck_assert_uint_eq(b->ns, 2);
	b->retries = b->max_retries;		/* as if sent again 10 times already */
	send_one(L2TP_MSG_ICRQ);		/* Ns 4 waits for the window */
	advance_to(at_ms(1000));		/* RTO: Ns 0 again */
	ck_assert_int_eq(copies(0), 2);
	rx_ack(0, 1);				/* partial: Ns 1 goes, Ns 2 may not */
	ck_assert_int_eq(copies(1), 2);
	ck_assert_int_eq(copies(2), 1);
	ck_assert_int_eq(copies(3), 1);
	ck_assert_int_eq(copies(4), 0);
	advance_to(at_ms(1010));
	rx_ack(0, 2);
	ck_assert_int_eq(copies(2), 1);
	ck_assert_int_eq(copies(3), 1);
	ck_assert_int_eq(copies(4), 0);
	ck_assert_int_eq(gave_up, 0);
	advance_to(at_ms(2010));		/* Ns 2 is the oldest: given up */
	ck_assert_int_eq(gave_up, 1);
	ck_assert_uint_eq(gave_up_retries, 10);
	ck_assert_int_eq(copies(2), 1);
}
END_TEST

/*
 * A probe's verdict cuts the budget: a message at its cap gives up at the
 * next timeout, one already past it at once (from the timer), and a cap is
 * never raised.
 */
START_TEST(test_limit_retries)
{
	uint8_t b[20] = { 0 };

	send_one(L2TP_MSG_HELLO);		/* Ns 0: its own budget, 10 */
	advance_to(at_ms(1000));		/* retry 1 */
	l2tp_rd_limit_retries(&rd, 1);
	ck_assert_int_eq(gave_up, 0);
	advance_to(at_ms(2999));
	ck_assert_int_eq(gave_up, 0);
	advance_to(at_ms(3000));		/* the next timeout: given up */
	ck_assert_int_eq(gave_up, 1);
	ck_assert_uint_eq(gave_up_retries, 1);
	ck_assert_int_eq(copies(0), 2);

	teardown();
	setup();
	send_one(L2TP_MSG_HELLO);
	advance_to(at_ms(3000));		/* retries 1 and 2 */
	ck_assert_int_eq(copies(0), 3);
	l2tp_rd_limit_retries(&rd, 1);		/* past the cap */
	ck_assert_int_eq(gave_up, 0);		/* not from inside the call */
	advance_to(at_ms(3000));
	ck_assert_int_eq(gave_up, 1);
	ck_assert_int_eq(copies(0), 3);

	teardown();
	setup();
	usl_put_be16(b, L2TP_HDR_T | L2TP_HDR_L | L2TP_HDR_S | 3);
	usl_put_be16(b + 2, sizeof(b));
	ck_assert_int_eq(l2tp_rd_send(&rd, b, sizeof(b), L2TP_MSG_ICRQ, 2), 0);
	l2tp_rd_limit_retries(&rd, 5);		/* never raised: it keeps 2 */
	advance_to(at_ms(100000));
	ck_assert_int_eq(gave_up, 1);
	ck_assert_uint_eq(gave_up_retries, 2);
	ck_assert_int_eq(copies(0), 3);
}
END_TEST

/* The out-of-order ring: window 1024, wrap-around of Ns, duplicates of held ones. */
START_TEST(test_ring_window_1024)
{
	struct l2tp_rd_cfg cfg = {
		.rx_window = 1024, .rtx_initial = usl_time_s(1), .rtx_cap = usl_time_s(8),
		.max_retries = 10, .ack_delay = usl_time_ms(100),
	};
	struct l2tp_rd_buf *b;
	uint16_t base = 65000, ns;
	int i;

	l2tp_rd_destroy(&rd);
	l2tp_rd_init(&rd, &cfg, &rec_ops, &ts);
	rd.rcv_nxt = base;
	ck_assert_ptr_null(rd.held);		/* nothing allocated while in order */
	/* everything but the first, backwards, across the wrap */
	for (i = 1000; i >= 1; i--)
		ck_assert_int_eq(rx((uint16_t)(base + i), 0), L2TP_RD_HELD);
	ck_assert_uint_eq(rd.n_held, 1000);
	ck_assert_int_eq(rx((uint16_t)(base + 700), 0), L2TP_RD_DUPLICATE);
	ck_assert_int_eq(rx((uint16_t)(base + 1024), 0), L2TP_RD_OUT_OF_WINDOW);
	ck_assert_int_eq(rx(base, 0), L2TP_RD_DELIVER);
	for (i = 1; i <= 1000; i++) {
		b = l2tp_rd_next_held(&rd);
		ck_assert_ptr_nonnull(b);
		ns = (uint16_t)(base + i);
		ck_assert_uint_eq(b->ns, ns);
		free(b);
	}
	ck_assert_ptr_null(l2tp_rd_next_held(&rd));
	ck_assert_uint_eq(rd.rcv_nxt, (uint16_t)(base + 1001));
	ck_assert_ptr_null(rd.held);		/* freed once empty */
}
END_TEST

static void reinit_window(uint16_t w)
{
	struct l2tp_rd_cfg cfg = {
		.rx_window = w, .rtx_initial = usl_time_s(1), .rtx_cap = usl_time_s(8),
		.max_retries = 10, .ack_delay = usl_time_ms(100),
	};

	l2tp_rd_destroy(&rd);
	l2tp_rd_init(&rd, &cfg, &rec_ops, &ts);
}

/*
 * A window that does not divide 65,536 (1,000), the held range across the
 * Ns wrap, and Nr moving on while messages stay held: every Ns keeps a slot
 * of its own, so nothing is taken for a duplicate and all come out in order.
 */
START_TEST(test_ring_any_window_across_wrap)
{
	struct l2tp_rd_buf *b;
	uint16_t ns = 65100;
	int i, round;

	reinit_window(1000);
	rd.rcv_nxt = ns;
	for (round = 0; round < 3; round++) {
		/* ns lost; the 999 after it arrive */
		for (i = 1; i < 1000; i++)
			ck_assert_int_eq(rx((uint16_t)(ns + i), 0), L2TP_RD_HELD);
		ck_assert_uint_eq(rd.n_held, 999);
		ck_assert_int_eq(rx((uint16_t)(ns + 1000), 0), L2TP_RD_OUT_OF_WINDOW);
		for (i = 1; i < 1000; i++, ntx = 0)	/* each acknowledged at once */
			ck_assert_int_eq(rx((uint16_t)(ns + i), 0), L2TP_RD_DUPLICATE);
		ck_assert_int_eq(rx(ns, 0), L2TP_RD_DELIVER);
		/* half of them now; then ns + 1000 may come, beyond the rest */
		for (i = 1; i < 500; i++) {
			b = l2tp_rd_next_held(&rd);
			ck_assert_ptr_nonnull(b);
			ck_assert_uint_eq(b->ns, (uint16_t)(ns + i));
			free(b);
		}
		ck_assert_int_eq(rx((uint16_t)(ns + 1000), 0), L2TP_RD_HELD);
		for (i = 500; i <= 1000; i++) {
			b = l2tp_rd_next_held(&rd);
			ck_assert_ptr_nonnull(b);
			ck_assert_uint_eq(b->ns, (uint16_t)(ns + i));
			free(b);
		}
		ck_assert_ptr_null(l2tp_rd_next_held(&rd));
		ns = (uint16_t)(ns + 1001);
		ck_assert_uint_eq(rd.rcv_nxt, ns);
	}
}
END_TEST

/*
 * A copy of the held message that is next in order, arriving before the
 * owner took it, is a duplicate: Nr does not pass the held one.
 */
START_TEST(test_ring_copy_of_next_held)
{
	struct l2tp_rd_buf *b;

	ck_assert_int_eq(rx(1, 0), L2TP_RD_HELD);
	ck_assert_int_eq(rx(0, 0), L2TP_RD_DELIVER);
	ck_assert_int_eq(rx(1, 0), L2TP_RD_DUPLICATE);	/* the peer sent 1 again */
	ck_assert_uint_eq(rd.rcv_nxt, 1);
	b = l2tp_rd_next_held(&rd);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(b->ns, 1);
	free(b);
	ck_assert_uint_eq(rd.rcv_nxt, 2);
	ck_assert_int_eq(rx(2, 0), L2TP_RD_DELIVER);
}
END_TEST

static double cpu_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/*
 * Holds the window's worth of messages after a lost one, in arrival order,
 * takes a retransmitted copy of each, then delivers them all; `rounds`
 * times.  Returns the CPU time it took.
 */
static double hold_rounds(uint16_t window, int rounds)
{
	struct l2tp_rd_buf *b;
	uint16_t ns;
	double t0;
	int i, bad = 0;

	reinit_window(window);
	t0 = cpu_seconds();
	/* no ck_assert in the loops: each one costs a write to check's pipe */
	while (rounds-- > 0) {
		ns = rd.rcv_nxt;
		for (i = 1; i < window; i++)
			bad += rx((uint16_t)(ns + i), 0) != L2TP_RD_HELD;
		for (i = 1; i < window; i++, ntx = 0)	/* each acknowledged at once */
			bad += rx((uint16_t)(ns + i), 0) != L2TP_RD_DUPLICATE;
		bad += rx(ns, 0) != L2TP_RD_DELIVER;
		for (i = 1; i < window; i++) {
			b = l2tp_rd_next_held(&rd);
			bad += b == NULL || b->ns != (uint16_t)(ns + i);
			free(b);
		}
		bad += rd.held != NULL;
	}
	t0 = cpu_seconds() - t0;
	ck_assert_int_eq(bad, 0);
	return t0;
}

/*
 * O(1) per held message: the same number of messages held, duplicated and
 * delivered costs about the same with a window of 32,768 (the largest
 * useful) as with 1,024.  A list walked per message costs 32 times more
 * (~10^9 steps: seconds).  A ratio, not a time, so valgrind does not matter.
 */
START_TEST(test_ring_constant_time)
{
	double small, big;

	small = hold_rounds(1024, 32);
	big = hold_rounds(32768, 1);
	fprintf(stderr, "ring: window 1024 x 32: %.4f s, window 32768: %.4f s\n", small, big);
	ck_assert_double_lt(big, 4 * small);
}
END_TEST

START_TEST(test_explicit_ack_on_the_wire)
{
	struct harness *h = h_new(1);
	const struct h_wire *ack, *hello;
	struct l2tp_msg m;
	int i;

	h->end[1].cfg.explicit_ack = true;
	h->end[1].cfg.hello_interval = usl_time_s(20);
	h_connect(h, 0);
	ck_assert(h_run_until(h, h_cond_both_established, NULL, usl_time_s(5)));
	h_run_for(h, usl_time_s(1));
	ack = h_find(h, 1, L2TP_MSG_ACK, 0);
	ck_assert_ptr_nonnull(ack);		/* for the SCCCN */
	h_decode(ack, &m);
	ck_assert_uint_eq(m.type, L2TP_MSG_ACK);
	ck_assert_uint_eq(m.nr, 2);
	ck_assert_uint_eq(m.ns, 1);		/* SCCRP was 0: the next Ns */
	ck_assert_int_eq(h_count(h, 1, L2TP_MSG_ZLB), 0);
	/* the LNS's HELLO after 20 s of silence has Ns 1: the ACK did not use it */
	h_run_for(h, usl_time_s(21));
	hello = h_find(h, 1, L2TP_MSG_HELLO, 0);
	ck_assert_ptr_nonnull(hello);
	ck_assert_uint_eq(hello->ns, 1);
	ck_assert_int_eq(h_count(h, 0, L2TP_MSG_ACK), 0);	/* ZLB by default */
	ck_assert_int_gt(h_count(h, 0, L2TP_MSG_ZLB), 0);
	for (i = 0; i < 2; i++)
		ck_assert_int_eq(l2tp_cc_state(h_cc(h, i)), L2TP_CC_ESTABLISHED);
	{
		struct l2tp_cc_stats st;

		l2tp_cc_get_stats(h_cc(h, 0), &st);
		ck_assert_uint_gt(st.rx_msgs[L2TP_MSG_ACK], 0);
		ck_assert_uint_eq(st.drops[L2TP_DROP_DUPLICATE], 0);
	}
	h_free(h);
}
END_TEST

/* Lost ACKs: the peer retransmits, we answer the duplicate with an ACK. */
static bool drop_first_zlb(struct harness *h, const struct h_wire *w, unsigned nth, void *arg)
{
	int *left = arg;

	if (w->from == 1 && w->type == L2TP_MSG_ZLB && *left > 0) {
		(*left)--;
		return true;
	}
	return false;
}

START_TEST(test_duplicate_acked_on_the_wire)
{
	struct harness *h = h_new(2);
	int left = 1;
	struct l2tp_cc_stats st;
	const struct h_wire *w;

	h->drop = drop_first_zlb;
	h->drop_arg = &left;
	h_connect(h, 0);
	ck_assert(h_run_until(h, h_cond_both_established, NULL, usl_time_s(5)));
	/* the LNS's ZLB for the SCCCN was lost: SCCCN comes again after 1 s */
	h_run_for(h, usl_time_s(2));
	ck_assert_int_eq(h_count(h, 0, L2TP_MSG_SCCCN), 2);
	l2tp_cc_get_stats(h_cc(h, 1), &st);
	ck_assert_uint_eq(st.drops[L2TP_DROP_DUPLICATE], 1);
	ck_assert_int_eq(h_count(h, 1, L2TP_MSG_ZLB), 2);
	w = h_find(h, 1, L2TP_MSG_ZLB, 1);
	ck_assert_uint_eq(w->nr, 2);
	/* answered at once, not after the ACK delay */
	ck_assert_int_eq(usl_time_sub(w->t, h_find(h, 0, L2TP_MSG_SCCCN, 1)->t).ns,
			 h->latency.ns);
	l2tp_cc_get_stats(h_cc(h, 0), &st);
	ck_assert_uint_eq(st.in_flight, 0);
	h_free(h);
}
END_TEST

static Suite *rd_suite(void)
{
	Suite *s = suite_create("rd");
	TCase *tc = tcase_create("unit");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_wraparound);
	tcase_add_test(tc, test_duplicate_acked_and_dropped);
	tcase_add_test(tc, test_out_of_order_held);
	tcase_add_test(tc, test_window_limit);
	tcase_add_test(tc, test_cwnd_growth_and_collapse);
	tcase_add_test(tc, test_nr_invalid);
	tcase_add_test(tc, test_retransmit_backoff_and_give_up);
	tcase_add_test(tc, test_retransmit_updates_nr);
	tcase_add_test(tc, test_delayed_zlb_vs_piggyback);
	tcase_add_test(tc, test_ack_not_sequenced);
	tcase_add_test(tc, test_burst_loss_go_back_n);
	tcase_add_test(tc, test_partial_ack_resends_next);
	tcase_add_test(tc, test_ack_rule);
	tcase_add_test(tc, test_ack_gap_fill_at_once);
	tcase_add_test(tc, test_released_message_carries_the_ack);
	tcase_add_test(tc, test_retries_per_message);
	tcase_add_test(tc, test_recovery_stops_at_used_up_retries);
	tcase_add_test(tc, test_limit_retries);
	tcase_add_test(tc, test_ring_window_1024);
	tcase_add_test(tc, test_ring_any_window_across_wrap);
	tcase_add_test(tc, test_ring_copy_of_next_held);
	tcase_add_test(tc, test_ring_constant_time);
	suite_add_tcase(s, tc);

	tc = tcase_create("engines");
	tcase_add_test(tc, test_explicit_ack_on_the_wire);
	tcase_add_test(tc, test_duplicate_acked_on_the_wire);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(rd_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
