/*
 * tests/fuzz/restore-seed.c - writes fuzz_restore's seeds: connections saved
 * by l2tp_cc_save() after real exchanges between two engines back to back
 * (tests/unit/engine_harness.c): plain, authenticated, with sessions and
 * cookies, with a message in flight.
 *
 *   restore-seed DIR
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "usl/pack.h"
#include "engine_harness.h"

static int write_seed(const char *dir, const char *name, struct harness *h, int e)
{
	struct usl_pack w;
	char path[4096];
	FILE *f;
	int rc = -1;

	usl_pack_init(&w);
	if (l2tp_cc_save(h_cc(h, e), &w) == 0 && !w.failed) {
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		f = fopen(path, "wb");
		if (f != NULL && fwrite(w.p, 1, w.len, f) == w.len)
			rc = 0;
		if (f != NULL && fclose(f) != 0)
			rc = -1;
	}
	usl_pack_free(&w);
	return rc;
}

static struct harness *make(uint64_t seed, bool auth, int sessions)
{
	struct harness *h = h_new(seed);
	char id[16];

	if (auth) {
		h_set_auth(h, 0, "seed", L2TP_DIGEST_HMAC_SHA1);
		h_set_auth(h, 1, "seed", L2TP_DIGEST_HMAC_SHA1);
	}
	h->end[1].accept_cfg.cookie_len = 8;
	h_connect(h, 0);
	h_run_until(h, h_cond_both_established, NULL, usl_time_s(5));
	for (int i = 0; i < sessions; i++) {
		snprintf(id, sizeof(id), "seed-%d", i);
		h_open(h, 0, L2TP_PW_ETH, 4, false, id);
	}
	h_run_for(h, usl_time_s(2));
	return h;
}

static const char *seed_dir;

/* The harness asserts with check's macros: it runs inside a check test. */
START_TEST(write_seeds)
{
	const char *dir = seed_dir;
	struct harness *h;
	int rc = 0;

	h = make(1, false, 0);
	rc |= write_seed(dir, "plain", h, 0);
	h_free(h);
	h = make(2, true, 3);
	rc |= write_seed(dir, "auth-sessions-lac", h, 0);
	rc |= write_seed(dir, "auth-sessions-lns", h, 1);
	h->loss_pct = 100;
	l2tp_cc_probe(h_cc(h, 1), 3, NULL);
	h_run_for(h, usl_time_ms(10));
	rc |= write_seed(dir, "in-flight", h, 1);
	h_free(h);
	ck_assert_msg(rc == 0, "cannot write the seeds into %s", dir);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("restore-seed");
	TCase *tc = tcase_create("seeds");
	SRunner *sr;
	int failed;

	if (argc != 2) {
		fprintf(stderr, "usage: restore-seed DIR\n");
		return 2;
	}
	seed_dir = argv[1];
	tcase_add_test(tc, write_seeds);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_SILENT);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
