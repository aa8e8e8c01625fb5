/*
 * usl/timer.h - timers in an rbtree ordered by (expiry, insertion sequence).
 *
 * A timer is embedded in its owner (no malloc per arm); the callback gets
 * the timer back and finds its owner with usl_container_of().  Arm, cancel
 * and re-arm are O(log n); the earliest expiry is O(1) (cached leftmost).
 * Timers with the same expiry fire in the order they were armed.
 *
 * The set does not sleep or poll: whoever drives it (usl/loop, or a test
 * with a fake clock) asks usl_timerset_next() and calls usl_timerset_run().
 * on_change, when set, is called whenever the earliest expiry may have
 * changed, so the loop can re-arm its single libevent timer.
 */
#ifndef USL_TIMER_H
#define USL_TIMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "rbtree.h"
#include "time.h"

struct usl_timer;
struct usl_timerset;

typedef void (*usl_timer_fn)(struct usl_timer *t);

struct usl_timer {
	struct usl_rb_node node;
	usl_time expiry;
	uint64_t seq;
	usl_timer_fn fn;
	struct usl_timerset *set;	/* set it is armed in, NULL when idle */
};

/*
 * Delays worth an operator's attention, counted: the longest, and how many
 * reached 100 ms and 1 s.  A timer set counts how late its runs came (a
 * run's earliest due timer past its expiry: how long whoever drives the
 * set was kept from it); usl/loop counts how long single callbacks took.
 */
struct usl_stall {
	usl_time max;
	uint64_t over_100ms;
	uint64_t over_1s;
};

void usl_stall_count(struct usl_stall *s, usl_time d);

struct usl_timerset {
	struct usl_rb_root tree;
	uint64_t seq;
	size_t count;
	const struct usl_clock *clock;
	void (*on_change)(struct usl_timerset *ts, void *arg);
	void *on_change_arg;
	struct usl_stall late;		/* how late its runs came */
};

void usl_timerset_init(struct usl_timerset *ts, const struct usl_clock *clock);
static inline usl_time usl_timerset_now(const struct usl_timerset *ts) { return usl_clock_now(ts->clock); }

void usl_timer_init(struct usl_timer *t, usl_timer_fn fn);
/* Arms (or re-arms) t to fire at the absolute time expiry. */
void usl_timer_arm_at(struct usl_timerset *ts, struct usl_timer *t, usl_time expiry);
/* Arms (or re-arms) t to fire delay from now. */
void usl_timer_arm(struct usl_timerset *ts, struct usl_timer *t, usl_time delay);
/* Cancels t if armed; harmless otherwise. */
void usl_timer_cancel(struct usl_timer *t);
static inline bool usl_timer_armed(const struct usl_timer *t) { return t->set != NULL; }

/* Earliest expiry, or USL_TIME_NEVER when empty. */
usl_time usl_timerset_next(const struct usl_timerset *ts);
/*
 * Fires every timer whose expiry is <= now, earliest first, each disarmed
 * before its callback runs (so the callback may re-arm it).  Timers armed
 * by callbacks for a time <= now fire in the same call.  Returns the count.
 */
size_t usl_timerset_run(struct usl_timerset *ts);
static inline size_t usl_timerset_count(const struct usl_timerset *ts) { return ts->count; }
static inline const struct usl_stall *usl_timerset_late(const struct usl_timerset *ts)
{
	return &ts->late;
}

#endif
