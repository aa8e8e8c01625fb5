/*
 * tests/unit/check_timer.c - usl/timer driven by a fake clock: no sleeping,
 * every expiry is exact.
 */
#include <check.h>
#include <stdlib.h>

#include "usl/timer.h"

struct tt {
	struct usl_timer t;
	int id;
	int rearm_left;		/* self re-arm this many more times */
	usl_time rearm_delay;
	struct tt *victim;	/* cancel this one when fired */
};

static struct usl_fake_clock fclock;
static struct usl_timerset ts;
static int changes;

enum { LOG_MAX = 20000 };
static int fired_log[LOG_MAX];
static int nfired;

static void on_change(struct usl_timerset *set, void *arg)
{
	ck_assert_ptr_eq(set, &ts);
	ck_assert_ptr_eq(arg, &changes);
	changes++;
}

static void setup(void)
{
	usl_fake_clock_init(&fclock, usl_time_s(1000));
	usl_timerset_init(&ts, &fclock.clock);
	ts.on_change = on_change;
	ts.on_change_arg = &changes;
	changes = 0;
	nfired = 0;
}

static void fire(struct usl_timer *t)
{
	struct tt *x = usl_container_of(t, struct tt, t);

	ck_assert(!usl_timer_armed(t));		/* disarmed before the callback */
	ck_assert_int_lt(nfired, LOG_MAX);
	fired_log[nfired++] = x->id;
	if (x->victim)
		usl_timer_cancel(&x->victim->t);
	if (x->rearm_left > 0) {
		x->rearm_left--;
		usl_timer_arm(&ts, t, x->rearm_delay);
	}
}

static void tt_init(struct tt *x, int id)
{
	x->id = id;
	x->rearm_left = 0;
	x->victim = NULL;
	usl_timer_init(&x->t, fire);
}

static void advance_ms(int64_t ms)
{
	fclock.now = usl_time_add(fclock.now, usl_time_ms(ms));
}

START_TEST(test_order)
{
	static const int delays_ms[] = { 50, 10, 40, 20, 30 };
	struct tt x[5];
	int i;

	ck_assert(usl_time_is_never(usl_timerset_next(&ts)));
	for (i = 0; i < 5; i++) {
		tt_init(&x[i], delays_ms[i]);
		usl_timer_arm(&ts, &x[i].t, usl_time_ms(delays_ms[i]));
		ck_assert(usl_timer_armed(&x[i].t));
	}
	ck_assert_uint_eq(usl_timerset_count(&ts), 5);
	ck_assert_int_eq(usl_timerset_next(&ts).ns,
			 usl_time_add(fclock.now, usl_time_ms(10)).ns);

	/* Nothing is due yet. */
	ck_assert_uint_eq(usl_timerset_run(&ts), 0);
	advance_ms(25);
	ck_assert_uint_eq(usl_timerset_run(&ts), 2);
	ck_assert_int_eq(nfired, 2);
	ck_assert_int_eq(fired_log[0], 10);
	ck_assert_int_eq(fired_log[1], 20);
	ck_assert_uint_eq(usl_timerset_count(&ts), 3);
	/* Exactly at expiry counts as due. */
	advance_ms(5);
	ck_assert_uint_eq(usl_timerset_run(&ts), 1);
	advance_ms(100);
	ck_assert_uint_eq(usl_timerset_run(&ts), 2);
	ck_assert_int_eq(nfired, 5);
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(fired_log[i], (i + 1) * 10);
	ck_assert_uint_eq(usl_timerset_count(&ts), 0);
	ck_assert(usl_time_is_never(usl_timerset_next(&ts)));
}
END_TEST

START_TEST(test_fifo_equal_expiry)
{
	enum { N = 100 };
	static struct tt x[N];
	usl_time at = usl_time_add(fclock.now, usl_time_ms(5));
	int i;

	for (i = 0; i < N; i++) {
		tt_init(&x[i], i);
		usl_timer_arm_at(&ts, &x[i].t, at);
	}
	/* Re-arming for the same instant sends it to the back of the queue. */
	usl_timer_arm_at(&ts, &x[0].t, at);
	advance_ms(5);
	ck_assert_uint_eq(usl_timerset_run(&ts), N);
	for (i = 0; i < N - 1; i++)
		ck_assert_int_eq(fired_log[i], i + 1);
	ck_assert_int_eq(fired_log[N - 1], 0);
}
END_TEST

START_TEST(test_cancel)
{
	struct tt a, b, c;

	tt_init(&a, 1);
	tt_init(&b, 2);
	tt_init(&c, 3);
	usl_timer_cancel(&a.t);		/* never armed: harmless */
	usl_timer_arm(&ts, &a.t, usl_time_ms(10));
	usl_timer_arm(&ts, &b.t, usl_time_ms(20));
	usl_timer_arm(&ts, &c.t, usl_time_ms(30));
	usl_timer_cancel(&b.t);
	ck_assert(!usl_timer_armed(&b.t));
	usl_timer_cancel(&b.t);		/* twice: harmless */
	ck_assert_uint_eq(usl_timerset_count(&ts), 2);
	usl_timer_cancel(&a.t);
	ck_assert_int_eq(usl_timerset_next(&ts).ns,
			 usl_time_add(fclock.now, usl_time_ms(30)).ns);
	advance_ms(100);
	ck_assert_uint_eq(usl_timerset_run(&ts), 1);
	ck_assert_int_eq(fired_log[0], 3);
}
END_TEST

START_TEST(test_cancel_within_run)
{
	struct tt a, b, c;

	tt_init(&a, 1);
	tt_init(&b, 2);
	tt_init(&c, 3);
	a.victim = &b;		/* a's callback cancels b, due in the same run */
	usl_timer_arm(&ts, &a.t, usl_time_ms(10));
	usl_timer_arm(&ts, &b.t, usl_time_ms(20));
	usl_timer_arm(&ts, &c.t, usl_time_ms(30));
	advance_ms(30);
	ck_assert_uint_eq(usl_timerset_run(&ts), 2);
	ck_assert_int_eq(nfired, 2);
	ck_assert_int_eq(fired_log[0], 1);
	ck_assert_int_eq(fired_log[1], 3);
	ck_assert_uint_eq(usl_timerset_count(&ts), 0);
}
END_TEST

START_TEST(test_rearm_moves)
{
	struct tt a, b;

	tt_init(&a, 1);
	tt_init(&b, 2);
	usl_timer_arm(&ts, &a.t, usl_time_ms(10));
	usl_timer_arm(&ts, &b.t, usl_time_ms(20));
	usl_timer_arm(&ts, &a.t, usl_time_ms(30));	/* later than b now */
	ck_assert_uint_eq(usl_timerset_count(&ts), 2);
	ck_assert_int_eq(usl_timerset_next(&ts).ns,
			 usl_time_add(fclock.now, usl_time_ms(20)).ns);
	advance_ms(20);
	ck_assert_uint_eq(usl_timerset_run(&ts), 1);
	ck_assert_int_eq(fired_log[0], 2);
	/* And earlier again. */
	usl_timer_arm(&ts, &b.t, usl_time_ms(50));
	usl_timer_arm(&ts, &a.t, usl_time_ms(1));
	advance_ms(100);
	ck_assert_uint_eq(usl_timerset_run(&ts), 2);
	ck_assert_int_eq(fired_log[1], 1);
	ck_assert_int_eq(fired_log[2], 2);
}
END_TEST

START_TEST(test_self_rearm)
{
	struct tt a;
	int i;

	tt_init(&a, 1);
	a.rearm_left = 3;
	a.rearm_delay = usl_time_ms(100);
	usl_timer_arm(&ts, &a.t, usl_time_ms(100));
	for (i = 1; i <= 4; i++) {
		advance_ms(100);
		ck_assert_uint_eq(usl_timerset_run(&ts), 1);
		ck_assert_int_eq(nfired, i);
		ck_assert(usl_timer_armed(&a.t) == (i < 4));
	}
	ck_assert_uint_eq(usl_timerset_run(&ts), 0);
}
END_TEST

START_TEST(test_rearm_due_fires_same_run)
{
	struct tt a, b;

	/* Re-armed for "now" inside the run: fires again in the same call. */
	tt_init(&a, 1);
	tt_init(&b, 2);
	a.rearm_left = 3;
	a.rearm_delay = usl_time_ns(0);
	usl_timer_arm(&ts, &a.t, usl_time_ms(10));
	usl_timer_arm(&ts, &b.t, usl_time_ms(10));
	advance_ms(10);
	ck_assert_uint_eq(usl_timerset_run(&ts), 5);
	/* FIFO: b was armed before a's re-arms. */
	ck_assert_int_eq(fired_log[0], 1);
	ck_assert_int_eq(fired_log[1], 2);
	ck_assert_int_eq(fired_log[2], 1);
	ck_assert_int_eq(fired_log[4], 1);
}
END_TEST

static void fire_and_advance(struct usl_timer *t)
{
	fire(t);
	advance_ms(1000);	/* a slow callback */
}

START_TEST(test_now_read_once)
{
	struct tt a, b;

	tt_init(&a, 1);
	tt_init(&b, 2);
	usl_timer_init(&a.t, fire_and_advance);
	usl_timer_arm(&ts, &a.t, usl_time_ms(10));
	usl_timer_arm(&ts, &b.t, usl_time_ms(20));
	advance_ms(10);
	/* b became due during the run, by the clock, but not by run's "now". */
	ck_assert_uint_eq(usl_timerset_run(&ts), 1);
	ck_assert(usl_timer_armed(&b.t));
	ck_assert_uint_eq(usl_timerset_run(&ts), 1);
}
END_TEST

/* A run's lateness is its earliest due timer's; one count per run. */
START_TEST(test_late)
{
	struct tt a, b, c;

	tt_init(&a, 1);
	tt_init(&b, 2);
	tt_init(&c, 3);
	usl_timer_arm(&ts, &a.t, usl_time_ms(10));
	advance_ms(15);
	ck_assert_uint_eq(usl_timerset_run(&ts), 1);
	ck_assert_int_eq(usl_timerset_late(&ts)->max.ns, usl_time_ms(5).ns);
	ck_assert_uint_eq(usl_timerset_late(&ts)->over_100ms, 0);
	/* the loop kept away 1.5 s: two timers due, one late run */
	usl_timer_arm(&ts, &b.t, usl_time_ms(100));
	usl_timer_arm(&ts, &c.t, usl_time_ms(900));
	advance_ms(1600);
	ck_assert_uint_eq(usl_timerset_run(&ts), 2);
	ck_assert_int_eq(usl_timerset_late(&ts)->max.ns, usl_time_ms(1500).ns);
	ck_assert_uint_eq(usl_timerset_late(&ts)->over_100ms, 1);
	ck_assert_uint_eq(usl_timerset_late(&ts)->over_1s, 1);
	/* 200 ms late: over 100 ms, not over 1 s; the maximum stays */
	usl_timer_arm(&ts, &a.t, usl_time_ms(10));
	advance_ms(210);
	usl_timerset_run(&ts);
	ck_assert_uint_eq(usl_timerset_late(&ts)->over_100ms, 2);
	ck_assert_uint_eq(usl_timerset_late(&ts)->over_1s, 1);
	ck_assert_int_eq(usl_timerset_late(&ts)->max.ns, usl_time_ms(1500).ns);
	/* a run with nothing due counts nothing */
	usl_timerset_run(&ts);
	ck_assert_uint_eq(usl_timerset_late(&ts)->over_100ms, 2);
}
END_TEST

static int cmp_int(const void *a, const void *b)
{
	return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

START_TEST(test_many_at_once)
{
	enum { N = 10000 };
	struct tt *x = calloc(N, sizeof(*x));
	int *expect = calloc(N, sizeof(*expect));
	uint32_t r = 12345;
	int i;

	ck_assert(x && expect);
	/*
	 * Expiries 0..999 ms, so many timers share an expiry; the id encodes
	 * (expiry, arm order) so sorting ids gives the required firing order.
	 */
	for (i = 0; i < N; i++) {
		int ms;

		r = r * 1103515245U + 12345U;
		ms = (int)((r >> 8) % 1000);
		tt_init(&x[i], ms * N + i);
		expect[i] = x[i].id;
		usl_timer_arm(&ts, &x[i].t, usl_time_ms(ms));
	}
	ck_assert_uint_eq(usl_timerset_count(&ts), N);
	qsort(expect, N, sizeof(*expect), cmp_int);
	advance_ms(1000);
	ck_assert_uint_eq(usl_timerset_run(&ts), N);
	ck_assert_int_eq(nfired, N);
	for (i = 0; i < N; i++)
		ck_assert_int_eq(fired_log[i], expect[i]);
	ck_assert_uint_eq(usl_timerset_count(&ts), 0);
	free(x);
	free(expect);
}
END_TEST

START_TEST(test_on_change)
{
	struct tt a, b, c;

	tt_init(&a, 1);
	tt_init(&b, 2);
	tt_init(&c, 3);
	usl_timer_arm(&ts, &a.t, usl_time_ms(20));
	ck_assert_int_eq(changes, 1);		/* new earliest */
	usl_timer_arm(&ts, &b.t, usl_time_ms(30));
	ck_assert_int_eq(changes, 1);		/* behind a: nothing to re-arm */
	usl_timer_arm(&ts, &c.t, usl_time_ms(10));
	ck_assert_int_eq(changes, 2);		/* new earliest */
	usl_timer_cancel(&b.t);
	ck_assert_int_eq(changes, 2);		/* was not the earliest */
	usl_timer_cancel(&c.t);
	ck_assert_int_eq(changes, 3);		/* was the earliest */
	usl_timer_arm(&ts, &a.t, usl_time_ms(40));
	ck_assert_int_eq(changes, 4);		/* earliest moved later */
	usl_timer_cancel(&a.t);
	ck_assert_int_eq(changes, 5);		/* now empty */
	usl_timerset_run(&ts);
	ck_assert_int_eq(changes, 6);		/* end of every run */
}
END_TEST

START_TEST(test_two_sets)
{
	struct usl_timerset other;
	struct tt a;

	usl_timerset_init(&other, &fclock.clock);
	tt_init(&a, 1);
	usl_timer_arm(&ts, &a.t, usl_time_ms(10));
	/* Arming in another set takes it out of the first. */
	usl_timer_arm(&other, &a.t, usl_time_ms(10));
	ck_assert_uint_eq(usl_timerset_count(&ts), 0);
	ck_assert_uint_eq(usl_timerset_count(&other), 1);
	ck_assert_ptr_eq(a.t.set, &other);
	advance_ms(10);
	ck_assert_uint_eq(usl_timerset_run(&ts), 0);
	ck_assert_uint_eq(usl_timerset_run(&other), 1);
}
END_TEST

START_TEST(test_time_helpers)
{
	struct usl_fake_clock fc;
	usl_time a, b;

	ck_assert_int_eq(usl_time_ms(3).ns, 3000000);
	ck_assert_int_eq(usl_time_to_ms(usl_time_s(2)), 2000);
	ck_assert(usl_time_is_never(usl_time_add(USL_TIME_NEVER, usl_time_s(1))));
	usl_fake_clock_init(&fc, usl_time_ms(7));
	ck_assert_int_eq(usl_clock_now(&fc.clock).ns, usl_time_ms(7).ns);
	/* The real clock is monotonic and roughly now. */
	a = usl_clock_now(&usl_clock_monotonic);
	b = usl_clock_now(&usl_clock_monotonic);
	ck_assert_int_ge(usl_time_cmp(b, a), 0);
	ck_assert_int_gt(a.ns, 0);
}
END_TEST

/*
 * A wait on an answer in many parts (a 10,000-tunnel netlink dump under
 * emulation took more than its 5 s): each part heard gives it `quiet`
 * again, silence ends it, and `max` bounds it whatever comes.
 */
START_TEST(test_progress_wait)
{
	struct usl_progress_wait w;
	usl_time t = usl_time_s(100);

	usl_progress_wait_start(&w, t, usl_time_s(5), usl_time_s(60));
	ck_assert_int_eq(usl_time_to_ms(usl_progress_wait_left(&w, t)), 5000);
	/* a part every 4 s: 40 s in all, well past the quiet bound, goes on */
	for (int i = 0; i < 10; i++) {
		t = usl_time_add(t, usl_time_s(4));
		ck_assert_int_gt(usl_progress_wait_left(&w, t).ns, 0);
		usl_progress_wait_heard(&w, t);
	}
	ck_assert_int_eq(usl_time_to_ms(usl_progress_wait_left(&w, t)), 5000);
	/* silence: given up once quiet has passed since the last part */
	ck_assert_int_gt(usl_progress_wait_left(&w, usl_time_add(t, usl_time_ms(4999))).ns, 0);
	ck_assert_int_le(usl_progress_wait_left(&w, usl_time_add(t, usl_time_s(5))).ns, 0);
	/* parts that never stop: max ends it, 60 s after the start at 100 s */
	t = usl_time_s(158);
	usl_progress_wait_heard(&w, t);
	ck_assert_int_eq(usl_time_to_ms(usl_progress_wait_left(&w, t)), 2000);
	ck_assert_int_le(usl_progress_wait_left(&w, usl_time_s(160)).ns, 0);
}
END_TEST

/* The coarse clock is the monotonic one as of the last tick: never ahead, at most a tick behind. */
START_TEST(test_coarse_clock)
{
	usl_time lag = usl_clock_lag(&usl_clock_coarse), c, m;
	int i;

	ck_assert_int_gt(lag.ns, 0);
	ck_assert_int_le(lag.ns, usl_time_ms(10).ns);
	ck_assert_int_eq(usl_clock_lag(&usl_clock_monotonic).ns, 0);
	for (i = 0; i < 1000; i++) {
		c = usl_clock_now(&usl_clock_coarse);
		m = usl_clock_now(&usl_clock_monotonic);
		ck_assert_int_le(c.ns, m.ns);
		/* a tick, plus what a preempted test may lose between the two reads */
		ck_assert_int_lt(usl_time_sub(m, c).ns, usl_time_add(lag, usl_time_ms(50)).ns);
	}
}
END_TEST

static Suite *timer_suite(void)
{
	Suite *s = suite_create("timer");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_order);
	tcase_add_test(tc, test_fifo_equal_expiry);
	tcase_add_test(tc, test_cancel);
	tcase_add_test(tc, test_cancel_within_run);
	tcase_add_test(tc, test_rearm_moves);
	tcase_add_test(tc, test_self_rearm);
	tcase_add_test(tc, test_rearm_due_fires_same_run);
	tcase_add_test(tc, test_now_read_once);
	tcase_add_test(tc, test_late);
	tcase_add_test(tc, test_many_at_once);
	tcase_add_test(tc, test_on_change);
	tcase_add_test(tc, test_two_sets);
	tcase_add_test(tc, test_time_helpers);
	tcase_add_test(tc, test_coarse_clock);
	tcase_add_test(tc, test_progress_wait);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(timer_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
