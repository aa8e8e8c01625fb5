/*
 * tests/fuzz/fuzz_restore.c - libFuzzer target for the restart handover's
 * reader: a saved control connection (l2tp_cc_restore, with its reliable
 * layer, authentication and sessions) made again from arbitrary bytes.
 *
 * Oracles, each an abort(): a restore must not send anything or call the
 * daemon; what it returns must be freeable with no timer left armed; no
 * sanitizer report; no leak.  Seeded with real saved connections
 * (tests/fuzz/restore-seed.c).
 */
#include <stdint.h>
#include <stdlib.h>

#include "usl/pack.h"
#include "usl/time.h"
#include "usl/timer.h"
#include "proto/cc.h"

static int no_send(struct l2tp_cc *cc, const uint8_t *buf, size_t len)
{
	(void)cc;
	(void)buf;
	(void)len;
	abort();	/* restoring sends nothing */
}

static const struct l2tp_cc_ops ops = { .send = no_send };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct usl_fake_clock fc;
	struct usl_timerset ts;
	struct usl_unpack r;
	struct l2tp_cc *cc;

	usl_fake_clock_init(&fc, usl_time_s(1000));
	usl_timerset_init(&ts, &fc.clock);
	usl_unpack_init(&r, data, size);
	cc = l2tp_cc_restore(&r, &ops, &ts, NULL);
	if (cc == NULL && !r.bad)
		abort();	/* a refusal always says the input was bad */
	if (cc != NULL)
		l2tp_cc_discard_restored(cc);
	if (usl_timerset_count(&ts) != 0)
		abort();
	return 0;
}
