/*
 * tests/unit/check_cc.c - the control connection FSM (RFC 3931 3.3, 4.3,
 * 4.4, 5.4.3, 7.2) through two engines back to back.  Every case checks
 * both engines' state and what went on the wire.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "usl/buf.h"
#include "engine_harness.h"

#define LAC 0
#define LNS 1

static struct l2tp_cc_stats stats_of(struct l2tp_cc *cc)
{
	struct l2tp_cc_stats st;

	l2tp_cc_get_stats(cc, &st);
	return st;
}

/* The three-message handshake as it must look on the wire. */
static void check_handshake(struct harness *h)
{
	struct l2tp_cc *lac = h_cc(h, LAC), *lns = h_cc(h, LNS);
	struct l2tp_msg m;
	const struct h_wire *w;

	w = h_find(h, LAC, L2TP_MSG_SCCRQ, 0);
	ck_assert_ptr_nonnull(w);
	h_decode(w, &m);
	ck_assert_uint_eq(m.ccid, 0);
	ck_assert_uint_eq(m.ns, 0);
	ck_assert_uint_eq(m.nr, 0);
	ck_assert_uint_eq(m.assigned_ccid, l2tp_cc_local_ccid(lac));
	ck_assert_uint_eq(m.router_id, 0x0a000001);
	ck_assert(l2tp_msg_has(&m, L2TP_AVP_HOST_NAME));
	ck_assert(l2tp_msg_has(&m, L2TP_AVP_PW_CAP_LIST));
	ck_assert_uint_eq(m.recv_window, 16);

	w = h_find(h, LNS, L2TP_MSG_SCCRP, 0);
	ck_assert_ptr_nonnull(w);
	h_decode(w, &m);
	ck_assert_uint_eq(m.ccid, l2tp_cc_local_ccid(lac));
	ck_assert_uint_eq(m.ns, 0);
	ck_assert_uint_eq(m.nr, 1);
	ck_assert_uint_eq(m.assigned_ccid, l2tp_cc_local_ccid(lns));
	ck_assert(!l2tp_msg_has(&m, L2TP_AVP_TIE_BREAKER));

	w = h_find(h, LAC, L2TP_MSG_SCCCN, 0);
	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(w->ccid, l2tp_cc_local_ccid(lns));
	ck_assert_uint_eq(w->ns, 1);
	ck_assert_uint_eq(w->nr, 1);

	ck_assert_uint_eq(l2tp_cc_peer_ccid(lac), l2tp_cc_local_ccid(lns));
	ck_assert_uint_eq(l2tp_cc_peer_ccid(lns), l2tp_cc_local_ccid(lac));
	ck_assert_str_eq(l2tp_cc_peer_host_name(lac), "lns");
	ck_assert_str_eq(l2tp_cc_peer_host_name(lns), "lac");
	ck_assert_uint_eq(l2tp_cc_peer_router_id(lac), 0x0a000002);
	ck_assert_uint_eq(l2tp_cc_peer_router_id(lns), 0x0a000001);
	ck_assert(l2tp_cc_is_initiator(lac));
	ck_assert(!l2tp_cc_is_initiator(lns));
	ck_assert(l2tp_cc_peer_has_pw(lac, L2TP_PW_ETH));
	ck_assert(!l2tp_cc_peer_has_pw(lac, L2TP_PW_PPP));
	ck_assert_int_eq(h->end[LAC].dp_tunnel_live, 1);
	ck_assert_int_eq(h->end[LNS].dp_tunnel_live, 1);
}

/* ------------------------------------------------------------------ */
/* bring-up, with loss */

static const struct { unsigned loss; uint64_t seed; } bringups[] = {
	{ 0, 1 }, { 0, 2 },
	{ 10, 11 }, { 10, 12 }, { 10, 13 }, { 10, 14 },
	{ 30, 31 }, { 30, 32 }, { 30, 33 }, { 30, 34 }, { 30, 35 }, { 30, 36 },
};

START_TEST(test_bringup_loss)
{
	struct harness *h = h_new(bringups[_i].seed);
	struct l2tp_cc_stats st;
	bool ok;
	int e;

	h->loss_pct = bringups[_i].loss;
	h->dup_pct = bringups[_i].loss / 3;
	h->reorder_pct = bringups[_i].loss;
	h->end[LAC].cfg.hello_interval = USL_TIME_NEVER;
	h->end[LNS].cfg.hello_interval = USL_TIME_NEVER;
	h_connect(h, LAC);
	ok = h_run_until(h, h_cond_both_established, NULL, usl_time_s(60));
	if (!ok)
		h_dump(h);
	ck_assert_msg(ok, "not established with %u%% loss, seed %llu", bringups[_i].loss,
		      (unsigned long long)bringups[_i].seed);
	if (bringups[_i].loss == 0) {
		/* lock-step, RFC 3931 B.1 */
		ck_assert_int_eq(h->n_wire, 3);
		check_handshake(h);
	}
	/* the final ACK gets through eventually; nothing is left in flight */
	h->loss_pct = h->dup_pct = h->reorder_pct = 0;
	h_run_for(h, usl_time_s(20));
	for (e = 0; e < 2; e++) {
		st = stats_of(h_cc(h, e));
		ck_assert_uint_eq(st.in_flight, 0);
		ck_assert_uint_eq(st.queued, 0);
		ck_assert_int_eq(l2tp_cc_state(h_cc(h, e)), L2TP_CC_ESTABLISHED);
		ck_assert_int_eq(h_count_cc_events(h, e, L2TP_CC_ESTABLISHED), 1);
		ck_assert_int_eq(h->end[e].n_cc, 1);
	}
	ck_assert_int_eq(h_count(h, -1, L2TP_MSG_STOPCCN), 0);
	h_free(h);
}
END_TEST

/* ------------------------------------------------------------------ */
/* crossed SCCRQs (5.4.3) */

static const struct {
	bool tb0, tb1;
	uint64_t v0, v1;
	int winner;		/* whose SCCRQ survives: 0, 1, -1 both restart, 2 both live */
} ties[] = {
	{ true, true, 5, 9, 0 },
	{ true, true, 9, 5, 1 },
	{ true, false, 7, 0, 0 },
	{ false, true, 0, 7, 1 },
	{ true, true, 6, 6, -1 },
	{ false, false, 0, 0, 2 },
};

static int count_state(struct harness *h, int e, enum l2tp_cc_state s)
{
	int i, n = 0;

	for (i = 0; i < h->end[e].n_cc; i++)
		n += l2tp_cc_state(h->end[e].cc[i]) == s;
	return n;
}

START_TEST(test_crossed_sccrq)
{
	struct harness *h = h_new(7);
	struct l2tp_msg m;
	const struct h_wire *w;
	int e, w_end, l_end;

	h->end[0].cfg.send_tie_breaker = ties[_i].tb0;
	h->end[0].cfg.tie_breaker = ties[_i].v0;
	h->end[1].cfg.send_tie_breaker = ties[_i].tb1;
	h->end[1].cfg.tie_breaker = ties[_i].v1;
	h_connect(h, 0);
	h_connect(h, 1);
	h_run_for(h, usl_time_s(40));
	switch (ties[_i].winner) {
	case 0:
	case 1:
		w_end = ties[_i].winner;
		l_end = !w_end;
		/* the winner's own cc is the one up; the loser answers it from a new one */
		ck_assert_int_eq(l2tp_cc_state(h->end[w_end].cc[0]), L2TP_CC_ESTABLISHED);
		ck_assert(l2tp_cc_is_initiator(h->end[w_end].cc[0]));
		ck_assert_int_eq(count_state(h, w_end, L2TP_CC_ESTABLISHED), 1);
		ck_assert_int_eq(count_state(h, l_end, L2TP_CC_ESTABLISHED), 1);
		ck_assert_int_eq(l2tp_cc_state(h->end[l_end].cc[0]), L2TP_CC_CLOSED);
		ck_assert_uint_eq(h_last_cc_event(h, l_end, L2TP_CC_CLOSED)->result,
				  L2TP_STOPCCN_ALREADY_EXISTS);
		/* the winner rejected the losing SCCRQ with StopCCN */
		w = h_find(h, w_end, L2TP_MSG_STOPCCN, 0);
		ck_assert_ptr_nonnull(w);
		h_decode(w, &m);
		ck_assert_uint_eq(m.result.result, L2TP_STOPCCN_ALREADY_EXISTS);
		ck_assert_uint_eq(m.ccid, l2tp_cc_local_ccid(h->end[l_end].cc[0]));
		ck_assert_int_eq(h_count(h, l_end, L2TP_MSG_SCCRP), 1);
		ck_assert_int_eq(h_count(h, w_end, L2TP_MSG_SCCRP), 0);
		break;
	case -1:
		/* equal values: both discard; the daemon restarts with new values */
		for (e = 0; e < 2; e++) {
			ck_assert_int_eq(h->end[e].n_cc, 1);
			ck_assert_int_eq(l2tp_cc_state(h->end[e].cc[0]), L2TP_CC_CLOSED);
		}
		ck_assert_int_eq(h_count(h, -1, L2TP_MSG_SCCRP), 0);
		break;
	default:
		/* no tie breaker at all: two connections */
		for (e = 0; e < 2; e++)
			ck_assert_int_eq(count_state(h, e, L2TP_CC_ESTABLISHED), 2);
		break;
	}
	h_free(h);
}
END_TEST

/* ------------------------------------------------------------------ */
/* keepalive */

static bool drop_from_lns(struct harness *h, const struct h_wire *w, unsigned nth, void *arg)
{
	return w->from == LNS && *(bool *)arg;
}

/* Silence for hello_interval -> HELLO; unanswered -> down after the backoff. */
START_TEST(test_hello_and_dead_peer)
{
	struct harness *h = h_new(3);
	bool cut = false;
	const struct h_wire *w, *hello;
	const struct h_event *ev;
	usl_time last_in = { 0 };
	int i;

	h->drop = drop_from_lns;
	h->drop_arg = &cut;
	h->end[LNS].cfg.hello_interval = usl_time_s(600);
	h_connect(h, LAC);
	ck_assert(h_run_until(h, h_cond_both_established, NULL, usl_time_s(5)));
	/* a HELLO after 60 s of silence, acknowledged: the connection stays */
	h_run_for(h, usl_time_s(61));
	hello = h_find(h, LAC, L2TP_MSG_HELLO, 0);
	ck_assert_ptr_nonnull(hello);
	ck_assert_int_eq(l2tp_cc_state(h_cc(h, LAC)), L2TP_CC_ESTABLISHED);
	ck_assert_int_eq(h_count(h, LNS, L2TP_MSG_ZLB), 2);	/* SCCCN and HELLO acked */
	/* the peer goes silent */
	cut = true;
	for (i = 0; i < h->n_wire; i++)
		if (h->wire[i].from == LNS)
			last_in = usl_time_add(h->wire[i].t, h->latency);
	ck_assert(h_run_until(h, h_cond_both_closed, NULL, usl_time_s(400)) ||
		  l2tp_cc_state(h_cc(h, LAC)) == L2TP_CC_CLOSED);
	hello = h_find(h, LAC, L2TP_MSG_HELLO, 1);
	ck_assert_ptr_nonnull(hello);
	ck_assert_int_eq(hello->t.ns, usl_time_add(last_in, usl_time_s(60)).ns);
	/* 10 retransmissions of it: +1 +3 +7 +15 +23 ... +63 */
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_HELLO), 12);
	w = h_find(h, LAC, L2TP_MSG_HELLO, 11);
	ck_assert_int_eq(w->t.ns, usl_time_add(hello->t, usl_time_s(63)).ns);
	ev = h_last_cc_event(h, LAC, L2TP_CC_CLOSED);
	ck_assert_ptr_nonnull(ev);
	ck_assert_int_eq(ev->t.ns, usl_time_add(hello->t, usl_time_s(71)).ns);
	ck_assert_uint_eq(ev->result, L2TP_STOPCCN_FSM_ERROR);
	ck_assert_ptr_nonnull(strstr(ev->text, "peer not responding after 10 retransmissions"));
	ck_assert_int_eq(h->end[LAC].dp_tunnel_live, 0);
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_STOPCCN), 0);	/* nobody to tell */
	h_free(h);
}
END_TEST

/*
 * RFC 4951: a failover-capable peer that goes silent is kept, with the data
 * plane, for the Recovery Time it advertised once the retransmissions ran
 * out, then cleared without a StopCCN; the same peer without the
 * capability is cleared when they run out (test_hello_and_dead_peer).
 */
START_TEST(test_failover_peer_silent)
{
	struct harness *h = h_new(3);
	bool cut = false;
	const struct h_wire *hello;
	const struct h_event *ev;
	uint32_t rt;

	h->drop = drop_from_lns;
	h->drop_arg = &cut;
	for (int e = 0; e < 2; e++) {
		h->end[e].cfg.failover = true;
		h->end[e].cfg.recovery_time_ms = e == LNS ? 20000 : 5000;
	}
	h->end[LNS].cfg.hello_interval = usl_time_s(600);
	h_connect(h, LAC);
	ck_assert(h_run_until(h, h_cond_both_established, NULL, usl_time_s(5)));
	ck_assert(l2tp_cc_failover_ok(h_cc(h, LAC)) && l2tp_cc_failover_ok(h_cc(h, LNS)));
	ck_assert_uint_eq(l2tp_cc_peer_failover(h_cc(h, LAC), &rt), L2TP_FAILOVER_C | L2TP_FAILOVER_D);
	ck_assert_uint_eq(rt, 20000);
	h_run_for(h, usl_time_s(1));	/* the SCCCN acknowledged */
	cut = true;
	h_run_for(h, usl_time_s(61 + 71));
	hello = h_find(h, LAC, L2TP_MSG_HELLO, 0);
	ck_assert_ptr_nonnull(hello);
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_HELLO), 11);	/* the HELLO and 10 retransmissions */
	/* kept: established, awaiting the peer's recovery, in the data plane */
	ck_assert_int_eq(l2tp_cc_state(h_cc(h, LAC)), L2TP_CC_ESTABLISHED);
	ck_assert_int_eq(l2tp_cc_failover_state(h_cc(h, LAC)), L2TP_FO_AWAITING_PEER);
	ck_assert_int_eq(h->end[LAC].dp_tunnel_live, 1);
	ck_assert(h_run_until(h, h_cond_both_closed, NULL, usl_time_s(60)) ||
		  l2tp_cc_state(h_cc(h, LAC)) == L2TP_CC_CLOSED);
	ev = h_last_cc_event(h, LAC, L2TP_CC_CLOSED);
	ck_assert_ptr_nonnull(ev);
	/* the give-up at the HELLO + 71 s, then the peer's 20 s */
	ck_assert_int_eq(ev->t.ns, usl_time_add(hello->t, usl_time_s(71 + 20)).ns);
	ck_assert_ptr_nonnull(strstr(ev->text, "did not recover within 20000 ms"));
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_STOPCCN), 0);
	ck_assert_int_eq(h->end[LAC].dp_tunnel_live, 0);
	h_free(h);
}
END_TEST

/*
 * A probe of a connection already retransmitting (its HELLO unanswered)
 * counts as sent: the retransmissions are cut to the probe's budget at
 * once, instead of running their whole backoff (71 s) at a restarted peer.
 */
START_TEST(test_probe_while_retransmitting)
{
	struct harness *h = h_new(5);
	bool cut = false;
	const struct h_wire *hello;
	const struct h_event *ev;
	usl_time by = usl_time_s(-1), t_probe;
	int sent;

	h->drop = drop_from_lns;
	h->drop_arg = &cut;
	h->end[LNS].cfg.hello_interval = usl_time_s(600);
	h_connect(h, LAC);
	ck_assert(h_run_until(h, h_cond_both_established, NULL, usl_time_s(5)));
	h_run_for(h, usl_time_s(1));	/* the SCCCN acknowledged */
	cut = true;
	h_run_for(h, usl_time_s(60));
	hello = h_find(h, LAC, L2TP_MSG_HELLO, 0);
	ck_assert_ptr_nonnull(hello);
	/* retransmitted at +1, +3, +7: the probe finds it in flight */
	h_run_for(h, usl_time_sub(usl_time_add(hello->t, usl_time_s(8)), h_now(h)));
	sent = h_count(h, LAC, L2TP_MSG_HELLO);
	ck_assert_int_eq(sent, 4);
	ck_assert_int_eq(l2tp_cc_probe(h_cc(h, LAC), 1, &by), 1);
	ck_assert_int_eq(by.ns, 0);		/* past its cut already: given up on now */
	t_probe = h_now(h);
	ck_assert(h_run_until(h, h_cond_both_closed, NULL, usl_time_s(1)) ||
		  l2tp_cc_state(h_cc(h, LAC)) == L2TP_CC_CLOSED);
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_HELLO), sent);	/* no HELLO added */
	ev = h_last_cc_event(h, LAC, L2TP_CC_CLOSED);
	ck_assert_ptr_nonnull(ev);
	ck_assert_int_eq(ev->t.ns, t_probe.ns);
	ck_assert_ptr_nonnull(strstr(ev->text, "peer not responding"));
	h_free(h);
}
END_TEST

/* The cut leaves a fresh retransmission its own timeout and the one after. */
START_TEST(test_probe_while_in_flight)
{
	struct harness *h = h_new(6);
	bool cut = false;
	const struct h_wire *hello;
	const struct h_event *ev;
	usl_time by;

	h->drop = drop_from_lns;
	h->drop_arg = &cut;
	h->end[LNS].cfg.hello_interval = usl_time_s(600);
	h_connect(h, LAC);
	ck_assert(h_run_until(h, h_cond_both_established, NULL, usl_time_s(5)));
	h_run_for(h, usl_time_s(1));	/* the SCCCN acknowledged */
	cut = true;
	h_run_for(h, usl_time_s(60));
	hello = h_find(h, LAC, L2TP_MSG_HELLO, 0);
	ck_assert_ptr_nonnull(hello);
	/* 0.5 s after the first retransmission (+1 s; its timeout 2 s) */
	h_run_for(h, usl_time_sub(usl_time_add(hello->t, usl_time_ms(1500)), h_now(h)));
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_HELLO), 2);
	ck_assert_int_eq(l2tp_cc_probe(h_cc(h, LAC), 2, &by), 1);
	/* 1.5 s to the second retransmission, then its 4 s timeout */
	ck_assert_int_eq(by.ns, usl_time_ms(5500).ns);
	ck_assert(h_run_until(h, h_cond_both_closed, NULL, usl_time_s(30)) ||
		  l2tp_cc_state(h_cc(h, LAC)) == L2TP_CC_CLOSED);
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_HELLO), 3);
	ev = h_last_cc_event(h, LAC, L2TP_CC_CLOSED);
	ck_assert_ptr_nonnull(ev);
	ck_assert_int_eq(ev->t.ns, usl_time_add(hello->t, usl_time_s(7)).ns);
	h_free(h);
}
END_TEST

/* Connections to one peer must not HELLO in lock-step (4.4). */
START_TEST(test_hello_jitter)
{
	struct harness *h = h_new(4);
	usl_time t[2];
	int i;

	h->end[LAC].cfg.hello_jitter_pct = 25;
	h->end[LAC].cfg.seed = 0;	/* random per connection */
	h->end[LNS].cfg.hello_interval = USL_TIME_NEVER;
	h_connect(h, LAC);
	h_connect(h, LAC);
	h_run_for(h, usl_time_s(100));
	ck_assert_int_eq(count_state(h, LAC, L2TP_CC_ESTABLISHED), 2);
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_HELLO), 2);
	for (i = 0; i < 2; i++) {
		t[i] = h_find(h, LAC, L2TP_MSG_HELLO, i)->t;
		ck_assert_int_ge(t[i].ns, h_at(usl_time_s(1000), 45000).ns);
		ck_assert_int_le(t[i].ns, h_at(usl_time_s(1000), 75100).ns);
	}
	ck_assert_int_ne(t[0].ns, t[1].ns);
	h_free(h);
}
END_TEST

static int send_nothing(struct l2tp_cc *cc, const uint8_t *buf, size_t len)
{
	(void)cc; (void)buf; (void)len;
	return 0;
}

/*
 * A hello interval past half the clock's range (not "never") is refused:
 * with the jitter it would overflow (found by the restore fuzzer in a
 * corrupt state); the largest one accepted still connects.
 */
START_TEST(test_hello_interval_bounds)
{
	static const struct l2tp_cc_ops ops = { .send = send_nothing };
	struct harness *h = h_new(4);
	struct l2tp_cc_cfg cfg = h->end[LAC].cfg;
	struct l2tp_cc *cc;

	cfg.hello_jitter_pct = 90;
	cfg.hello_interval = usl_time_ns(INT64_MAX / 2 + 1);
	ck_assert_ptr_null(l2tp_cc_new(&cfg, &ops, &h->ts, 1, NULL));
	cfg.hello_interval = usl_time_ns(-1);
	ck_assert_ptr_null(l2tp_cc_new(&cfg, &ops, &h->ts, 1, NULL));
	h->end[LAC].cfg.hello_jitter_pct = 90;
	h->end[LAC].cfg.hello_interval = usl_time_ns(INT64_MAX / 2);
	cc = h_connect(h, LAC);
	h_run_for(h, usl_time_s(10));
	ck_assert_int_eq(l2tp_cc_state(cc), L2TP_CC_ESTABLISHED);
	h_free(h);
}
END_TEST

/* ------------------------------------------------------------------ */
/* StopCCN */

/* Both ends established and settled, under the test's drop rule (armed by its own flag). */
static void establish(struct harness *h, h_drop_fn drop, void *arg)
{
	h->drop = drop;
	h->drop_arg = arg;
	h_connect(h, LAC);
	ck_assert(h_run_until(h, h_cond_both_established, NULL, usl_time_s(5)));
	h_run_for(h, usl_time_s(1));
}

static bool drop_first_zlb_after_stop(struct harness *h, const struct h_wire *w, unsigned nth,
				      void *arg)
{
	int *left = arg;

	if (w->type == L2TP_MSG_ZLB && h_count(h, -1, L2TP_MSG_STOPCCN) > 0 && *left > 0) {
		(*left)--;
		return true;
	}
	return false;
}

START_TEST(test_stopccn)
{
	struct harness *h = h_new(5);
	int closer = _i, other = !_i, left = 1;
	const struct h_wire *w;
	const struct h_event *ev;
	struct l2tp_msg m;
	usl_time sent, arrived;

	establish(h, drop_first_zlb_after_stop, &left);
	l2tp_cc_close(h_cc(h, closer), L2TP_STOPCCN_SHUTTING_DOWN, 0, "maintenance");
	sent = h_now(h);
	arrived = usl_time_add(sent, h->latency);
	ck_assert_int_eq(l2tp_cc_state(h_cc(h, closer)), L2TP_CC_STOPPING);
	ck_assert_int_eq(h->end[closer].dp_tunnel_live, 0);
	w = h_find(h, closer, L2TP_MSG_STOPCCN, 0);
	ck_assert_ptr_nonnull(w);
	h_decode(w, &m);
	ck_assert_uint_eq(m.result.result, L2TP_STOPCCN_SHUTTING_DOWN);
	ck_assert_int_eq(m.result.message.len, 11);
	ck_assert(memcmp(m.result.message.p, "maintenance", 11) == 0);
	ck_assert(l2tp_msg_has(&m, L2TP_AVP_ASSIGNED_CCID));
	ck_assert_uint_eq(m.assigned_ccid, l2tp_cc_local_ccid(h_cc(h, closer)));
	/* the recipient's ACK is lost: StopCCN comes again after 1 s and is acked */
	h_run_for(h, usl_time_s(2));
	ck_assert_int_eq(h_count(h, closer, L2TP_MSG_STOPCCN), 2);
	ck_assert_int_eq(h_count(h, other, L2TP_MSG_ZLB) >= 2, 1);
	ck_assert_int_eq(l2tp_cc_state(h_cc(h, closer)), L2TP_CC_CLOSED);
	ev = h_last_cc_event(h, closer, L2TP_CC_CLOSED);
	ck_assert_int_eq(ev->t.ns, usl_time_add(sent, usl_time_ms(1000 + 2 * 10)).ns);
	/* the recipient holds for a full cycle (31 s), then lets go */
	ck_assert_int_eq(l2tp_cc_state(h_cc(h, other)), L2TP_CC_STOPPING);
	ck_assert_int_eq(h->end[other].dp_tunnel_live, 0);
	ev = h_last_cc_event(h, other, L2TP_CC_STOPPING);
	ck_assert_uint_eq(ev->result, L2TP_STOPCCN_SHUTTING_DOWN);
	ck_assert_str_eq(ev->text, "maintenance");
	h_run_for(h, usl_time_s(40));
	ev = h_last_cc_event(h, other, L2TP_CC_CLOSED);
	ck_assert_ptr_nonnull(ev);
	ck_assert_int_eq(ev->t.ns, usl_time_add(arrived, usl_time_s(31)).ns);
	ck_assert_int_eq(h->end[other].dp_tunnel_deletes, 1);
	ck_assert_int_eq(h->end[closer].dp_tunnel_deletes, 1);
	h_free(h);
}
END_TEST

/* StopCCN to a silent peer: retransmitted for the hold time, then closed. */
START_TEST(test_stopccn_unanswered)
{
	struct harness *h = h_new(6);
	bool cut = false;
	usl_time sent;
	const struct h_event *ev;

	h->end[LAC].free_on_close = true;	/* the daemon frees it in the event */
	establish(h, drop_from_lns, &cut);
	cut = true;
	l2tp_cc_close(h_cc(h, LAC), L2TP_STOPCCN_NORMAL, 0, NULL);
	sent = h_now(h);
	h_run_for(h, usl_time_s(60));
	ck_assert_int_eq(h->end[LAC].n_cc, 0);		/* freed from inside its event */
	ev = h_last_cc_event(h, LAC, L2TP_CC_CLOSED);
	ck_assert_int_eq(ev->t.ns, usl_time_add(sent, usl_time_s(31)).ns);
	/* 0, 1, 3, 7, 15, 23 (31 is the end of the hold) */
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_STOPCCN), 6);
	ck_assert_int_eq(h_find(h, LAC, L2TP_MSG_STOPCCN, 5)->t.ns,
			 usl_time_add(sent, usl_time_s(23)).ns);
	h_free(h);
}
END_TEST

/* After both StopCCNs: the LNS's ZLBs (and all else but its StopCCN) lost. */
static bool drop_lns_but_stopccn(struct harness *h, const struct h_wire *w, unsigned nth,
				 void *arg)
{
	return *(bool *)arg && w->from == LNS && w->type != L2TP_MSG_STOPCCN;
}

/*
 * Crossed StopCCNs (both ends close at once, as when both shut down): the
 * LAC gets the LNS's StopCCN, acknowledges it (a ZLB) and sends its own
 * once more, at once, and never again; the LNS, closing too, never
 * acknowledges it.  The
 * LAC holds (for the retransmissions of theirs) and is closed at the end of
 * the hold.
 */
START_TEST(test_stopccn_crossed)
{
	struct harness *h = h_new(8);
	bool cut = false;
	usl_time sent;
	const struct h_event *ev;
	const struct h_wire *w;

	establish(h, drop_lns_but_stopccn, &cut);
	cut = true;
	l2tp_cc_close(h_cc(h, LAC), L2TP_STOPCCN_SHUTTING_DOWN, 0, NULL);
	l2tp_cc_close(h_cc(h, LNS), L2TP_STOPCCN_SHUTTING_DOWN, 0, NULL);
	sent = h_now(h);
	ck_assert(!l2tp_cc_holding(h_cc(h, LAC)));	/* its StopCCN in flight */
	h_run_for(h, usl_time_s(5));
	ck_assert_int_eq(h_count(h, LNS, L2TP_MSG_STOPCCN), 2);
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_STOPCCN), 2);	/* once more, not again */
	ck_assert_int_ge(h_count(h, LAC, L2TP_MSG_ZLB), 1);		/* theirs acknowledged */
	ck_assert_int_eq(h_find(h, LAC, L2TP_MSG_ZLB, 0)->t.ns, usl_time_add(sent, h->latency).ns);
	w = h_find(h, LAC, L2TP_MSG_STOPCCN, 1);
	ck_assert_int_eq(w->t.ns, usl_time_add(sent, h->latency).ns);
	ck_assert_uint_eq(w->ns, h_find(h, LAC, L2TP_MSG_STOPCCN, 0)->ns);
	ck_assert_uint_eq(w->nr, (uint16_t)(h_find(h, LNS, L2TP_MSG_STOPCCN, 0)->ns + 1));
	ck_assert_int_eq(l2tp_cc_state(h_cc(h, LAC)), L2TP_CC_STOPPING);
	ck_assert(l2tp_cc_holding(h_cc(h, LAC)));
	h_run_for(h, usl_time_s(30));
	ev = h_last_cc_event(h, LAC, L2TP_CC_CLOSED);
	ck_assert_ptr_nonnull(ev);
	ck_assert_int_eq(ev->t.ns, usl_time_add(sent, usl_time_s(31)).ns);
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_STOPCCN), 2);
	h_free(h);
}
END_TEST

/* Each end's first StopCCN lost, then every ZLB of the LAC's. */
struct crossed_loss { bool cut; bool stop_lost[2]; };

static bool drop_first_stopccns_and_lac_zlbs(struct harness *h, const struct h_wire *w,
					     unsigned nth, void *arg)
{
	struct crossed_loss *x = arg;

	if (w->type == L2TP_MSG_STOPCCN && !x->stop_lost[w->from])
		return x->stop_lost[w->from] = true;
	return x->cut && w->from == LAC && w->type == L2TP_MSG_ZLB;
}

/*
 * Crossed StopCCNs where the peer never had ours: the LNS closes, the LAC
 * 100 ms later, both StopCCNs are lost, and the LNS's retransmission
 * reaches the LAC before the LAC's own is due.  The LAC's answer includes
 * its StopCCN (its ZLB is lost here), so the LNS learns at once that its
 * StopCCN arrived and that the LAC closed too: it lets go one round trip
 * later, not after retransmitting for its 31 s hold.
 */
START_TEST(test_stopccn_crossed_ours_lost)
{
	struct harness *h = h_new(9);
	struct crossed_loss x = { 0 };
	usl_time lns_sent;
	const struct h_event *ev;

	establish(h, drop_first_stopccns_and_lac_zlbs, &x);
	x.cut = true;
	l2tp_cc_close(h_cc(h, LNS), L2TP_STOPCCN_SHUTTING_DOWN, 0, NULL);
	lns_sent = h_now(h);
	h_run_for(h, usl_time_ms(100));
	l2tp_cc_close(h_cc(h, LAC), L2TP_STOPCCN_SHUTTING_DOWN, 0, NULL);
	h_run_for(h, usl_time_s(5));
	ev = h_last_cc_event(h, LNS, L2TP_CC_CLOSED);
	ck_assert_ptr_nonnull(ev);
	ck_assert_int_eq(ev->t.ns, usl_time_add(lns_sent, usl_time_ms(1000 + 2 * 10)).ns);
	ck_assert_int_eq(h_count(h, LNS, L2TP_MSG_STOPCCN), 2);
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_STOPCCN), 2);
	ck_assert(l2tp_cc_holding(h_cc(h, LAC)));
	h_free(h);
}
END_TEST

/* ------------------------------------------------------------------ */
/* malformed and unknown */

/* An unknown M=1 AVP in a connection message: StopCCN 2/8 (5.2). */
START_TEST(test_unknown_mandatory_avp)
{
	struct harness *h = h_new(8);
	struct l2tp_msg m;
	const struct h_wire *w;
	const struct h_event *ev;
	struct l2tp_cc_stats st;

	h_connect(h, LAC);
	ck_assert(h_run_until(h, h_cond_both_established, NULL, usl_time_s(5)));
	/* M=0: ignored */
	memset(&m, 0, sizeof(m));
	m.type = L2TP_MSG_HELLO;
	h_send_msg(h, LAC, &m, 0, 300, false);
	h_run_for(h, usl_time_s(1));
	ck_assert_int_eq(l2tp_cc_state(h_cc(h, LNS)), L2TP_CC_ESTABLISHED);
	/* M=1, vendor 9 (Cisco) unknown: the connection is cleared */
	memset(&m, 0, sizeof(m));
	m.type = L2TP_MSG_HELLO;
	h_send_msg(h, LAC, &m, 9, 77, true);
	h_run_for(h, usl_time_s(1));
	/* StopCCN sent, acknowledged at once: closed */
	ck_assert_int_eq(l2tp_cc_state(h_cc(h, LNS)), L2TP_CC_CLOSED);
	ck_assert_int_eq(l2tp_cc_state(h_cc(h, LAC)), L2TP_CC_STOPPING);
	w = h_find(h, LNS, L2TP_MSG_STOPCCN, 0);
	ck_assert_ptr_nonnull(w);
	h_decode(w, &m);
	ck_assert_uint_eq(m.result.result, L2TP_STOPCCN_GENERAL_ERROR);
	ck_assert(m.result.has_error);
	ck_assert_uint_eq(m.result.error, L2TP_ERR_UNKNOWN_MANDATORY_AVP);
	ck_assert(l2tp_msg_has(&m, L2TP_AVP_ASSIGNED_CCID));	/* we had sent SCCRP */
	ev = h_last_cc_event(h, LAC, L2TP_CC_STOPPING);
	ck_assert_ptr_nonnull(ev);
	ck_assert_uint_eq(ev->result, L2TP_STOPCCN_GENERAL_ERROR);
	ck_assert_uint_eq(ev->error, L2TP_ERR_UNKNOWN_MANDATORY_AVP);
	st = stats_of(h_cc(h, LNS));
	ck_assert_uint_eq(st.drops[L2TP_DROP_UNKNOWN_MANDATORY], 1);
	h_free(h);
}
END_TEST

/* Builds an SCCRQ by hand with two extra AVPs appended. */
static size_t craft_sccrq(uint8_t *buf, uint8_t ver, uint16_t t1, bool m1, uint16_t t2, bool m2)
{
	struct l2tp_msg m;
	int len;

	memset(&m, 0, sizeof(m));
	m.ver = ver;
	m.type = L2TP_MSG_SCCRQ;
	m.host_name.p = (const uint8_t *)"rfgw";
	m.host_name.len = 4;
	l2tp_msg_set(&m, L2TP_AVP_HOST_NAME);
	m.router_id = 0x01020304;
	l2tp_msg_set(&m, L2TP_AVP_ROUTER_ID);
	m.assigned_ccid = 0x4242;
	l2tp_msg_set(&m, L2TP_AVP_ASSIGNED_CCID);
	m.pw_caps[0] = L2TP_PW_ETH;
	m.n_pw_caps = 1;
	l2tp_msg_set(&m, L2TP_AVP_PW_CAP_LIST);
	len = l2tp_msg_encode(&m, buf, L2TP_MAX_MSG, false, 0, NULL);
	ck_assert_int_gt(len, 0);
	usl_put_be16(buf + len, (uint16_t)((m1 ? L2TP_AVP_F_M : 0) | 8));
	usl_put_be16(buf + len + 2, 0);
	usl_put_be16(buf + len + 4, t1);
	usl_put_be16(buf + len + 6, 0x0100);
	len += 8;
	usl_put_be16(buf + len, (uint16_t)((m2 ? L2TP_AVP_F_M : 0) | 10));
	usl_put_be16(buf + len + 2, 0);
	usl_put_be16(buf + len + 4, t2);
	usl_put_be32(buf + len + 6, 3);
	len += 10;
	usl_put_be16(buf + 2, (uint16_t)len);
	return (size_t)len;
}

/*
 * A Cisco RFGW-10 style SCCRQ with the v2 Protocol Version and Framing
 * Capabilities AVPs, M=1: accepted.  An unknown IETF type with M=1: refused
 * with StopCCN 2/8 (to the CCID the SCCRQ assigned).
 */
START_TEST(test_sccrq_v2_avps_and_unknown)
{
	struct harness *h = h_new(9);
	uint8_t buf[L2TP_MAX_MSG];
	struct l2tp_msg m;
	const struct h_wire *w;
	size_t len;

	len = craft_sccrq(buf, 3, L2TP_AVP_PROTOCOL_VERSION, true, L2TP_AVP_FRAMING_CAP, true);
	h_inject_raw(h, LNS, buf, len);
	h_run_for(h, usl_time_s(1));
	ck_assert_int_eq(h->end[LNS].n_cc, 1);
	ck_assert_int_eq(l2tp_cc_state(h_cc(h, LNS)), L2TP_CC_WAIT_CTL_CONN);
	w = h_find(h, LNS, L2TP_MSG_SCCRP, 0);
	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(w->ccid, 0x4242);
	ck_assert_str_eq(l2tp_cc_peer_host_name(h_cc(h, LNS)), "rfgw");

	len = craft_sccrq(buf, 3, 99, true, L2TP_AVP_FRAMING_CAP, true);
	ck_assert_int_eq(l2tp_msg_decode(&m, buf, len, false, NULL), L2TP_DROP_NONE);
	ck_assert(m.has_unknown_mandatory);
	/* the same peer CCID: drop the first cc so this makes a new one */
	l2tp_cc_free(h->end[LNS].cc[0]);
	h->end[LNS].n_cc = 0;
	h_inject_raw(h, LNS, buf, len);
	h_run_for(h, usl_time_s(1));
	ck_assert_int_eq(h->end[LNS].n_cc, 1);
	ck_assert_int_eq(l2tp_cc_state(h_cc(h, LNS)), L2TP_CC_STOPPING);
	w = h_find(h, LNS, L2TP_MSG_STOPCCN, 0);
	ck_assert_ptr_nonnull(w);
	h_decode(w, &m);
	ck_assert_uint_eq(m.ccid, 0x4242);
	ck_assert_uint_eq(m.result.result, L2TP_STOPCCN_GENERAL_ERROR);
	ck_assert_uint_eq(m.result.error, L2TP_ERR_UNKNOWN_MANDATORY_AVP);
	h_free(h);
}
END_TEST

/*
 * 4.7.3: an SCCRQ with Ver=2 (a v2/v3 auto-detecting peer) carrying v2 AVPs
 * with M=1 (Assigned Tunnel ID, Framing Capabilities) is accepted, and
 * answered in v3.
 */
START_TEST(test_sccrq_ver2)
{
	struct harness *h = h_new(11);
	uint8_t buf[L2TP_MAX_MSG];
	const struct h_wire *w;
	size_t len;

	len = craft_sccrq(buf, 2, L2TP_AVP_ASSIGNED_TUNNEL_ID, true, L2TP_AVP_FRAMING_CAP, true);
	ck_assert_uint_eq(buf[1] & 0x0f, 2);
	h_inject_raw(h, LNS, buf, len);
	h_run_for(h, usl_time_s(1));
	ck_assert_int_eq(h->end[LNS].n_cc, 1);
	ck_assert_int_eq(l2tp_cc_state(h_cc(h, LNS)), L2TP_CC_WAIT_CTL_CONN);
	w = h_find(h, LNS, L2TP_MSG_SCCRP, 0);
	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(w->buf[1] & 0x0f, 3);
	h_free(h);
}
END_TEST

/*
 * 5.4.1: an unknown message type is ignored with M=0 (but still takes its
 * Ns slot: later messages flow) and clears the connection with M=1.
 */
START_TEST(test_unknown_message_type)
{
	struct harness *h = h_new(12);
	struct l2tp_msg m;
	uint8_t buf[64];
	const struct h_wire *w;
	int len, i;

	h_connect(h, LAC);
	ck_assert(h_run_until(h, h_cond_both_established, NULL, usl_time_s(5)));
	for (i = 0; i < 2; i++) {
		memset(&m, 0, sizeof(m));
		m.ver = 3;
		m.type = L2TP_MSG_HELLO;
		len = l2tp_msg_encode(&m, buf, sizeof(buf), false, 0, NULL);
		ck_assert_int_gt(len, 0);
		usl_put_be16(buf + 18, 99);		/* the Message Type value */
		if (i == 0)
			buf[12] &= 0x7f;		/* M=0 */
		h_send_raw(h, LAC, buf, (size_t)len);
		h_run_for(h, usl_time_s(1));
		if (i == 0) {
			/* ignored; a HELLO after it still gets through and is acked */
			memset(&m, 0, sizeof(m));
			m.type = L2TP_MSG_HELLO;
			h_send_msg(h, LAC, &m, 0, 0, false);
			h_run_for(h, usl_time_s(1));
			ck_assert_int_eq(l2tp_cc_state(h_cc(h, LNS)), L2TP_CC_ESTABLISHED);
			ck_assert_uint_eq(stats_of(h_cc(h, LNS)).rx_msgs[L2TP_MSG_HELLO], 1);
			ck_assert_uint_eq(stats_of(h_cc(h, LAC)).in_flight, 0);
		}
	}
	ck_assert_int_eq(l2tp_cc_state(h_cc(h, LNS)), L2TP_CC_CLOSED);
	w = h_find(h, LNS, L2TP_MSG_STOPCCN, 0);
	ck_assert_ptr_nonnull(w);
	h_decode(w, &m);
	ck_assert_uint_eq(m.result.result, L2TP_STOPCCN_GENERAL_ERROR);
	ck_assert_uint_eq(stats_of(h_cc(h, LNS)).drops[L2TP_DROP_UNKNOWN_MSG_TYPE], 2);
	h_free(h);
}
END_TEST

/* A message that does not belong to the state: StopCCN 7 (7.1, 7.2). */
START_TEST(test_wrong_state)
{
	struct harness *h = h_new(10);
	struct l2tp_msg m;
	const struct h_wire *w;

	h_connect(h, LAC);
	ck_assert(h_run_until(h, h_cond_both_established, NULL, usl_time_s(5)));
	memset(&m, 0, sizeof(m));
	m.type = L2TP_MSG_SCCCN;
	h_send_msg(h, LAC, &m, 0, 0, false);
	h_run_for(h, usl_time_s(1));
	ck_assert_int_eq(l2tp_cc_state(h_cc(h, LNS)), L2TP_CC_CLOSED);
	ck_assert_ptr_nonnull(h_last_cc_event(h, LNS, L2TP_CC_STOPPING));
	w = h_find(h, LNS, L2TP_MSG_STOPCCN, 0);
	ck_assert_ptr_nonnull(w);
	h_decode(w, &m);
	ck_assert_uint_eq(m.result.result, L2TP_STOPCCN_FSM_ERROR);
	ck_assert_uint_eq(stats_of(h_cc(h, LNS)).drops[L2TP_DROP_WRONG_STATE], 1);
	h_free(h);
}
END_TEST

/* ------------------------------------------------------------------ */
/* authentication (4.3) */

static const struct { enum l2tp_digest_type t0, t1; const char *s0, *s1; bool ok; } auths[] = {
	{ L2TP_DIGEST_HMAC_MD5, L2TP_DIGEST_HMAC_MD5, "sesame", "sesame", true },
	{ L2TP_DIGEST_HMAC_SHA1, L2TP_DIGEST_HMAC_SHA1, "sesame", "sesame", true },
	{ L2TP_DIGEST_HMAC_MD5, L2TP_DIGEST_HMAC_MD5, "sesame", "wrong", false },
	{ L2TP_DIGEST_HMAC_SHA1, L2TP_DIGEST_HMAC_SHA1, "sesame", "wrong", false },
};

START_TEST(test_auth)
{
	struct harness *h = h_new(20 + _i);
	struct l2tp_msg m;
	struct l2tp_cc_stats st;
	const struct h_event *ev;
	int i;

	h_set_auth(h, LAC, auths[_i].s0, auths[_i].t0);
	h_set_auth(h, LNS, auths[_i].s1, auths[_i].t1);
	h->end[LAC].cfg.sccrq_max_retries = 3;
	h->end[LAC].cfg.hello_interval = usl_time_s(10);
	h_connect(h, LAC);
	if (auths[_i].ok) {
		ck_assert(h_run_until(h, h_cond_both_established, NULL, usl_time_s(5)));
		h_run_for(h, usl_time_s(12));	/* a HELLO and its ACK too */
		ck_assert(l2tp_cc_auth_on(h_cc(h, LAC)));
		ck_assert(l2tp_cc_auth_on(h_cc(h, LNS)));
		/* every message carries a digest; no ZLB (6.15) */
		ck_assert_int_eq(h_count(h, -1, L2TP_MSG_ZLB), 0);
		ck_assert_int_gt(h_count(h, -1, L2TP_MSG_ACK), 0);
		ck_assert_int_gt(h_count(h, LAC, L2TP_MSG_HELLO), 0);
		for (i = 0; i < h->n_wire; i++) {
			h_decode(&h->wire[i], &m);
			ck_assert_uint_eq(m.n_digests, 1);
			ck_assert_uint_eq(m.digest[0].type, auths[_i].t0);
		}
		h_decode(h_find(h, LAC, L2TP_MSG_SCCRQ, 0), &m);
		ck_assert(l2tp_msg_has(&m, L2TP_AVP_CTRL_MSG_AUTH_NONCE));
		ck_assert_uint_ge(m.nonce.len, 16);
		for (i = 0; i < 2; i++) {
			st = stats_of(h_cc(h, i));
			ck_assert_uint_eq(st.drops[L2TP_DROP_DIGEST_MISMATCH], 0);
			ck_assert_uint_eq(st.in_flight, 0);
		}
	} else {
		h_run_for(h, usl_time_s(30));
		ck_assert_int_eq(h_count_cc_events(h, LAC, L2TP_CC_ESTABLISHED), 0);
		ck_assert_int_eq(h_count_cc_events(h, LNS, L2TP_CC_ESTABLISHED), 0);
		ck_assert_int_eq(h_count(h, LNS, L2TP_MSG_SCCRP), 0);
		/* SCCRQ and its 3 retransmissions, each dropped by a fresh cc */
		ck_assert_int_eq(h->end[LNS].first_drops[L2TP_DROP_DIGEST_MISMATCH], 4);
		ck_assert_int_eq(h->end[LNS].n_cc, 0);
		ev = h_last_cc_event(h, LAC, L2TP_CC_CLOSED);
		ck_assert_ptr_nonnull(ev);
		ck_assert_ptr_nonnull(strstr(ev->text, "no answer to SCCRQ after 3"));
		ck_assert_int_eq(ev->t.ns, h_at(usl_time_s(1000), 15000).ns);
	}
	h_free(h);
}
END_TEST

/*
 * Authentication off, but the peer adds a Message Digest as an integrity
 * check (empty secret and nonces, 4.3): a good one is accepted, a corrupted
 * one dropped.
 */
START_TEST(test_integrity_digest)
{
	struct harness *h = h_new(31);
	struct l2tp_auth a;
	struct l2tp_msg m;
	struct l2tp_cc_stats st, st2;
	uint8_t buf[256];
	int len, i;

	h_connect(h, LAC);
	ck_assert(h_run_until(h, h_cond_both_established, NULL, usl_time_s(5)));
	h_run_for(h, usl_time_s(1));
	l2tp_auth_init(&a);
	ck_assert_int_eq(l2tp_auth_add_key(&a, L2TP_DIGEST_HMAC_SHA1, (const uint8_t *)"", 0), 0);
	for (i = 0; i < 2; i++) {
		st = stats_of(h_cc(h, LNS));
		memset(&m, 0, sizeof(m));
		m.ver = 3;
		m.type = L2TP_MSG_HELLO;
		m.ccid = l2tp_cc_local_ccid(h_cc(h, LNS));
		m.ns = st.next_nr;
		m.nr = st.next_ns;
		l2tp_auth_prepare(&a, &m);
		len = l2tp_msg_encode(&m, buf, sizeof(buf), false, 0, NULL);
		ck_assert_int_gt(len, 0);
		ck_assert_int_eq(l2tp_auth_sign(&a, buf, (size_t)len, false), 0);
		if (i == 1)
			buf[len - 1] ^= 1;	/* the last octet of the digest */
		h_inject_raw(h, LNS, buf, (size_t)len);
		h_run_for(h, usl_time_s(1));
		st2 = stats_of(h_cc(h, LNS));
		if (i == 0) {
			ck_assert_uint_eq(st2.rx_msgs[L2TP_MSG_HELLO], st.rx_msgs[L2TP_MSG_HELLO] + 1);
		} else {
			ck_assert_uint_eq(st2.rx_msgs[L2TP_MSG_HELLO], st.rx_msgs[L2TP_MSG_HELLO]);
			ck_assert_uint_eq(st2.drops[L2TP_DROP_DIGEST_MISMATCH], 1);
		}
	}
	h_free(h);
}
END_TEST

/*
 * One side wants authentication, the other has no secret.  The recipient
 * without a secret refuses the nonce with StopCCN 4; the recipient with one
 * cannot trust an SCCRQ without a digest and drops it (4.3: verify first).
 */
START_TEST(test_auth_one_sided)
{
	struct harness *h = h_new(30);
	const struct h_wire *w;
	struct l2tp_msg m;
	int authed = _i;

	h_set_auth(h, authed, "sesame", L2TP_DIGEST_HMAC_MD5);
	h_connect(h, LAC);
	h_run_for(h, usl_time_ms(3500));
	ck_assert_int_eq(h_count_cc_events(h, LAC, L2TP_CC_ESTABLISHED), 0);
	ck_assert_int_eq(h_count_cc_events(h, LNS, L2TP_CC_ESTABLISHED), 0);
	if (authed == LAC) {
		w = h_find(h, LNS, L2TP_MSG_STOPCCN, 0);
		ck_assert_ptr_nonnull(w);
		h_decode(w, &m);
		ck_assert_uint_eq(m.result.result, L2TP_STOPCCN_NOT_AUTHORIZED);
		ck_assert_int_eq(m.n_digests, 0);
	} else {
		ck_assert_int_eq(h->n_wire, 3);		/* SCCRQ, retransmitted at 1 s and 3 s */
		ck_assert_int_eq(h->end[LNS].first_drops[L2TP_DROP_DIGEST_MISSING], 3);
	}
	h_free(h);
}
END_TEST

/*
 * A refusal from the listener to a LAC that authenticates: signed with the
 * secret when the SCCRQ's digest verifies with it (the LAC acts on it at
 * once, with the digest type the SCCRQ used), unsigned otherwise (the LAC
 * drops it and keeps waiting).
 */
static const struct {
	enum l2tp_digest_type lac_type;
	const char *lns_secret;
	bool is_signed;
} refusal_keys[] = {
	{ L2TP_DIGEST_HMAC_MD5, "sesame", true },
	{ L2TP_DIGEST_HMAC_SHA1, "sesame", true },
	{ L2TP_DIGEST_HMAC_MD5, "other", false },
	{ L2TP_DIGEST_HMAC_MD5, "", false },
};

START_TEST(test_refusal_signed)
{
	struct harness *h = h_new(44);
	struct l2tp_result why = { .result = L2TP_STOPCCN_GENERAL_ERROR, .error = 4,
				   .has_error = true };
	const struct h_wire *w;
	const struct h_event *ev;
	struct l2tp_msg m, r;
	uint8_t out[512];
	bool is_signed = !refusal_keys[_i].is_signed;
	int len;

	why.message.p = (const uint8_t *)"max_tunnels reached";
	why.message.len = (uint16_t)strlen("max_tunnels reached");
	h->end[LNS].auto_respond = false;
	h_set_auth(h, LAC, "sesame", refusal_keys[_i].lac_type);
	h_connect(h, LAC);
	h_run_for(h, usl_time_ms(100));
	w = h_find(h, LAC, L2TP_MSG_SCCRQ, 0);
	ck_assert_ptr_nonnull(w);
	h_decode(w, &m);
	len = l2tp_cc_encode_refusal_signed(&m, w->buf, w->len,
					    (const uint8_t *)refusal_keys[_i].lns_secret,
					    strlen(refusal_keys[_i].lns_secret), &why, out,
					    sizeof(out), &is_signed);
	ck_assert_int_gt(len, 0);
	ck_assert(is_signed == refusal_keys[_i].is_signed);
	ck_assert_int_eq(l2tp_msg_decode(&r, out, (size_t)len, false, NULL), L2TP_DROP_NONE);
	ck_assert_uint_eq(r.type, L2TP_MSG_STOPCCN);
	ck_assert_uint_eq(r.ccid, l2tp_cc_local_ccid(h_cc(h, LAC)));
	ck_assert_uint_eq(r.n_digests, is_signed ? 1 : 0);
	if (is_signed)
		ck_assert_uint_eq(r.digest[0].type, refusal_keys[_i].lac_type);
	h_inject_raw(h, LAC, out, (size_t)len);
	h_run_for(h, usl_time_ms(100));
	if (is_signed) {
		ev = h_last_cc_event(h, LAC, L2TP_CC_STOPPING);
		ck_assert_ptr_nonnull(ev);
		ck_assert_uint_eq(ev->result, L2TP_STOPCCN_GENERAL_ERROR);
		ck_assert_ptr_nonnull(strstr(ev->text, "max_tunnels reached"));
	} else {
		ck_assert_int_eq(l2tp_cc_state(h_cc(h, LAC)), L2TP_CC_WAIT_CTL_REPLY);
		ck_assert_uint_eq(stats_of(h_cc(h, LAC)).drops[L2TP_DROP_DIGEST_MISSING], 1);
	}
	h_free(h);
}
END_TEST

/* The answer to a message for a CCID we do not know: it names that CCID, 40 octets. */
START_TEST(test_unknown_ccid_answer)
{
	struct l2tp_msg hdr, r;
	uint8_t out[128];
	int len;

	memset(&hdr, 0, sizeof(hdr));
	hdr.ccid = 0x12345678;
	hdr.ns = 9;
	len = l2tp_cc_encode_unknown_ccid(&hdr, out, sizeof(out));
	ck_assert_int_eq(len, 40);	/* larger than a bare HELLO (20): that is not answered */
	ck_assert_int_eq(l2tp_msg_decode(&r, out, (size_t)len, false, NULL), L2TP_DROP_NONE);
	ck_assert_uint_eq(r.type, L2TP_MSG_STOPCCN);
	ck_assert_uint_eq(r.ccid, 0);
	ck_assert_uint_eq(r.ns, 0);
	ck_assert_uint_eq(r.nr, 10);
	ck_assert(l2tp_msg_has(&r, L2TP_AVP_ASSIGNED_CCID));
	ck_assert_uint_eq(r.assigned_ccid, 0x12345678);
	ck_assert_uint_eq(r.result.result, L2TP_STOPCCN_GENERAL_ERROR);
	ck_assert_uint_eq(r.result.error, L2TP_ERR_NO_CONTROL_CONNECTION);
	ck_assert_int_eq(r.n_digests, 0);
	hdr.ccid = 0;
	ck_assert_int_eq(l2tp_cc_encode_unknown_ccid(&hdr, out, sizeof(out)), -1);
}
END_TEST

/* ------------------------------------------------------------------ */
/* data plane */

static const enum h_dp_mode dp_fail_modes[] = { H_DP_SYNC_FAIL, H_DP_DEFER_FAIL, H_DP_RETURN_FAIL };

START_TEST(test_dp_tunnel_failure)
{
	struct harness *h = h_new(40);
	const struct h_wire *w;
	const struct h_event *ev;
	struct l2tp_msg m;

	h->end[LNS].dp_tunnel = dp_fail_modes[_i];
	h_connect(h, LAC);
	h_run_for(h, usl_time_s(3));
	ck_assert_int_eq(l2tp_cc_state(h_cc(h, LNS)), L2TP_CC_CLOSED);
	ck_assert_ptr_nonnull(h_last_cc_event(h, LNS, L2TP_CC_STOPPING));
	ck_assert_int_eq(l2tp_cc_dp_state(h_cc(h, LNS)), L2TP_DP_FAILED);
	ck_assert_int_eq(h->end[LNS].dp_tunnel_deletes, 0);	/* nothing to delete */
	w = h_find(h, LNS, L2TP_MSG_STOPCCN, 0);
	ck_assert_ptr_nonnull(w);
	h_decode(w, &m);
	ck_assert_uint_eq(m.result.result, L2TP_STOPCCN_GENERAL_ERROR);
	ck_assert_uint_eq(m.result.error, L2TP_ERR_NO_RESOURCES);
	ev = h_last_cc_event(h, LNS, L2TP_CC_STOPPING);
	ck_assert_ptr_nonnull(strstr(ev->text, "data plane tunnel"));
	/* the LAC, whose tunnel was up, deletes it */
	ck_assert_int_eq(l2tp_cc_state(h_cc(h, LAC)), L2TP_CC_STOPPING);
	ck_assert_int_eq(h->end[LAC].dp_tunnel_creates, 1);
	ck_assert_int_eq(h->end[LAC].dp_tunnel_deletes, 1);
	h_run_for(h, usl_time_s(40));
	ck_assert(h_cond_both_closed(h, NULL));
	h_free(h);
}
END_TEST

/* A deferred data plane: established first, the tunnel comes up later. */
START_TEST(test_dp_tunnel_deferred)
{
	struct harness *h = h_new(41);

	h->end[LAC].dp_tunnel = H_DP_DEFER_OK;
	h->end[LNS].dp_tunnel = H_DP_DEFER_OK;
	h->end[LAC].dp_delay = usl_time_s(2);
	h_connect(h, LAC);
	h_run_for(h, usl_time_s(1));
	ck_assert_int_eq(l2tp_cc_state(h_cc(h, LAC)), L2TP_CC_ESTABLISHED);
	ck_assert_int_eq(l2tp_cc_dp_state(h_cc(h, LAC)), L2TP_DP_PENDING);
	ck_assert_int_eq(l2tp_cc_dp_state(h_cc(h, LNS)), L2TP_DP_UP);
	h_run_for(h, usl_time_s(2));
	ck_assert(h_cond_both_established(h, NULL));
	/* freed while a create is pending: cancelled through dp_tunnel_delete */
	h_free(h);
}
END_TEST

START_TEST(test_free_while_dp_pending)
{
	struct harness *h = h_new(42);

	h->end[LAC].dp_tunnel = H_DP_DEFER_OK;
	h->end[LAC].dp_delay = usl_time_s(5);
	h_connect(h, LAC);
	h_run_for(h, usl_time_s(1));
	ck_assert_int_eq(l2tp_cc_dp_state(h_cc(h, LAC)), L2TP_DP_PENDING);
	l2tp_cc_free(h_cc(h, LAC));
	h->end[LAC].n_cc = 0;
	ck_assert_int_eq(h->end[LAC].dp_tunnel_deletes, 1);
	ck_assert(usl_list_empty(&h->dp));	/* the pending completion was cancelled */
	h_run_for(h, usl_time_s(10));
	h_free(h);
}
END_TEST

/* No answer at all: the SCCRQ is retransmitted for the whole cycle, then "no answer". */
START_TEST(test_no_answer)
{
	struct harness *h = h_new(43);
	const struct h_event *ev;

	h->end[LNS].auto_respond = false;
	h_connect(h, LAC);
	h_run_for(h, usl_time_s(100));
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_SCCRQ), 11);
	ev = h_last_cc_event(h, LAC, L2TP_CC_CLOSED);
	ck_assert_ptr_nonnull(ev);
	ck_assert_int_eq(ev->t.ns, h_at(usl_time_s(1000), 71000).ns);
	ck_assert_str_eq(ev->text, "no answer to SCCRQ after 10 retransmissions");
	h_free(h);
}
END_TEST

/* A hand-made control message from a peer that has no engine of its own. */
static size_t craft_msg(uint8_t *buf, uint16_t type, uint32_t ccid, uint16_t ns, uint16_t nr,
			uint32_t assigned_ccid)
{
	struct l2tp_msg m;
	int len;

	memset(&m, 0, sizeof(m));
	m.ver = 3;
	m.ccid = ccid;
	m.ns = ns;
	m.nr = nr;
	if (type != L2TP_MSG_ZLB) {
		m.type = type;
		l2tp_msg_set(&m, L2TP_AVP_MESSAGE_TYPE);
	}
	if (type == L2TP_MSG_STOPCCN) {
		m.result.result = L2TP_STOPCCN_NOT_AUTHORIZED;
		m.result.message.p = (const uint8_t *)"not allowed";
		m.result.message.len = 11;
		l2tp_msg_set(&m, L2TP_AVP_RESULT_CODE);
	}
	if (assigned_ccid != 0) {
		m.assigned_ccid = assigned_ccid;
		l2tp_msg_set(&m, L2TP_AVP_ASSIGNED_CCID);
	}
	len = l2tp_msg_encode(&m, buf, L2TP_MAX_MSG, false, 0, NULL);
	ck_assert_int_gt(len, 0);
	return (size_t)len;
}

/*
 * Administrative close before the SCCRP.  Before the peer answered, nothing
 * is sent (it may not even exist); once it acknowledged the SCCRQ it holds
 * a half connection and is told, with CCID 0 and our Assigned CCID (5.4.3).
 */
START_TEST(test_close_while_connecting)
{
	struct harness *h = h_new(44);
	bool acked = _i == 1;
	uint8_t buf[L2TP_MAX_MSG];
	struct l2tp_cc *lac;
	struct l2tp_msg m;
	size_t len;

	h->end[LNS].auto_respond = false;
	lac = h_connect(h, LAC);
	if (acked) {
		len = craft_msg(buf, L2TP_MSG_ZLB, l2tp_cc_local_ccid(lac), 0, 1, 0);
		h_inject_raw(h, LAC, buf, len);
		h_run_for(h, usl_time_ms(500));
	}
	l2tp_cc_close(lac, L2TP_STOPCCN_NORMAL, 0, "changed my mind");
	ck_assert_int_eq(l2tp_cc_state(lac), (acked ? L2TP_CC_STOPPING : L2TP_CC_CLOSED));
	h_run_for(h, usl_time_s(10));
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_SCCRQ), 1);
	if (!acked) {
		ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_STOPCCN), 0);
		h_free(h);
		return;
	}
	ck_assert_int_ge(h_count(h, LAC, L2TP_MSG_STOPCCN), 1);
	h_decode(h_find(h, LAC, L2TP_MSG_STOPCCN, 0), &m);
	ck_assert_uint_eq(m.ccid, 0);
	ck_assert_uint_eq(m.assigned_ccid, l2tp_cc_local_ccid(lac));
	ck_assert_uint_eq(m.result.result, L2TP_STOPCCN_NORMAL);
	h_free(h);
}
END_TEST

/* ------------------------------------------------------------------ */
/* the peer's half: StopCCNs and ZLBs before the handshake completes */

/*
 * A responder that refuses our SCCRQ with a StopCCN carrying its Assigned
 * CCID (it made a connection for the SCCRQ before refusing it): our ZLB,
 * and the ZLB for each retransmission of that StopCCN, goes to that CCID
 * (5.4.3: once received, it is in the header of every message to the peer).
 * Without the AVP (a refusal that made no state) there is no CCID but 0.
 */
START_TEST(test_refusal_zlb_ccid)
{
	struct harness *h = h_new(45);
	uint32_t theirs = _i == 0 ? 0x5151 : 0, want = theirs;
	uint8_t buf[L2TP_MAX_MSG];
	const struct h_event *ev;
	const struct h_wire *w;
	struct l2tp_cc *lac;
	size_t len;
	int i;

	h->end[LNS].auto_respond = false;
	lac = h_connect(h, LAC);
	len = craft_msg(buf, L2TP_MSG_STOPCCN, l2tp_cc_local_ccid(lac), 0, 1, theirs);
	h_inject_raw(h, LAC, buf, len);
	h_run_for(h, usl_time_s(1));
	ck_assert_int_eq(l2tp_cc_state(lac), L2TP_CC_STOPPING);
	ev = h_last_cc_event(h, LAC, L2TP_CC_STOPPING);
	ck_assert_ptr_nonnull(ev);
	ck_assert_uint_eq(ev->result, L2TP_STOPCCN_NOT_AUTHORIZED);
	ck_assert_str_eq(ev->text, "not allowed");
	w = h_find(h, LAC, L2TP_MSG_ZLB, 0);
	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(w->ccid, want);
	ck_assert_uint_eq(l2tp_cc_peer_ccid(lac), want);
	/* the peer retransmits its StopCCN: acknowledged again, to the same CCID */
	h_inject_raw(h, LAC, buf, len);
	h_run_for(h, usl_time_s(1));
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_ZLB), 2);
	for (i = 0; i < 2; i++) {
		w = h_find(h, LAC, L2TP_MSG_ZLB, i);
		ck_assert_uint_eq(w->ccid, want);
		ck_assert_uint_eq(w->ns, 1);
		ck_assert_uint_eq(w->nr, 1);
	}
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_STOPCCN), 0);	/* theirs ended it */
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_SCCRQ), 1);
	h_free(h);
}
END_TEST

/*
 * The setup deadline passes in wait-ctl-reply.  A peer that acknowledged
 * our SCCRQ (a ZLB to our CCID, Nr 1) holds a half connection for it: it
 * gets a StopCCN, result 2, addressed as 5.4.3 says for "SCCRQ sent, no
 * SCCRP received yet" (CCID 0 in the header, our Assigned CCID in the AVP,
 * for its reverse lookup), and its ACK of that ends our hold.  A peer that
 * never answered may be a forged source: it gets nothing but the SCCRQ's
 * retransmissions.
 */
START_TEST(test_setup_expired_initiator)
{
	struct harness *h = h_new(46);
	bool acked = _i == 0;
	uint8_t buf[L2TP_MAX_MSG];
	const struct h_event *ev;
	const struct h_wire *w;
	struct l2tp_cc *lac;
	struct l2tp_msg m;
	usl_time t0;
	size_t len;

	h->end[LNS].auto_respond = false;
	lac = h_connect(h, LAC);
	t0 = h_now(h);
	if (acked) {
		len = craft_msg(buf, L2TP_MSG_ZLB, l2tp_cc_local_ccid(lac), 0, 1, 0);
		h_inject_raw(h, LAC, buf, len);
	}
	h_run_for(h, usl_time_ms(60500));
	if (!acked) {
		h_run_for(h, usl_time_s(40));
		ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_SCCRQ), 11);
		ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_STOPCCN), 0);
		ck_assert_int_eq(l2tp_cc_state(lac), L2TP_CC_CLOSED);
		h_free(h);
		return;
	}
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_SCCRQ), 1);
	ck_assert_int_eq(l2tp_cc_state(lac), L2TP_CC_STOPPING);
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_STOPCCN), 1);
	w = h_find(h, LAC, L2TP_MSG_STOPCCN, 0);
	ck_assert_int_eq(w->t.ns, usl_time_add(t0, usl_time_s(60)).ns);
	h_decode(w, &m);
	ck_assert_uint_eq(m.ccid, 0);
	ck_assert_uint_eq(m.ns, 1);
	ck_assert_uint_eq(m.nr, 0);
	ck_assert(l2tp_msg_has(&m, L2TP_AVP_ASSIGNED_CCID));
	ck_assert_uint_eq(m.assigned_ccid, l2tp_cc_local_ccid(lac));
	ck_assert_uint_eq(m.result.result, L2TP_STOPCCN_GENERAL_ERROR);
	ck_assert(m.result.has_error);
	ck_assert_uint_eq(m.result.error, L2TP_ERR_NONE);
	ck_assert_int_eq(m.result.message.len, 20);
	ck_assert(memcmp(m.result.message.p, "no SCCRP within 60 s", 20) == 0);
	/* the peer acknowledges it: our half goes at once */
	len = craft_msg(buf, L2TP_MSG_ZLB, l2tp_cc_local_ccid(lac), 0, 2, 0);
	h_inject_raw(h, LAC, buf, len);
	h_run_for(h, usl_time_s(1));
	ck_assert_int_eq(l2tp_cc_state(lac), L2TP_CC_CLOSED);
	ev = h_last_cc_event(h, LAC, L2TP_CC_CLOSED);
	ck_assert_ptr_nonnull(ev);
	ck_assert_uint_eq(ev->result, L2TP_STOPCCN_GENERAL_ERROR);
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_STOPCCN), 1);
	h_free(h);
}
END_TEST

/*
 * The same in wait-ctl-conn: the peer's ZLB acknowledged our SCCRP, no
 * SCCCN came.  Its CCID is known from its SCCRQ: the StopCCN goes there.
 * Unacknowledged, the SCCRP's retransmissions run out first, silently.
 */
START_TEST(test_setup_expired_responder)
{
	struct harness *h = h_new(47);
	bool acked = _i == 0;
	uint8_t buf[L2TP_MAX_MSG];
	const struct h_wire *w;
	struct l2tp_cc *lns;
	struct l2tp_msg m;
	usl_time t0;
	size_t len;

	len = craft_sccrq(buf, 3, L2TP_AVP_PROTOCOL_VERSION, false, L2TP_AVP_FRAMING_CAP, false);
	h_inject_raw(h, LNS, buf, len);
	h_run_for(h, usl_time_ms(10));
	t0 = h_now(h);
	lns = h_cc(h, LNS);
	ck_assert_ptr_nonnull(lns);
	ck_assert_int_eq(l2tp_cc_state(lns), L2TP_CC_WAIT_CTL_CONN);
	if (acked) {
		len = craft_msg(buf, L2TP_MSG_ZLB, l2tp_cc_local_ccid(lns), 1, 1, 0);
		h_inject_raw(h, LNS, buf, len);
	}
	h_run_for(h, usl_time_ms(60500));
	if (!acked) {
		ck_assert_int_eq(h_count(h, LNS, L2TP_MSG_SCCRP), 5);
		ck_assert_int_eq(h_count(h, LNS, L2TP_MSG_STOPCCN), 0);
		ck_assert_int_eq(l2tp_cc_state(lns), L2TP_CC_CLOSED);
		h_free(h);
		return;
	}
	ck_assert_int_eq(h_count(h, LNS, L2TP_MSG_SCCRP), 1);
	ck_assert_int_eq(l2tp_cc_state(lns), L2TP_CC_STOPPING);
	w = h_find(h, LNS, L2TP_MSG_STOPCCN, 0);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(w->t.ns, usl_time_add(t0, usl_time_s(60)).ns);
	h_decode(w, &m);
	ck_assert_uint_eq(m.ccid, 0x4242);
	ck_assert_uint_eq(m.assigned_ccid, l2tp_cc_local_ccid(lns));
	ck_assert_uint_eq(m.result.result, L2TP_STOPCCN_GENERAL_ERROR);
	h_free(h);
}
END_TEST

static Suite *cc_suite(void)
{
	Suite *s = suite_create("cc");
	TCase *tc = tcase_create("bringup");

	tcase_add_loop_test(tc, test_bringup_loss, 0, sizeof(bringups) / sizeof(bringups[0]));
	tcase_add_loop_test(tc, test_crossed_sccrq, 0, sizeof(ties) / sizeof(ties[0]));
	tcase_add_test(tc, test_no_answer);
	tcase_add_loop_test(tc, test_close_while_connecting, 0, 2);
	tcase_add_loop_test(tc, test_refusal_zlb_ccid, 0, 2);
	tcase_add_loop_test(tc, test_setup_expired_initiator, 0, 2);
	tcase_add_loop_test(tc, test_setup_expired_responder, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("keepalive");
	tcase_add_test(tc, test_hello_and_dead_peer);
	tcase_add_test(tc, test_failover_peer_silent);
	tcase_add_test(tc, test_hello_jitter);
	tcase_add_test(tc, test_hello_interval_bounds);
	tcase_add_test(tc, test_probe_while_retransmitting);
	tcase_add_test(tc, test_probe_while_in_flight);
	suite_add_tcase(s, tc);

	tc = tcase_create("teardown");
	tcase_add_loop_test(tc, test_stopccn, 0, 2);
	tcase_add_test(tc, test_stopccn_unanswered);
	tcase_add_test(tc, test_stopccn_crossed);
	tcase_add_test(tc, test_stopccn_crossed_ours_lost);
	tcase_add_test(tc, test_unknown_mandatory_avp);
	tcase_add_test(tc, test_sccrq_v2_avps_and_unknown);
	tcase_add_test(tc, test_sccrq_ver2);
	tcase_add_test(tc, test_unknown_message_type);
	tcase_add_test(tc, test_wrong_state);
	suite_add_tcase(s, tc);

	tc = tcase_create("auth");
	tcase_add_loop_test(tc, test_auth, 0, sizeof(auths) / sizeof(auths[0]));
	tcase_add_loop_test(tc, test_auth_one_sided, 0, 2);
	tcase_add_test(tc, test_integrity_digest);
	tcase_add_test(tc, test_unknown_ccid_answer);
	tcase_add_loop_test(tc, test_refusal_signed, 0,
			    (int)(sizeof(refusal_keys) / sizeof(refusal_keys[0])));
	suite_add_tcase(s, tc);

	tc = tcase_create("dataplane");
	tcase_add_loop_test(tc, test_dp_tunnel_failure, 0, 3);
	tcase_add_test(tc, test_dp_tunnel_deferred);
	tcase_add_test(tc, test_free_while_dp_pending);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cc_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
