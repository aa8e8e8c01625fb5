/*
 * usl/time.h - a monotonic time value whose unit cannot be mixed up.
 * It is a struct on purpose: plain integers of seconds, ms and ns do not mix.
 */
#ifndef USL_TIME_H
#define USL_TIME_H

#include <stdbool.h>
#include <stdint.h>

typedef struct usl_time {
	int64_t ns;
} usl_time;

#define USL_TIME_NEVER ((usl_time){ INT64_MAX })

static inline usl_time usl_time_ns(int64_t ns) { return (usl_time){ ns }; }
static inline usl_time usl_time_ms(int64_t ms) { return (usl_time){ ms * 1000000 }; }
static inline usl_time usl_time_s(int64_t s) { return (usl_time){ s * 1000000000 }; }
static inline int64_t usl_time_to_ms(usl_time t) { return t.ns / 1000000; }
static inline int64_t usl_time_to_us(usl_time t) { return t.ns / 1000; }
static inline usl_time usl_time_add(usl_time a, usl_time b)
{
	return (a.ns > INT64_MAX - b.ns) ? USL_TIME_NEVER : (usl_time){ a.ns + b.ns };
}
static inline usl_time usl_time_sub(usl_time a, usl_time b) { return (usl_time){ a.ns - b.ns }; }
static inline int usl_time_cmp(usl_time a, usl_time b) { return (a.ns > b.ns) - (a.ns < b.ns); }
static inline bool usl_time_is_never(usl_time t) { return t.ns == INT64_MAX; }

/*
 * A clock.  The daemon's loop uses the coarse monotonic one; tests use a
 * fake clock they advance by hand, so timer logic is tested without
 * sleeping.  lag is how far behind the true time a reading may be (NULL:
 * never behind): whoever sleeps until a reading reaches a deadline must
 * sleep that much longer.
 */
struct usl_clock {
	usl_time (*now)(const struct usl_clock *c);
	usl_time (*lag)(const struct usl_clock *c);
};

extern const struct usl_clock usl_clock_monotonic;
/*
 * CLOCK_MONOTONIC_COARSE: the same time line as usl_clock_monotonic, as of
 * the kernel's last tick (1-10 ms behind).  It is read from the vDSO page
 * whatever the clocksource, where CLOCK_MONOTONIC is a system call on
 * clocksources without vDSO support (HPET, acpi_pm: many virtual machines).
 */
extern const struct usl_clock usl_clock_coarse;

struct usl_fake_clock {
	struct usl_clock clock;
	usl_time now;
};

void usl_fake_clock_init(struct usl_fake_clock *fc, usl_time start);
static inline usl_time usl_clock_now(const struct usl_clock *c) { return c->now(c); }
static inline usl_time usl_clock_lag(const struct usl_clock *c)
{
	return c->lag ? c->lag(c) : usl_time_ns(0);
}

/*
 * A wait on a peer that answers in many parts (a netlink dump): it gives
 * up after `quiet` without a part, or after `max` in all.  A long answer
 * that keeps coming is waited for; a silent peer is not.
 */
struct usl_progress_wait {
	usl_time started, heard;
	usl_time quiet, max;
};

static inline void usl_progress_wait_start(struct usl_progress_wait *w, usl_time now,
					   usl_time quiet, usl_time max)
{
	*w = (struct usl_progress_wait){ now, now, quiet, max };
}

static inline void usl_progress_wait_heard(struct usl_progress_wait *w, usl_time now)
{
	w->heard = now;
}

/* How long the wait may go on from now (<= 0: give up). */
static inline usl_time usl_progress_wait_left(const struct usl_progress_wait *w, usl_time now)
{
	usl_time quiet_by = usl_time_add(w->heard, w->quiet);
	usl_time max_by = usl_time_add(w->started, w->max);

	return usl_time_sub(usl_time_cmp(quiet_by, max_by) < 0 ? quiet_by : max_by, now);
}

#endif
