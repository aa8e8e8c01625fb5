/* usl/time.c - the monotonic clocks and the fake clock for tests. */
#include <time.h>

#include "time.h"

static usl_time monotonic_now(const struct usl_clock *c)
{
	struct timespec ts;

	/* Cannot fail with a valid clock id and pointer on Linux. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return usl_time_ns((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
}

const struct usl_clock usl_clock_monotonic = { monotonic_now, NULL };

static usl_time coarse_now(const struct usl_clock *c)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return usl_time_ns((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
}

/* The tick: clock_getres() reports it for the coarse clocks (a system call: once). */
static usl_time coarse_lag(const struct usl_clock *c)
{
	static int64_t tick_ns = -1;
	struct timespec ts;

	if (tick_ns < 0)
		tick_ns = clock_getres(CLOCK_MONOTONIC_COARSE, &ts) == 0 ?
			  (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec : 10000000;
	return usl_time_ns(tick_ns);
}

const struct usl_clock usl_clock_coarse = { coarse_now, coarse_lag };

static usl_time fake_now(const struct usl_clock *c)
{
	const struct usl_fake_clock *fc = (const struct usl_fake_clock *)c;

	return fc->now;
}

void usl_fake_clock_init(struct usl_fake_clock *fc, usl_time start)
{
	fc->clock.now = fake_now;
	fc->clock.lag = NULL;
	fc->now = start;
}
