/* usl/time.c - the monotonic clock and the fake clock for tests. */
#include <time.h>

#include "time.h"

static usl_time monotonic_now(const struct usl_clock *c)
{
	struct timespec ts;

	/* Cannot fail with a valid clock id and pointer on Linux. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return usl_time_ns((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
}

const struct usl_clock usl_clock_monotonic = { monotonic_now };

static usl_time fake_now(const struct usl_clock *c)
{
	const struct usl_fake_clock *fc = (const struct usl_fake_clock *)c;

	return fc->now;
}

void usl_fake_clock_init(struct usl_fake_clock *fc, usl_time start)
{
	fc->clock.now = fake_now;
	fc->now = start;
}
