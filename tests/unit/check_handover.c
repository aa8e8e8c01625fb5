/*
 * tests/unit/check_handover.c - an established connection saved and made
 * again (l2tp_cc_save / l2tp_cc_restore, the restart handover), through two
 * engines back to back: the restored end goes on as if nothing happened
 * (sessions, authentication, sequence numbers, a message in flight), and a
 * truncated or corrupted record is refused without leaking or crashing.
 * Also usl/pack's reader on malformed input.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "usl/pack.h"
#include "engine_harness.h"

#define LAC 0
#define LNS 1

static struct harness *up_with_sessions(uint64_t seed, int n)
{
	struct harness *h = h_new(seed);
	char id[16];

	h_set_auth(h, LAC, "s3cret", L2TP_DIGEST_HMAC_MD5);
	h_set_auth(h, LNS, "s3cret", L2TP_DIGEST_HMAC_MD5);
	h->end[LAC].cfg.hello_interval = usl_time_s(10);
	h->end[LNS].cfg.hello_interval = usl_time_s(10);
	h->end[LNS].accept_cfg.cookie_len = 8;
	h_connect(h, LAC);
	ck_assert(h_run_until(h, h_cond_both_established, NULL, usl_time_s(5)));
	for (int i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "pw-%d", i);
		ck_assert_ptr_nonnull(h_open(h, LAC, L2TP_PW_ETH, 4, false, id));
	}
	h_run_for(h, usl_time_s(2));
	ck_assert_int_eq(h->end[LNS].n_sess, n);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(l2tp_sess_state(h->end[LNS].sess[i]), L2TP_SESS_ESTABLISHED);
	return h;
}

/* Saves end e's connection, frees it, and puts the restored one in its place. */
static void save_and_restore(struct harness *h, int e, struct usl_pack *w)
{
	struct l2tp_cc *old = h_cc(h, e), *cc;
	const struct l2tp_cc_ops *ops = old->ops;
	void *user = l2tp_cc_user(old);
	uint32_t sids[H_MAX_SESS];
	void *users[H_MAX_SESS];
	struct usl_unpack r;
	int n = h->end[e].n_sess;

	for (int i = 0; i < n; i++) {
		sids[i] = l2tp_sess_local_sid(h->end[e].sess[i]);
		users[i] = l2tp_sess_user(h->end[e].sess[i]);
	}
	usl_pack_init(w);
	ck_assert_int_eq(l2tp_cc_save(old, w), 0);
	ck_assert(!w->failed);
	l2tp_cc_discard_restored(old);
	usl_unpack_init(&r, w->p, w->len);
	cc = l2tp_cc_restore(&r, ops, &h->ts, user);
	ck_assert_ptr_nonnull(cc);
	ck_assert_uint_eq(usl_unpack_left(&r), 0);
	h->end[e].cc[0] = cc;
	for (int i = 0; i < n; i++) {
		h->end[e].sess[i] = l2tp_cc_find_session(cc, sids[i]);
		ck_assert_ptr_nonnull(h->end[e].sess[i]);
		l2tp_sess_set_user(h->end[e].sess[i], users[i]);
	}
}

START_TEST(test_roundtrip_goes_on)
{
	struct harness *h = up_with_sessions(1, 3);
	struct l2tp_cc_stats before, after;
	struct usl_pack w;
	uint8_t cl, pcl;
	const uint8_t *ck;
	uint32_t peer_sid[3];
	uint8_t cookie[3][8];
	int hellos;

	for (int i = 0; i < 3; i++) {
		peer_sid[i] = l2tp_sess_remote_sid(h->end[LNS].sess[i]);
		ck = l2tp_sess_cookie(h->end[LNS].sess[i], &cl);
		ck_assert_uint_eq(cl, 8);
		memcpy(cookie[i], ck, 8);
	}
	l2tp_cc_get_stats(h_cc(h, LNS), &before);
	save_and_restore(h, LNS, &w);
	usl_pack_free(&w);
	l2tp_cc_get_stats(h_cc(h, LNS), &after);
	ck_assert_int_eq(l2tp_cc_state(h_cc(h, LNS)), L2TP_CC_ESTABLISHED);
	ck_assert_int_eq(l2tp_cc_dp_state(h_cc(h, LNS)), L2TP_DP_UP);
	ck_assert_uint_eq(after.next_ns, before.next_ns);
	ck_assert_uint_eq(after.next_nr, before.next_nr);
	ck_assert_uint_eq(after.sessions, 3);
	ck_assert(memcmp(after.rx_msgs, before.rx_msgs, sizeof(before.rx_msgs)) == 0);
	ck_assert(memcmp(after.tx_msgs, before.tx_msgs, sizeof(before.tx_msgs)) == 0);
	ck_assert(l2tp_cc_auth_on(h_cc(h, LNS)));
	ck_assert_str_eq(l2tp_cc_peer_host_name(h_cc(h, LNS)), l2tp_cc_cfg(h_cc(h, LAC))->host_name);
	for (int i = 0; i < 3; i++) {
		struct l2tp_sess *s = h->end[LNS].sess[i];

		ck_assert_int_eq(l2tp_sess_state(s), L2TP_SESS_ESTABLISHED);
		ck_assert_uint_eq(l2tp_sess_remote_sid(s), peer_sid[i]);
		ck = l2tp_sess_cookie(s, &cl);
		ck_assert_uint_eq(cl, 8);
		ck_assert(memcmp(ck, cookie[i], 8) == 0);
		l2tp_sess_peer_cookie(s, &pcl);
		ck_assert_uint_eq(pcl, 4);
	}

	/* a new session from the LAC: the restored end answers, signed */
	ck_assert_ptr_nonnull(h_open(h, LAC, L2TP_PW_ETH, 0, false, "after"));
	h_run_for(h, usl_time_s(2));
	ck_assert_int_eq(h->end[LNS].n_sess, 4);
	ck_assert_int_eq(l2tp_sess_state(h->end[LNS].sess[3]), L2TP_SESS_ESTABLISHED);
	ck_assert_int_eq(l2tp_sess_state(h->end[LAC].sess[3]), L2TP_SESS_ESTABLISHED);
	/* a CDN from the restored end clears the right session on the LAC */
	peer_sid[1] = l2tp_sess_remote_sid(h->end[LNS].sess[1]);
	ck_assert_ptr_nonnull(l2tp_cc_find_session(h_cc(h, LAC), peer_sid[1]));
	l2tp_sess_close(h->end[LNS].sess[1], L2TP_CDN_ADMIN, 0, "bye");
	h_run_for(h, usl_time_s(2));
	ck_assert_ptr_null(l2tp_cc_find_session(h_cc(h, LAC), peer_sid[1]));
	l2tp_cc_get_stats(h_cc(h, LAC), &after);
	ck_assert_uint_eq(after.sessions, 3);
	/* HELLOs go on both ways and nothing goes down */
	hellos = h_count(h, LNS, L2TP_MSG_HELLO);
	h_run_for(h, usl_time_s(40));
	ck_assert_int_gt(h_count(h, LNS, L2TP_MSG_HELLO), hellos);
	ck_assert_int_eq(l2tp_cc_state(h_cc(h, LNS)), L2TP_CC_ESTABLISHED);
	ck_assert_int_eq(l2tp_cc_state(h_cc(h, LAC)), L2TP_CC_ESTABLISHED);
	ck_assert_int_eq(h_count(h, -1, L2TP_MSG_STOPCCN), 0);
	h_free(h);
}
END_TEST

/* A message in flight when the state is saved is sent again by the restored end. */
START_TEST(test_in_flight_delivered)
{
	struct harness *h = up_with_sessions(2, 1);
	struct l2tp_cc_stats st;
	struct usl_pack w;
	int lac_hellos_in;

	h->loss_pct = 100;
	ck_assert_int_eq(l2tp_cc_probe(h_cc(h, LNS), 5, NULL), 0);
	h_run_for(h, usl_time_ms(100));
	l2tp_cc_get_stats(h_cc(h, LNS), &st);
	ck_assert_uint_eq(st.in_flight, 1);
	save_and_restore(h, LNS, &w);
	usl_pack_free(&w);
	l2tp_cc_get_stats(h_cc(h, LNS), &st);
	ck_assert_uint_eq(st.in_flight, 1);
	h->loss_pct = 0;
	l2tp_cc_get_stats(h_cc(h, LAC), &st);
	lac_hellos_in = (int)st.rx_msgs[L2TP_MSG_HELLO];
	h_run_for(h, usl_time_s(3));
	l2tp_cc_get_stats(h_cc(h, LAC), &st);
	ck_assert_int_eq((int)st.rx_msgs[L2TP_MSG_HELLO], lac_hellos_in + 1);
	l2tp_cc_get_stats(h_cc(h, LNS), &st);
	ck_assert_uint_eq(st.in_flight, 0);
	ck_assert_int_eq(l2tp_cc_state(h_cc(h, LNS)), L2TP_CC_ESTABLISHED);
	h_free(h);
}
END_TEST

START_TEST(test_not_established_not_saved)
{
	struct harness *h = h_new(3);
	struct usl_pack w;

	h->loss_pct = 100;
	h_connect(h, LAC);
	usl_pack_init(&w);
	errno = 0;
	ck_assert_int_eq(l2tp_cc_save(h_cc(h, LAC), &w), -1);
	ck_assert_int_eq(errno, EBUSY);
	usl_pack_free(&w);
	h_free(h);
}
END_TEST

static struct usl_pack saved;

/* No daemon behind the restored connection: nothing may be sent or asked. */
static int bare_send(struct l2tp_cc *cc, const uint8_t *buf, size_t len)
{
	(void)cc;
	(void)buf;
	(void)len;
	ck_abort_msg("a restored connection sent a message while being restored");
	return -1;
}
static const struct l2tp_cc_ops bare_ops = { .send = bare_send };
static const struct l2tp_cc_ops *saved_ops = &bare_ops;

static void save_one(void)
{
	struct harness *h = up_with_sessions(4, 2);

	usl_pack_init(&saved);
	ck_assert_int_eq(l2tp_cc_save(h_cc(h, LNS), &saved), 0);
	h_free(h);
}

/* Every proper prefix is refused: nothing half-made, nothing leaked (ASan, valgrind). */
START_TEST(test_truncated_refused)
{
	struct usl_timerset ts;
	struct usl_fake_clock fc;

	save_one();
	usl_fake_clock_init(&fc, usl_time_s(100));
	usl_timerset_init(&ts, &fc.clock);
	for (size_t len = 0; len < saved.len; len++) {
		struct usl_unpack r;

		usl_unpack_init(&r, saved.p, len);
		ck_assert_msg(l2tp_cc_restore(&r, saved_ops, &ts, NULL) == NULL,
			      "a record cut at %zu of %zu bytes was taken", len, saved.len);
		ck_assert(r.bad);
	}
	ck_assert_uint_eq(usl_timerset_count(&ts), 0);
	usl_pack_free(&saved);
}
END_TEST

/* Any byte flipped: refused, or taken as a connection that can be freed. */
START_TEST(test_corrupt_survived)
{
	struct usl_timerset ts;
	struct usl_fake_clock fc;
	uint8_t *copy;

	save_one();
	copy = malloc(saved.len);
	usl_fake_clock_init(&fc, usl_time_s(100));
	usl_timerset_init(&ts, &fc.clock);
	for (size_t i = 0; i < saved.len; i++) {
		static const uint8_t flips[] = { 0x01, 0x80, 0xff };

		for (size_t f = 0; f < sizeof(flips); f++) {
			struct usl_unpack r;
			struct l2tp_cc *cc;

			memcpy(copy, saved.p, saved.len);
			copy[i] ^= flips[f];
			usl_unpack_init(&r, copy, saved.len);
			cc = l2tp_cc_restore(&r, saved_ops, &ts, NULL);
			if (cc != NULL)
				l2tp_cc_discard_restored(cc);
		}
	}
	ck_assert_uint_eq(usl_timerset_count(&ts), 0);
	free(copy);
	usl_pack_free(&saved);
}
END_TEST

START_TEST(test_pack_reader)
{
	struct usl_pack w;
	struct usl_unpack r;
	bool was_null;
	char buf[4], *s;
	size_t n;

	usl_pack_init(&w);
	usl_pack_str(&w, NULL);
	usl_pack_str(&w, "abc");
	usl_pack_u8(&w, 2);		/* not a bool */
	ck_assert(!w.failed);
	usl_unpack_init(&r, w.p, w.len);
	ck_assert_ptr_null(usl_unpack_str(&r, 10, &was_null));
	ck_assert(was_null && !r.bad);
	s = usl_unpack_str(&r, 10, NULL);
	ck_assert_str_eq(s, "abc");
	free(s);
	usl_unpack_bool(&r);
	ck_assert(r.bad);
	ck_assert_uint_eq(usl_unpack_u32(&r), 0);	/* sticky */

	/* too long for its limit, a NUL inside, a blob past the end */
	usl_unpack_init(&r, w.p + 4, w.len - 4);
	ck_assert_ptr_null(usl_unpack_str(&r, 2, NULL));
	ck_assert(r.bad);
	usl_unpack_init(&r, w.p + 4, w.len - 4);
	ck_assert(!usl_unpack_str_to(&r, buf, 3));
	usl_pack_free(&w);
	usl_pack_init(&w);
	usl_pack_blob(&w, "a\0b", 3);
	usl_unpack_init(&r, w.p, w.len);
	ck_assert_ptr_null(usl_unpack_str(&r, 10, NULL));
	ck_assert(r.bad);
	usl_unpack_init(&r, w.p, w.len - 1);
	ck_assert_ptr_null(usl_unpack_blob(&r, &n));
	ck_assert(r.bad && n == 0);
	usl_pack_free(&w);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("handover");
	TCase *tc = tcase_create("engine");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_roundtrip_goes_on);
	tcase_add_test(tc, test_in_flight_delivered);
	tcase_add_test(tc, test_not_established_not_saved);
	tcase_add_test(tc, test_truncated_refused);
	tcase_add_test(tc, test_corrupt_survived);
	tcase_add_test(tc, test_pack_reader);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
