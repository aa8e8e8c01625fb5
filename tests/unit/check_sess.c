/*
 * tests/unit/check_sess.c - sessions (RFC 3931 3.4, 5.4.4, 5.4.5, 7.3,
 * 7.4) through two engines back to back: incoming and outgoing calls from
 * both ends, cookies, refusals, tie breaking, circuit status, data plane
 * failures, teardown with the connection, and bring-up under loss.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_harness.h"

#define LAC 0
#define LNS 1

static struct harness *up(uint64_t seed)
{
	struct harness *h = h_new(seed);

	h->end[LAC].cfg.hello_interval = USL_TIME_NEVER;
	h->end[LNS].cfg.hello_interval = USL_TIME_NEVER;
	h_connect(h, LAC);
	ck_assert(h_run_until(h, h_cond_both_established, NULL, usl_time_s(5)));
	return h;
}

/* Every session of both ends established and paired. */
static bool cond_all_up(struct harness *h, void *arg)
{
	int want = *(int *)arg, e, i;

	for (e = 0; e < 2; e++) {
		if (h->end[e].n_sess != want)
			return false;
		for (i = 0; i < h->end[e].n_sess; i++)
			if (l2tp_sess_state(h->end[e].sess[i]) != L2TP_SESS_ESTABLISHED)
				return false;
	}
	return true;
}

static const struct h_wire *find_for(struct harness *h, int from, uint16_t type, uint32_t lsid,
				     struct l2tp_msg *m)
{
	int i;

	for (i = 0; i < h->n_wire; i++) {
		if (h->wire[i].from != from || h->wire[i].type != type)
			continue;
		h_decode(&h->wire[i], m);
		if (lsid == 0 || m->local_sid == lsid)
			return &h->wire[i];
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* calls */

static const struct { int opener; uint8_t cookie; bool outgoing; } calls[] = {
	{ LAC, 0, false }, { LAC, 4, false }, { LAC, 8, false },
	{ LNS, 0, false }, { LNS, 4, false }, { LNS, 8, false },
	{ LAC, 0, true }, { LAC, 8, true },
	{ LNS, 4, true }, { LNS, 8, true },
};

START_TEST(test_call)
{
	struct harness *h = up(100 + _i);
	int a = calls[_i].opener, b = !a, one = 1;
	uint8_t clen = calls[_i].cookie, l1, l2;
	bool og = calls[_i].outgoing;
	struct l2tp_sess *sa, *sb;
	struct l2tp_msg m;
	const struct h_wire *rq, *rp, *cn;
	const uint8_t *c1, *c2;

	h->end[b].accept_cfg.cookie_len = clen;
	h->end[b].accept_cfg.l2ss = 1;
	sa = h_open(h, a, L2TP_PW_ETH, clen, og, "circuit-7");
	ck_assert_ptr_nonnull(sa);
	ck_assert_int_eq(l2tp_sess_state(sa), L2TP_SESS_WAIT_REPLY);
	ck_assert(h_run_until(h, cond_all_up, &one, usl_time_s(5)));
	sb = h->end[b].sess[0];
	ck_assert_ptr_eq(h_peer_of(h, b, sa), sb);

	/* on the wire: request, reply, connected, from the right ends */
	rq = find_for(h, a, og ? L2TP_MSG_OCRQ : L2TP_MSG_ICRQ, 0, &m);
	ck_assert_ptr_nonnull(rq);
	ck_assert_uint_eq(m.local_sid, l2tp_sess_local_sid(sa));
	ck_assert(l2tp_msg_has(&m, L2TP_AVP_REMOTE_SESSION_ID));	/* always, even 0 */
	ck_assert_uint_eq(m.remote_sid, 0);
	ck_assert(l2tp_msg_has(&m, L2TP_AVP_SERIAL_NUMBER));
	ck_assert_uint_eq(m.pw_type, L2TP_PW_ETH);
	ck_assert_int_eq(m.remote_end_id.len, 9);
	ck_assert(memcmp(m.remote_end_id.p, "circuit-7", 9) == 0);
	ck_assert(l2tp_msg_has(&m, L2TP_AVP_CIRCUIT_STATUS));
	ck_assert_uint_eq(m.circuit_status, L2TP_CIRCUIT_ACTIVE | L2TP_CIRCUIT_NEW);
	ck_assert_int_eq(l2tp_msg_has(&m, L2TP_AVP_ASSIGNED_COOKIE), clen > 0);
	ck_assert_uint_eq(m.cookie_len, clen);
	rp = find_for(h, b, og ? L2TP_MSG_OCRP : L2TP_MSG_ICRP, 0, &m);
	ck_assert_ptr_nonnull(rp);
	ck_assert_uint_eq(m.local_sid, l2tp_sess_local_sid(sb));
	ck_assert_uint_eq(m.remote_sid, l2tp_sess_local_sid(sa));
	ck_assert(l2tp_msg_has(&m, L2TP_AVP_CIRCUIT_STATUS));
	/* the responder takes the requester's sublayer (none): one setting both ways */
	ck_assert_uint_eq(m.l2ss, 0);
	/* ICCN comes from the ICRQ sender, OCCN from the OCRQ recipient */
	cn = find_for(h, og ? b : a, og ? L2TP_MSG_OCCN : L2TP_MSG_ICCN, 0, &m);
	ck_assert_ptr_nonnull(cn);
	ck_assert_int_eq(h_count(h, og ? a : b, og ? L2TP_MSG_OCCN : L2TP_MSG_ICCN), 0);
	ck_assert_int_lt(rq->t.ns, rp->t.ns);
	ck_assert(rp < cn);		/* logged in this order (OCRP and OCCN may share a tick) */

	/* both ends agree */
	ck_assert_uint_eq(l2tp_sess_remote_sid(sa), l2tp_sess_local_sid(sb));
	ck_assert_uint_eq(l2tp_sess_remote_sid(sb), l2tp_sess_local_sid(sa));
	c1 = l2tp_sess_cookie(sa, &l1);
	c2 = l2tp_sess_peer_cookie(sb, &l2);
	ck_assert_uint_eq(l1, clen);
	ck_assert_uint_eq(l2, clen);
	ck_assert(memcmp(c1, c2, clen) == 0);
	c1 = l2tp_sess_cookie(sb, &l1);
	c2 = l2tp_sess_peer_cookie(sa, &l2);
	ck_assert_uint_eq(l1, clen);
	ck_assert(memcmp(c1, c2, clen) == 0);
	ck_assert_uint_eq(l2tp_sess_peer_l2ss(sa), 0);
	ck_assert_uint_eq(l2tp_sess_l2ss(sb), 0);
	ck_assert_uint_eq(l2tp_sess_pw_type(sb), L2TP_PW_ETH);
	ck_assert(l2tp_sess_is_initiator(sa));
	ck_assert(!l2tp_sess_is_initiator(sb));
	ck_assert_int_eq(l2tp_sess_is_outgoing(sb), og);
	ck_assert(l2tp_sess_peer_active(sa) && l2tp_sess_peer_active(sb));
	ck_assert_ptr_eq(l2tp_cc_find_session(h_cc(h, b), l2tp_sess_local_sid(sb)), sb);
	ck_assert_int_eq(h->end[a].dp_session_live, 1);
	ck_assert_int_eq(h->end[b].dp_session_live, 1);
	ck_assert_int_eq(l2tp_sess_dp_state(sa), L2TP_DP_UP);
	h_free(h);
}
END_TEST

/*
 * With dp_session_prepare: the end that waits for the connected message
 * (ICRQ recipient, OCRQ sender) has its session prepared once it has
 * answered, before that message arrives; the create at the message takes
 * it over, the other end never prepares, and the close deletes it once.
 */
START_TEST(test_call_prepared)
{
	struct harness *h = up(140 + _i);
	int a = calls[_i].opener, b = !a, one = 1, w;
	bool og = calls[_i].outgoing;
	const struct h_wire *cn;
	struct l2tp_msg m;

	w = og ? a : b;		/* the waiting end */
	h->end[a].dp_prepare = h->end[b].dp_prepare = true;
	h->end[b].accept_cfg.cookie_len = calls[_i].cookie;
	h->end[w].dp_session = H_DP_DEFER_OK;
	h->end[w].dp_delay = usl_time_ms(10);
	h_open(h, a, L2TP_PW_ETH, calls[_i].cookie, og, "circuit-9");
	ck_assert(h_run_until(h, cond_all_up, &one, usl_time_s(5)));
	cn = find_for(h, og ? b : a, og ? L2TP_MSG_OCCN : L2TP_MSG_ICCN, 0, &m);
	ck_assert_ptr_nonnull(cn);
	ck_assert_int_eq(h->end[w].dp_session_prepares, 1);
	ck_assert_int_eq(h->end[!w].dp_session_prepares, 0);
	ck_assert_int_eq(h->end[w].n_prepared, 0);	/* taken over by the create */
	ck_assert_int_eq(h->end[w].dp_session_creates, 1);
	ck_assert_int_eq(h->end[w].dp_session_live, 1);
	ck_assert_int_eq(l2tp_sess_dp_state(h->end[w].sess[0]), L2TP_DP_UP);
	l2tp_sess_close(h->end[a].sess[0], L2TP_CDN_ADMIN, 0, "done");
	h_run_for(h, usl_time_s(1));
	ck_assert_int_eq(h->end[w].dp_session_deletes, 1);
	ck_assert_int_eq(h->end[w].dp_session_live, 0);
	ck_assert_int_eq(h->end[!w].dp_session_live, 0);
	h_free(h);
}
END_TEST

/*
 * A prepared session whose call never connects owes its delete, whatever
 * ends it: the LAC's CDN instead of its ICCN, or the LNS's setup guard.
 * Declined preparations (nothing made) owe nothing.
 */
static const struct { bool prepare; bool lac_fails; } unconnected[] = {
	{ true, true }, { false, true }, { true, false }, { false, false },
};

START_TEST(test_prepared_call_unconnected)
{
	struct harness *h = up(150 + _i);
	bool prep = unconnected[_i].prepare;

	h->end[LNS].dp_prepare = prep;
	if (unconnected[_i].lac_fails) {
		h->end[LAC].dp_session = H_DP_SYNC_FAIL;
	} else {	/* the LAC's call never gets placed: the LNS's setup guard */
		h->end[LAC].dp_session = H_DP_DEFER_OK;
		h->end[LAC].dp_delay = usl_time_s(100);
		((struct l2tp_cc_cfg *)l2tp_cc_cfg(h_cc(h, LAC)))->sess_setup_timeout =
			USL_TIME_NEVER;
	}
	h_open(h, LAC, L2TP_PW_ETH, 4, false, "c");
	h_run_for(h, usl_time_s(unconnected[_i].lac_fails ? 2 : 70));
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_ICCN), 0);
	ck_assert_int_eq(h->end[LNS].n_sess, 0);
	ck_assert_int_eq(h->end[LNS].dp_session_prepares, prep);
	ck_assert_int_eq(h->end[LNS].dp_session_creates, 0);
	ck_assert_int_eq(h->end[LNS].dp_session_deletes, prep);
	ck_assert_int_eq(h->end[LNS].n_prepared, 0);
	if (!unconnected[_i].lac_fails)	/* the LNS's guard spoke: CDN 16 */
		ck_assert_int_eq(h_count(h, LNS, L2TP_MSG_CDN), 1);
	h_free(h);
}
END_TEST

/* CDN from either end: both sides clean up, data plane deleted. */
START_TEST(test_cdn)
{
	struct harness *h = up(120 + _i);
	int closer = _i, other = !_i, one = 1;
	struct l2tp_sess *s, *peer;
	uint32_t sid, psid;
	struct l2tp_msg m;
	const struct h_wire *w;
	const struct h_event *ev;

	h_open(h, LAC, L2TP_PW_ETH, 8, false, "c");
	ck_assert(h_run_until(h, cond_all_up, &one, usl_time_s(5)));
	s = h->end[closer].sess[0];
	peer = h->end[other].sess[0];
	sid = l2tp_sess_local_sid(s);
	psid = l2tp_sess_local_sid(peer);
	l2tp_sess_close(s, L2TP_CDN_ADMIN, 0, "operator");
	ck_assert_int_eq(h->end[closer].n_sess, 0);	/* freed at once */
	ck_assert_ptr_null(l2tp_cc_find_session(h_cc(h, closer), sid));
	h_run_for(h, usl_time_s(1));
	w = find_for(h, closer, L2TP_MSG_CDN, sid, &m);
	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(m.remote_sid, psid);
	ck_assert_uint_eq(m.result.result, L2TP_CDN_ADMIN);
	ck_assert_int_eq(h->end[other].n_sess, 0);
	ev = h_last_sess_event(h, other, psid, L2TP_SESS_CLOSED);
	ck_assert_ptr_nonnull(ev);
	ck_assert_uint_eq(ev->result, L2TP_CDN_ADMIN);
	ck_assert_str_eq(ev->text, "operator");
	ck_assert_int_eq(h->end[closer].dp_session_live, 0);
	ck_assert_int_eq(h->end[other].dp_session_live, 0);
	ck_assert_int_eq(h->end[closer].n_freed, 1);
	ck_assert_int_eq(h->end[other].n_freed, 1);
	/* the connection stays */
	ck_assert(h_cond_both_established(h, NULL));
	h_free(h);
}
END_TEST

/* ------------------------------------------------------------------ */
/* refusals */

/* An ICRQ with a PW type we did not advertise: CDN 14.  Locally: refused. */
START_TEST(test_pw_type_refused)
{
	struct harness *h = up(130);
	struct l2tp_msg m;
	const struct h_wire *w;

	errno = 0;
	ck_assert_ptr_null(h_open(h, LAC, L2TP_PW_PPP, 0, false, "c"));
	ck_assert_int_eq(errno, EPROTONOSUPPORT);
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_ICRQ), 0);

	/* a peer that ignores our capabilities anyway */
	memset(&m, 0, sizeof(m));
	m.type = L2TP_MSG_ICRQ;
	m.local_sid = 0x7777;
	l2tp_msg_set(&m, L2TP_AVP_LOCAL_SESSION_ID);
	l2tp_msg_set(&m, L2TP_AVP_REMOTE_SESSION_ID);
	m.serial = 1;
	l2tp_msg_set(&m, L2TP_AVP_SERIAL_NUMBER);
	m.pw_type = L2TP_PW_PPP;
	l2tp_msg_set(&m, L2TP_AVP_PW_TYPE);
	m.remote_end_id.p = (const uint8_t *)"x";
	m.remote_end_id.len = 1;
	l2tp_msg_set(&m, L2TP_AVP_REMOTE_END_ID);
	m.circuit_status = L2TP_CIRCUIT_ACTIVE;
	l2tp_msg_set(&m, L2TP_AVP_CIRCUIT_STATUS);
	h_send_msg(h, LAC, &m, 0, 0, false);
	h_run_for(h, usl_time_s(1));
	w = find_for(h, LNS, L2TP_MSG_CDN, 0, &m);
	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(m.result.result, L2TP_CDN_PW_TYPE_UNSUPPORTED);
	ck_assert_uint_eq(m.remote_sid, 0x7777);
	ck_assert_uint_ne(m.local_sid, 0);
	ck_assert_int_eq(h_count(h, LNS, L2TP_MSG_ICRP), 0);
	ck_assert_int_eq(h->end[LNS].n_sess, 0);
	ck_assert_int_eq(h->end[LNS].dp_session_creates, 0);
	ck_assert(h_cond_both_established(h, NULL));
	h_free(h);
}
END_TEST

/*
 * The LAC opens a session with cfg; the LNS must answer with a CDN for it.
 * Returns the session's local id; *m is the CDN as sent.
 */
static uint32_t open_expect_cdn(struct harness *h,
				const struct l2tp_sess_cfg *cfg,
				struct l2tp_msg *m)
{
	struct l2tp_sess *s = l2tp_sess_open(h_cc(h, LAC), cfg, NULL);
	uint32_t sid;

	ck_assert_ptr_nonnull(s);
	sid = l2tp_sess_local_sid(s);
	h_run_for(h, usl_time_s(1));
	ck_assert_ptr_nonnull(find_for(h, LNS, L2TP_MSG_CDN, 0, m));
	ck_assert_uint_eq(m->remote_sid, sid);
	return sid;
}

/* Sequencing asked for without an L2-Specific Sublayer: CDN 15. */
START_TEST(test_seq_without_l2ss)
{
	struct harness *h = up(131);
	struct l2tp_sess_cfg cfg;
	struct l2tp_msg m;
	const struct h_event *ev;
	uint32_t sid;

	l2tp_sess_cfg_init(&cfg);
	cfg.data_seq = 2;
	cfg.l2ss = 0;
	cfg.remote_end_id = (const uint8_t *)"c";
	cfg.remote_end_id_len = 1;
	sid = open_expect_cdn(h, &cfg, &m);
	ck_assert_uint_eq(m.result.result, L2TP_CDN_SEQ_WITHOUT_L2SS);
	ev = h_last_sess_event(h, LAC, sid, L2TP_SESS_CLOSED);
	ck_assert_ptr_nonnull(ev);
	ck_assert_uint_eq(ev->result, L2TP_CDN_SEQ_WITHOUT_L2SS);
	ck_assert_int_eq(h->end[LAC].n_sess, 0);
	ck_assert_int_eq(h->end[LNS].n_sess, 0);
	h_free(h);
}
END_TEST

/*
 * L2-Specific Sublayer negotiation (5.4.4): the peer asks for the default
 * sublayer, our profile says none; a data plane has one setting for both
 * directions, so both ends end up with the default, on the wire (reply) and
 * in what the data plane is told (l2ss == peer_l2ss on both ends).
 */
START_TEST(test_l2ss_agreed)
{
	struct harness *h = up(141);
	struct l2tp_sess_cfg cfg;
	struct l2tp_sess *sa, *sb;
	struct l2tp_msg m;
	int one = 1;

	h->end[LNS].accept_cfg.l2ss = 0;	/* our profile: none */
	l2tp_sess_cfg_init(&cfg);
	cfg.l2ss = 1;
	cfg.remote_end_id = (const uint8_t *)"c";
	cfg.remote_end_id_len = 1;
	sa = h_open_cfg(h, LAC, &cfg);
	ck_assert_ptr_nonnull(sa);
	ck_assert(h_run_until(h, cond_all_up, &one, usl_time_s(5)));
	sb = h->end[LNS].sess[0];
	ck_assert_ptr_nonnull(find_for(h, LNS, L2TP_MSG_ICRP, 0, &m));
	ck_assert_uint_eq(m.l2ss, 1);
	ck_assert_uint_eq(l2tp_sess_l2ss(sb), 1);
	ck_assert_uint_eq(l2tp_sess_peer_l2ss(sb), 1);
	ck_assert_uint_eq(l2tp_sess_l2ss(sa), 1);
	ck_assert_uint_eq(l2tp_sess_peer_l2ss(sa), 1);
	h_free(h);
}
END_TEST

/* A sublayer type we cannot carry: CDN result 2, error 3, saying which. */
START_TEST(test_l2ss_unsupported)
{
	struct harness *h = up(143);
	struct l2tp_sess_cfg cfg;
	struct l2tp_msg m;

	l2tp_sess_cfg_init(&cfg);
	cfg.l2ss = 7;
	cfg.remote_end_id = (const uint8_t *)"c";
	cfg.remote_end_id_len = 1;
	open_expect_cdn(h, &cfg, &m);
	ck_assert_uint_eq(m.result.result, L2TP_CDN_GENERAL_ERROR);
	ck_assert_uint_eq(m.result.error, L2TP_ERR_BAD_VALUE);
	ck_assert(m.result.message.len > 0 &&
		  memmem(m.result.message.p, m.result.message.len, "type 7", 6) != NULL);
	ck_assert_int_eq(h->end[LNS].n_sess, 0);
	ck_assert(h_cond_both_established(h, NULL));
	h_free(h);
}
END_TEST

/* The daemon refuses (sess_accept returns a CDN result). */
START_TEST(test_daemon_refuses)
{
	struct harness *h = up(132);
	struct l2tp_msg m;

	h->end[LNS].accept_result = L2TP_CDN_NO_RESOURCES_PERM;
	ck_assert_ptr_nonnull(h_open(h, LAC, L2TP_PW_ETH, 0, false, "c"));
	h_run_for(h, usl_time_s(1));
	ck_assert_ptr_nonnull(find_for(h, LNS, L2TP_MSG_CDN, 0, &m));
	ck_assert_uint_eq(m.result.result, L2TP_CDN_NO_RESOURCES_PERM);
	ck_assert_int_eq(h->end[LAC].n_sess, 0);
	ck_assert_int_eq(h->end[LNS].n_sess, 0);
	h_free(h);
}
END_TEST

/* ------------------------------------------------------------------ */
/* session tie breaker (5.4.4) */

static const struct {
	bool t0, t1;
	uint64_t v0, v1;
	int winner;		/* 0, 1, or -1: nobody */
} sties[] = {
	{ true, true, 1, 2, 0 },
	{ true, true, 9, 2, 1 },
	{ true, false, 5, 0, 0 },
	{ false, true, 0, 5, 1 },
	{ true, true, 3, 3, -1 },
	{ false, false, 0, 0, -1 },
};

START_TEST(test_session_tie)
{
	struct harness *h = up(140 + _i);
	struct l2tp_sess_cfg cfg;
	struct l2tp_sess *s[2];
	struct l2tp_msg m;
	const struct h_wire *w;
	int e, one = 1, win = sties[_i].winner;

	for (e = 0; e < 2; e++) {
		l2tp_sess_cfg_init(&cfg);
		cfg.remote_end_id = (const uint8_t *)"vc-42";
		cfg.remote_end_id_len = 5;
		cfg.send_tie_breaker = e == 0 ? sties[_i].t0 : sties[_i].t1;
		cfg.tie_breaker = e == 0 ? sties[_i].v0 : sties[_i].v1;
		s[e] = l2tp_sess_open(h_cc(h, e), &cfg, NULL);
		ck_assert_ptr_nonnull(s[e]);
	}
	if (win >= 0) {
		ck_assert(h_run_until(h, cond_all_up, &one, usl_time_s(5)));
		/* the winner's call survives; the loser answered it */
		ck_assert_ptr_eq(h->end[win].sess[0], s[win]);
		ck_assert(l2tp_sess_is_initiator(s[win]));
		ck_assert_int_eq(h_count(h, !win, L2TP_MSG_ICRP), 1);
		ck_assert_int_eq(h_count(h, win, L2TP_MSG_ICRP), 0);
		w = find_for(h, win, L2TP_MSG_CDN, 0, &m);
		ck_assert_ptr_nonnull(w);
		ck_assert_uint_eq(m.result.result, L2TP_CDN_LOST_TIE_BREAKER);
		ck_assert_uint_ne(m.local_sid, 0);
		ck_assert_ptr_nonnull(h_last_sess_event(h, !win, 0, L2TP_SESS_CLOSED));
		ck_assert_uint_eq(h_last_sess_event(h, !win, 0, L2TP_SESS_CLOSED)->result,
				  L2TP_CDN_LOST_TIE_BREAKER);
	} else {
		h_run_for(h, usl_time_s(3));
		for (e = 0; e < 2; e++) {
			ck_assert_int_eq(h->end[e].n_sess, 0);
			ck_assert_ptr_nonnull(find_for(h, e, L2TP_MSG_CDN, 0, &m));
			ck_assert_uint_eq(m.result.result, L2TP_CDN_LOST_TIE_BREAKER);
		}
		ck_assert_int_eq(h_count(h, -1, L2TP_MSG_ICRP), 0);
	}
	ck_assert(h_cond_both_established(h, NULL));
	h_free(h);
}
END_TEST

/* ------------------------------------------------------------------ */
/* circuit status, WEN */

START_TEST(test_sli_circuit_status)
{
	struct harness *h = up(150);
	struct l2tp_sess *sa, *sb;
	struct l2tp_msg m;
	int one = 1;

	sa = h_open(h, LAC, L2TP_PW_ETH, 0, false, "c");
	ck_assert(h_run_until(h, cond_all_up, &one, usl_time_s(5)));
	sb = h->end[LNS].sess[0];
	ck_assert(l2tp_sess_peer_active(sb));
	ck_assert_int_eq(l2tp_sess_set_circuit_status(sa, false), 0);
	h_run_for(h, usl_time_s(1));
	ck_assert_ptr_nonnull(find_for(h, LAC, L2TP_MSG_SLI, 0, &m));
	ck_assert(l2tp_msg_has(&m, L2TP_AVP_CIRCUIT_STATUS));
	ck_assert_uint_eq(m.circuit_status & L2TP_CIRCUIT_ACTIVE, 0);
	ck_assert_uint_eq(m.remote_sid, l2tp_sess_local_sid(sb));
	ck_assert(!l2tp_sess_peer_active(sb));	/* stop sending towards it */
	ck_assert_int_eq(l2tp_sess_state(sb), L2TP_SESS_ESTABLISHED);
	ck_assert_int_eq(l2tp_sess_set_circuit_status(sa, true), 0);
	h_run_for(h, usl_time_s(1));
	ck_assert(l2tp_sess_peer_active(sb));
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_SLI), 2);
	h_free(h);
}
END_TEST

START_TEST(test_wen_counted)
{
	struct harness *h = up(151);
	struct l2tp_sess *sa, *sb;
	struct l2tp_msg m;
	struct l2tp_cc_stats st;
	int one = 1;

	sa = h_open(h, LAC, L2TP_PW_ETH, 0, false, "c");
	ck_assert(h_run_until(h, cond_all_up, &one, usl_time_s(5)));
	sb = h->end[LNS].sess[0];
	memset(&m, 0, sizeof(m));
	m.type = L2TP_MSG_WEN;
	m.local_sid = l2tp_sess_local_sid(sa);
	l2tp_msg_set(&m, L2TP_AVP_LOCAL_SESSION_ID);
	m.remote_sid = l2tp_sess_local_sid(sb);
	l2tp_msg_set(&m, L2TP_AVP_REMOTE_SESSION_ID);
	m.crc_errors = 3;
	l2tp_msg_set(&m, L2TP_AVP_CIRCUIT_ERRORS);
	h_send_msg(h, LAC, &m, 0, 0, false);
	h_run_for(h, usl_time_s(1));
	ck_assert_int_eq(h->end[LNS].n_wen, 1);
	ck_assert_uint_eq(l2tp_sess_wen_count(sb), 1);
	l2tp_cc_get_stats(h_cc(h, LNS), &st);
	ck_assert_uint_eq(st.wen_received, 1);
	ck_assert_int_eq(l2tp_sess_state(sb), L2TP_SESS_ESTABLISHED);
	h_free(h);
}
END_TEST

/* An unknown M=1 AVP in a session message clears the session: CDN 2/8. */
START_TEST(test_unknown_mandatory_in_session)
{
	struct harness *h = up(152);
	struct l2tp_sess *sa, *sb;
	struct l2tp_msg m;
	uint32_t bsid;
	int one = 1;

	sa = h_open(h, LAC, L2TP_PW_ETH, 0, false, "c");
	ck_assert(h_run_until(h, cond_all_up, &one, usl_time_s(5)));
	sb = h->end[LNS].sess[0];
	bsid = l2tp_sess_local_sid(sb);
	memset(&m, 0, sizeof(m));
	m.type = L2TP_MSG_SLI;
	m.local_sid = l2tp_sess_local_sid(sa);
	l2tp_msg_set(&m, L2TP_AVP_LOCAL_SESSION_ID);
	m.remote_sid = bsid;
	l2tp_msg_set(&m, L2TP_AVP_REMOTE_SESSION_ID);
	h_send_msg(h, LAC, &m, 0, 200, true);
	h_run_for(h, usl_time_s(1));
	ck_assert_ptr_nonnull(find_for(h, LNS, L2TP_MSG_CDN, bsid, &m));
	ck_assert_uint_eq(m.result.result, L2TP_CDN_GENERAL_ERROR);
	ck_assert_uint_eq(m.result.error, L2TP_ERR_UNKNOWN_MANDATORY_AVP);
	ck_assert_int_eq(h->end[LAC].n_sess, 0);
	ck_assert_int_eq(h->end[LNS].n_sess, 0);
	ck_assert(h_cond_both_established(h, NULL));	/* only the session goes */
	h_free(h);
}
END_TEST

/* ------------------------------------------------------------------ */
/* data plane */

static const struct { int failer; enum h_dp_mode mode; } dpf[] = {
	{ LAC, H_DP_SYNC_FAIL }, { LAC, H_DP_DEFER_FAIL }, { LAC, H_DP_RETURN_FAIL },
	{ LNS, H_DP_SYNC_FAIL }, { LNS, H_DP_DEFER_FAIL }, { LNS, H_DP_RETURN_FAIL },
};

START_TEST(test_dp_session_failure)
{
	struct harness *h = up(160 + _i);
	int f = dpf[_i].failer;
	struct l2tp_msg m;
	const struct h_event *ev;

	h->end[f].dp_session = dpf[_i].mode;
	h_open(h, LAC, L2TP_PW_ETH, 4, false, "c");
	h_run_for(h, usl_time_s(2));
	ck_assert_int_eq(h->end[f].dp_session_creates, 1);
	ck_assert_ptr_nonnull(find_for(h, f, L2TP_MSG_CDN, 0, &m));
	ck_assert_uint_eq(m.result.result, L2TP_CDN_GENERAL_ERROR);
	ck_assert_uint_eq(m.result.error, L2TP_ERR_NO_RESOURCES);
	ev = h_last_sess_event(h, f, 0, L2TP_SESS_CLOSED);
	ck_assert_ptr_nonnull(ev);
	ck_assert_ptr_nonnull(strstr(ev->text, "data plane session"));
	ck_assert_int_eq(h->end[LAC].n_sess, 0);
	ck_assert_int_eq(h->end[LNS].n_sess, 0);
	/* the LAC fails before ICCN; the LNS after it, when the LAC was up */
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_ICCN), f == LNS);
	ck_assert_int_eq(h->end[f].dp_session_deletes, 0);
	ck_assert_int_eq(h->end[!f].dp_session_live, 0);
	ck_assert(h_cond_both_established(h, NULL));
	h_free(h);
}
END_TEST

/* A deferred tunnel: sessions wait for it before asking for their own. */
START_TEST(test_session_waits_for_tunnel_dp)
{
	struct harness *h = h_new(170);
	struct l2tp_sess *s;
	int one = 1;

	h->end[LNS].dp_tunnel = H_DP_DEFER_OK;
	h->end[LNS].dp_delay = usl_time_s(3);
	h->end[LAC].dp_session = H_DP_DEFER_OK;
	h_connect(h, LAC);
	/* opened before the connection is up: wait-tunnel, then ICRQ */
	s = h_open(h, LAC, L2TP_PW_ETH, 8, false, "early");
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(l2tp_sess_state(s), L2TP_SESS_WAIT_TUNNEL);
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_ICRQ), 0);
	h_run_for(h, usl_time_s(1));
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_ICRQ), 1);
	ck_assert_int_eq(l2tp_cc_dp_state(h_cc(h, LNS)), L2TP_DP_PENDING);
	ck_assert_int_eq(h->end[LNS].dp_session_creates, 0);	/* ICCN in, tunnel not up */
	ck_assert(h_run_until(h, cond_all_up, &one, usl_time_s(5)));
	ck_assert_int_eq(h->end[LNS].dp_session_creates, 1);
	h_free(h);
}
END_TEST

/* Answered before the tunnel's data plane was up: prepared once it is. */
START_TEST(test_prepare_waits_for_tunnel_dp)
{
	struct harness *h = h_new(172);
	struct l2tp_sess *sb;
	int one = 1;

	h->end[LNS].dp_tunnel = H_DP_DEFER_OK;
	h->end[LNS].dp_delay = usl_time_s(3);
	h->end[LNS].dp_prepare = true;
	h->end[LAC].dp_session = H_DP_DEFER_OK;	/* its ICCN comes at 10 s */
	h->end[LAC].dp_delay = usl_time_s(10);
	h_connect(h, LAC);
	h_open(h, LAC, L2TP_PW_ETH, 8, false, "early");
	h_run_for(h, usl_time_s(1));
	ck_assert_int_eq(h->end[LNS].n_sess, 1);
	sb = h->end[LNS].sess[0];
	ck_assert_int_eq(l2tp_sess_state(sb), L2TP_SESS_WAIT_CONNECT);
	ck_assert_int_eq(h->end[LNS].dp_session_prepares, 0);	/* no tunnel to put it in */
	h_run_for(h, usl_time_s(3));
	ck_assert_int_eq(l2tp_cc_dp_state(h_cc(h, LNS)), L2TP_DP_UP);
	ck_assert_int_eq(h->end[LNS].dp_session_prepares, 1);
	ck_assert_int_eq(l2tp_sess_dp_state(sb), L2TP_DP_PREPARED);
	ck_assert_int_eq(h->end[LNS].dp_session_creates, 0);
	ck_assert(h_run_until(h, cond_all_up, &one, usl_time_s(15)));
	ck_assert_int_eq(h->end[LNS].dp_session_creates, 1);
	ck_assert_int_eq(h->end[LNS].n_prepared, 0);
	h_free(h);
}
END_TEST

/* A call that never completes is cleared by the setup guard: CDN 16. */
START_TEST(test_setup_timeout)
{
	struct harness *h = up(171);
	struct l2tp_sess *s;
	const struct h_event *ev;
	const struct h_wire *rq;
	struct l2tp_msg m;
	uint32_t sid;

	h->end[LAC].dp_session = H_DP_DEFER_OK;
	h->end[LAC].dp_delay = usl_time_s(100);	/* the LAC's call never gets placed */
	h->end[LNS].cfg.sess_setup_timeout = USL_TIME_NEVER;
	/* a cc config change applies to new connections only: set the engine's copy */
	((struct l2tp_cc_cfg *)l2tp_cc_cfg(h_cc(h, LNS)))->sess_setup_timeout = USL_TIME_NEVER;
	s = h_open(h, LAC, L2TP_PW_ETH, 0, false, "slow");
	sid = l2tp_sess_local_sid(s);
	rq = h_find(h, LAC, L2TP_MSG_ICRQ, 0);
	h_run_for(h, usl_time_s(70));
	ev = h_last_sess_event(h, LAC, sid, L2TP_SESS_CLOSED);
	ck_assert_ptr_nonnull(ev);
	ck_assert_uint_eq(ev->result, L2TP_CDN_FSM_ERROR);
	ck_assert_int_eq(ev->t.ns, usl_time_add(rq->t, usl_time_s(60)).ns);
	ck_assert_ptr_nonnull(find_for(h, LAC, L2TP_MSG_CDN, sid, &m));
	ck_assert_uint_eq(m.result.result, L2TP_CDN_FSM_ERROR);
	ck_assert_int_eq(h->end[LAC].dp_session_deletes, 1);	/* the pending create is cancelled */
	ck_assert_int_eq(h->end[LNS].n_sess, 0);
	h_free(h);
}
END_TEST

static bool drop_from(struct harness *h, const struct h_wire *w, unsigned nth, void *arg)
{
	(void)h;
	(void)nth;
	return arg != NULL && w->from == *(int *)arg;
}

/*
 * A peer that advertises a large window but takes less (freeRtr: 1024, and
 * 8 of ours at once drop its connection): tx_window_max keeps ours below
 * it.  Sixteen calls first (the congestion window opens), then eight more
 * while the peer acknowledges nothing: with a cap of 3, 3 ICRQs go out and
 * 5 wait; without one all 8 go.
 */
static const struct { uint16_t cap; int sent; } txwins[] = { { 3, 3 }, { 0, 8 }, { 2000, 8 } };

START_TEST(test_tx_window_max)
{
	static const char *const names[] = {
		"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9", "c10", "c11",
		"c12", "c13", "c14", "c15", "c16", "c17", "c18", "c19", "c20", "c21", "c22", "c23",
	};
	struct harness *h = h_new(181);
	struct l2tp_cc_stats st;
	int silent = -1, n, before, i;

	h->end[LAC].cfg.hello_interval = USL_TIME_NEVER;
	h->end[LNS].cfg.hello_interval = USL_TIME_NEVER;
	h->end[LNS].cfg.rx_window = 1024;
	h->end[LAC].cfg.tx_window_max = txwins[_i].cap;
	h->drop = drop_from;
	h->drop_arg = &silent;
	h_connect(h, LAC);
	ck_assert(h_run_until(h, h_cond_both_established, NULL, usl_time_s(5)));
	for (i = 0; i < 16; i++)
		h_open(h, LAC, L2TP_PW_ETH, 0, false, names[i]);
	n = 16;
	ck_assert(h_run_until(h, cond_all_up, &n, usl_time_s(30)));
	h_run_for(h, usl_time_s(1));	/* everything acknowledged */
	silent = LNS;
	before = h_count(h, LAC, L2TP_MSG_ICRQ);
	for (i = 16; i < 24; i++)
		h_open(h, LAC, L2TP_PW_ETH, 0, false, names[i]);
	h_run_for(h, usl_time_ms(500));	/* before any retransmission */
	ck_assert_int_eq(h_count(h, LAC, L2TP_MSG_ICRQ) - before, txwins[_i].sent);
	l2tp_cc_get_stats(h_cc(h, LAC), &st);
	ck_assert_uint_eq(st.peer_rx_window, 1024);
	ck_assert_uint_eq(st.tx_window, txwins[_i].cap == 3 ? 3 : 1024);
	ck_assert_uint_eq(st.in_flight, txwins[_i].sent);
	ck_assert_uint_eq(st.queued, 8 - txwins[_i].sent);
	/* the peer answers again: every call goes out, none lost */
	silent = -1;
	n = 24;
	ck_assert(h_run_until(h, cond_all_up, &n, usl_time_s(60)));
	h_free(h);
}
END_TEST

/* ------------------------------------------------------------------ */
/* the connection goes: so do its sessions */

START_TEST(test_cc_teardown_clears_sessions)
{
	struct harness *h = up(180 + _i);
	int i, e, n = 5;
	struct l2tp_cc_stats st;
	char id[16];

	for (i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "c%d", i);
		ck_assert_ptr_nonnull(h_open(h, i % 2, L2TP_PW_ETH, 8, i == 3, id));
	}
	ck_assert(h_run_until(h, cond_all_up, &n, usl_time_s(5)));
	h->end[LNS].free_on_close = true;
	if (_i == 0)
		l2tp_cc_close(h_cc(h, LAC), L2TP_STOPCCN_NORMAL, 0, NULL);
	else
		l2tp_cc_free(h_cc(h, LAC));	/* the daemon drops it outright */
	if (_i == 1)
		h->end[LAC].n_cc = 0;
	ck_assert_int_eq(h->end[LAC].n_sess, 0);
	ck_assert_int_eq(h->end[LAC].n_freed, n);
	ck_assert_int_eq(h->end[LAC].dp_session_live, 0);
	ck_assert_int_eq(h->end[LAC].dp_session_deletes, n);
	h_run_for(h, usl_time_s(1));
	if (_i == 0) {
		ck_assert_int_eq(h->end[LNS].n_sess, 0);
		ck_assert_int_eq(h->end[LNS].n_freed, n);
		ck_assert_int_eq(h->end[LNS].dp_session_live, 0);
		for (e = 0; e < 2; e++) {
			l2tp_cc_get_stats(h_cc(h, e), &st);
			ck_assert_uint_eq(st.sessions, 0);
		}
		/* the LNS frees its cc from inside the closed event after the hold */
		h_run_for(h, usl_time_s(40));
		ck_assert_int_eq(h->end[LNS].n_cc, 0);
		/* StopCCN clears them: no CDN is sent */
		ck_assert_int_eq(h_count(h, -1, L2TP_MSG_CDN), 0);
		ck_assert_uint_eq(h_last_sess_event(h, LNS, 0, L2TP_SESS_CLOSED)->error,
				  L2TP_ERR_NO_CONTROL_CONNECTION);
	}
	h_free(h);
}
END_TEST

/* The daemon frees the whole connection from inside a session's event. */
START_TEST(test_free_cc_inside_sess_event)
{
	struct harness *h = up(190);
	int i, n = 4;
	char id[16];

	for (i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "c%d", i);
		ck_assert_ptr_nonnull(h_open(h, LAC, L2TP_PW_ETH, 4, false, id));
	}
	ck_assert(h_run_until(h, cond_all_up, &n, usl_time_s(5)));
	h->end[LNS].free_on_sess_close = true;
	l2tp_sess_close(h->end[LAC].sess[0], L2TP_CDN_ADMIN, 0, NULL);
	h_run_for(h, usl_time_s(1));
	ck_assert_int_eq(h->end[LNS].n_cc, 0);
	ck_assert_int_eq(h->end[LNS].n_sess, 0);
	ck_assert_int_eq(h->end[LNS].n_freed, n);
	ck_assert_int_eq(h->end[LNS].dp_session_live, 0);
	ck_assert_int_eq(h->end[LNS].dp_tunnel_live, 0);
	/* the LAC, left alone, finds out through its HELLO... here: its next message */
	ck_assert_ptr_nonnull(h_open(h, LAC, L2TP_PW_ETH, 4, false, "late"));
	h_run_for(h, usl_time_s(80));
	ck_assert_int_eq(l2tp_cc_state(h_cc(h, LAC)), L2TP_CC_CLOSED);
	ck_assert_int_eq(h->end[LAC].n_sess, 0);
	h_free(h);
}
END_TEST

/*
 * Chaos: loss, duplicates and reordering while calls open and close from
 * both ends, then the connection goes.  Nothing may leak or dangle.
 */
START_TEST(test_chaos)
{
	struct harness *h = h_new(200 + _i);
	int i, e, step, opened[2] = { 0, 0 };
	char id[16];
	uint64_t r = 0x1234 + _i;

	h->loss_pct = 15;
	h->dup_pct = 10;
	h->reorder_pct = 20;
	h->end[LNS].dp_session = H_DP_DEFER_OK;
	h->end[LAC].dp_session = _i % 2 ? H_DP_DEFER_OK : H_DP_SYNC_OK;
	h->end[LNS].accept_cfg.cookie_len = 4;
	h_connect(h, LAC);
	ck_assert(h_run_until(h, h_cond_both_established, NULL, usl_time_s(60)));
	for (step = 0; step < 60; step++) {
		r = r * 6364136223846793005ULL + 1442695040888963407ULL;
		e = (int)((r >> 33) % 2);
		if ((r >> 40) % 3 != 0 || h->end[e].n_sess == 0) {
			snprintf(id, sizeof(id), "x%d", step);
			if (h_open(h, e, L2TP_PW_ETH, (uint8_t)((r >> 50) % 2 ? 8 : 0),
				   (r >> 45) % 4 == 0, id) != NULL)
				opened[e]++;
		} else {
			i = (int)((r >> 20) % (uint64_t)h->end[e].n_sess);
			l2tp_sess_close(h->end[e].sess[i], L2TP_CDN_ADMIN, 0, "chaos");
		}
		h_run_for(h, usl_time_ms((int64_t)((r >> 24) % 700)));
	}
	h_run_for(h, usl_time_s(90));
	for (e = 0; e < 2; e++)
		ck_assert_int_eq(l2tp_cc_state(h_cc(h, e)), L2TP_CC_ESTABLISHED);
	l2tp_cc_close(h_cc(h, _i % 2), L2TP_STOPCCN_NORMAL, 0, NULL);
	h_run_for(h, usl_time_s(120));
	for (e = 0; e < 2; e++) {
		ck_assert_int_eq(l2tp_cc_state(h_cc(h, e)), L2TP_CC_CLOSED);
		ck_assert_int_eq(h->end[e].n_sess, 0);
		ck_assert_int_eq(h->end[e].dp_session_live, 0);
		ck_assert_int_eq(h->end[e].dp_tunnel_live, 0);
	}
	ck_assert_int_gt(opened[0] + opened[1], 10);
	h_free(h);
}
END_TEST

/* ------------------------------------------------------------------ */
/* bring-up under loss */

static bool cond_lns_cc(struct harness *h, void *arg)
{
	return h->end[LNS].n_cc > 0;
}

static const struct { unsigned loss; uint64_t seed; } lossy[] = {
	{ 10, 1 }, { 10, 2 }, { 10, 3 }, { 30, 4 }, { 30, 5 }, { 30, 6 },
};

START_TEST(test_sessions_under_loss)
{
	struct harness *h = h_new(lossy[_i].seed);
	int i, n = 20;
	bool ok;
	char id[16];

	h->loss_pct = lossy[_i].loss;
	h->reorder_pct = lossy[_i].loss;
	h->dup_pct = lossy[_i].loss / 3;
	h->end[LAC].cfg.hello_interval = USL_TIME_NEVER;
	h->end[LNS].cfg.hello_interval = USL_TIME_NEVER;
	h->end[LNS].dp_session = H_DP_DEFER_OK;
	h->end[LNS].accept_cfg.cookie_len = 8;
	h_connect(h, LAC);
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "c%d", i);
		if (i % 3 != 2)
			ck_assert_ptr_nonnull(h_open(h, LAC, L2TP_PW_ETH, 8, i % 4 == 0, id));
	}
	/* the LNS's calls wait for its own cc, which exists once the SCCRQ arrives */
	ck_assert(h_run_until(h, cond_lns_cc, NULL, usl_time_s(60)));
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "c%d", i);
		if (i % 3 == 2)
			ck_assert_ptr_nonnull(h_open(h, LNS, L2TP_PW_ETH, 8, i % 4 == 0, id));
	}
	ok = h_run_until(h, cond_all_up, &n, usl_time_s(120));
	if (!ok)
		h_dump(h);
	ck_assert_msg(ok, "sessions not up with %u%% loss", lossy[_i].loss);
	for (i = 0; i < h->end[LAC].n_sess; i++)
		ck_assert_ptr_nonnull(h_peer_of(h, LNS, h->end[LAC].sess[i]));
	ck_assert_int_eq(h_count(h, -1, L2TP_MSG_CDN), 0);
	ck_assert_int_eq(h->end[LAC].dp_session_live, n);
	ck_assert_int_eq(h->end[LNS].dp_session_live, n);
	h_free(h);
}
END_TEST

static Suite *sess_suite(void)
{
	Suite *s = suite_create("sess");
	TCase *tc = tcase_create("calls");

	tcase_add_loop_test(tc, test_call, 0, sizeof(calls) / sizeof(calls[0]));
	tcase_add_loop_test(tc, test_cdn, 0, 2);
	tcase_add_loop_test(tc, test_call_prepared, 0, sizeof(calls) / sizeof(calls[0]));
	tcase_add_loop_test(tc, test_prepared_call_unconnected, 0,
			    sizeof(unconnected) / sizeof(unconnected[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("refusals");
	tcase_add_test(tc, test_pw_type_refused);
	tcase_add_test(tc, test_seq_without_l2ss);
	tcase_add_test(tc, test_l2ss_agreed);
	tcase_add_test(tc, test_l2ss_unsupported);
	tcase_add_test(tc, test_daemon_refuses);
	tcase_add_loop_test(tc, test_session_tie, 0, sizeof(sties) / sizeof(sties[0]));
	tcase_add_test(tc, test_unknown_mandatory_in_session);
	suite_add_tcase(s, tc);

	tc = tcase_create("status");
	tcase_add_test(tc, test_sli_circuit_status);
	tcase_add_test(tc, test_wen_counted);
	suite_add_tcase(s, tc);

	tc = tcase_create("dataplane");
	tcase_add_loop_test(tc, test_dp_session_failure, 0, sizeof(dpf) / sizeof(dpf[0]));
	tcase_add_test(tc, test_session_waits_for_tunnel_dp);
	tcase_add_test(tc, test_prepare_waits_for_tunnel_dp);
	tcase_add_test(tc, test_setup_timeout);
	tcase_add_loop_test(tc, test_tx_window_max, 0, sizeof(txwins) / sizeof(txwins[0]));
	tcase_add_loop_test(tc, test_cc_teardown_clears_sessions, 0, 2);
	tcase_add_test(tc, test_free_cc_inside_sess_event);
	suite_add_tcase(s, tc);

	tc = tcase_create("loss");
	tcase_add_loop_test(tc, test_sessions_under_loss, 0, sizeof(lossy) / sizeof(lossy[0]));
	tcase_add_loop_test(tc, test_chaos, 0, 6);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sess_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
