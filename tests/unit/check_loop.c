/*
 * tests/unit/check_loop.c - usl/loop on each backend we support: fds,
 * write interest, timers through the single libevent timer, signals, and
 * refusing a backend that does not exist.  Real timeouts are a few ms.
 */
#include <check.h>
#include <ctype.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "usl/loop.h"

static const char *const backends[] = { "epoll", "poll" };
#define NBACKENDS ((int)(sizeof(backends) / sizeof(backends[0])))

static struct usl_loop *loop;
static int sv[2];

struct fd_ctx {
	int calls;
	short last_what;
	struct usl_fd *self;
	bool del_self;
};

static struct usl_loop *new_loop(const char *backend)
{
	char err[256] = "";
	struct usl_loop *l = usl_loop_new(backend, err, sizeof(err));

	ck_assert_msg(l != NULL, "usl_loop_new(%s): %s", backend, err);
	ck_assert_str_eq(usl_loop_backend(l), backend);
	ck_assert_ptr_nonnull(usl_loop_base(l));
	return l;
}

static void open_pair(void)
{
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
}

static void close_pair(void)
{
	close(sv[0]);
	close(sv[1]);
}

static void fd_cb(int fd, short what, void *arg)
{
	struct fd_ctx *c = arg;
	char buf[64];

	c->calls++;
	c->last_what = what;
	if (what & USL_READ)
		ck_assert_int_gt(read(fd, buf, sizeof(buf)), 0);
	if (c->del_self)
		usl_fd_del(c->self);
}

START_TEST(test_backend_selected)
{
	const char **avail = usl_loop_backends_available();
	bool found = false;

	for (; *avail; avail++)
		found |= strcmp(*avail, backends[_i]) == 0;
	ck_assert_msg(found, "%s not in the available list", backends[_i]);
	loop = new_loop(backends[_i]);
	usl_loop_free(loop);
}
END_TEST

START_TEST(test_fd_read)
{
	struct fd_ctx c = { 0 };

	loop = new_loop(backends[_i]);
	open_pair();
	c.self = usl_fd_add(loop, sv[0], USL_READ, fd_cb, &c);
	ck_assert_ptr_nonnull(c.self);
	/* Nothing readable: a non-blocking pass calls nothing. */
	ck_assert_int_eq(usl_loop_run_once(loop, false), 0);
	ck_assert_int_eq(c.calls, 0);
	ck_assert_int_eq(write(sv[1], "x", 1), 1);
	ck_assert_int_eq(usl_loop_run_once(loop, true), 0);
	ck_assert_int_eq(c.calls, 1);
	ck_assert_int_eq(c.last_what, USL_READ);
	/* Persistent: a second write is delivered too. */
	ck_assert_int_eq(write(sv[1], "y", 1), 1);
	ck_assert_int_eq(usl_loop_run_once(loop, true), 0);
	ck_assert_int_eq(c.calls, 2);
	/* A callback may delete its own watch. */
	c.del_self = true;
	ck_assert_int_eq(write(sv[1], "z", 1), 1);
	ck_assert_int_eq(usl_loop_run_once(loop, true), 0);
	ck_assert_int_eq(c.calls, 3);
	ck_assert_int_eq(write(sv[1], "w", 1), 1);
	ck_assert_int_eq(usl_loop_run_once(loop, false), 0);
	ck_assert_int_eq(c.calls, 3);
	close_pair();
	usl_loop_free(loop);
}
END_TEST

START_TEST(test_fd_write_interest)
{
	struct fd_ctx c = { 0 };

	loop = new_loop(backends[_i]);
	open_pair();
	c.self = usl_fd_add(loop, sv[0], USL_READ, fd_cb, &c);
	ck_assert_ptr_nonnull(c.self);
	/* An idle socket is writable: asking for USL_WRITE delivers it. */
	ck_assert_int_eq(usl_fd_set_events(c.self, USL_READ | USL_WRITE), 0);
	ck_assert_int_eq(usl_loop_run_once(loop, true), 0);
	ck_assert_int_eq(c.calls, 1);
	ck_assert_int_eq(c.last_what, USL_WRITE);
	/* Back to read only: no more write events. */
	ck_assert_int_eq(usl_fd_set_events(c.self, USL_READ), 0);
	ck_assert_int_eq(usl_loop_run_once(loop, false), 0);
	ck_assert_int_eq(c.calls, 1);
	/* Watching nothing: even readable data is not reported... */
	ck_assert_int_eq(usl_fd_set_events(c.self, 0), 0);
	ck_assert_int_eq(write(sv[1], "x", 1), 1);
	ck_assert_int_eq(usl_loop_run_once(loop, false), 0);
	ck_assert_int_eq(c.calls, 1);
	/* ...until read interest comes back. */
	ck_assert_int_eq(usl_fd_set_events(c.self, USL_READ), 0);
	ck_assert_int_eq(usl_loop_run_once(loop, true), 0);
	ck_assert_int_eq(c.calls, 2);
	ck_assert_int_eq(c.last_what, USL_READ);
	usl_fd_del(c.self);
	close_pair();
	usl_loop_free(loop);
}
END_TEST

struct tctx {
	struct usl_timer t;
	int id;
	usl_time fired_at;
};

static int fire_order[8];
static int nfired;

static void timer_cb(struct usl_timer *t)
{
	struct tctx *c = usl_container_of(t, struct tctx, t);

	c->fired_at = usl_clock_now(&usl_clock_monotonic);
	fire_order[nfired++] = c->id;
	if (c->id == 3)
		usl_loop_exit(loop);
}

static void guard_cb(struct usl_timer *t)
{
	ck_abort_msg("guard timer fired: the loop did not deliver timers");
}

START_TEST(test_timers)
{
	struct tctx a = { .id = 1 }, b = { .id = 2 }, c = { .id = 3 }, d = { .id = 4 };
	struct usl_timer guard;
	struct usl_timerset *ts;
	usl_time start;

	loop = new_loop(backends[_i]);
	ts = usl_loop_timers(loop);
	nfired = 0;
	usl_timer_init(&a.t, timer_cb);
	usl_timer_init(&b.t, timer_cb);
	usl_timer_init(&c.t, timer_cb);
	usl_timer_init(&d.t, timer_cb);
	usl_timer_init(&guard, guard_cb);
	/*
	 * Absolute expiries from one reading: arming takes real time (a lot
	 * under valgrind), and relative delays would then reorder the timers.
	 */
	start = usl_timerset_now(ts);
	usl_timer_arm_at(ts, &guard, usl_time_add(start, usl_time_s(5)));
	/* Armed out of order; the earliest moves twice. */
	usl_timer_arm_at(ts, &c.t, usl_time_add(start, usl_time_ms(15)));
	usl_timer_arm_at(ts, &b.t, usl_time_add(start, usl_time_ms(8)));
	usl_timer_arm_at(ts, &a.t, usl_time_add(start, usl_time_ms(3)));
	usl_timer_arm_at(ts, &d.t, usl_time_add(start, usl_time_ms(1)));
	usl_timer_cancel(&d.t);		/* cancelling the earliest re-arms the loop */
	ck_assert_int_eq(usl_loop_run(loop), 0);
	ck_assert_int_eq(nfired, 3);
	ck_assert_int_eq(fire_order[0], 1);
	ck_assert_int_eq(fire_order[1], 2);
	ck_assert_int_eq(fire_order[2], 3);
	/* Never early. */
	ck_assert_int_ge(usl_time_sub(a.fired_at, start).ns, usl_time_ms(3).ns);
	ck_assert_int_ge(usl_time_sub(c.fired_at, start).ns, usl_time_ms(15).ns);
	ck_assert(usl_timer_armed(&guard));
	/* Freeing the loop disarms what is left, so a later cancel is harmless. */
	usl_loop_free(loop);
	ck_assert(!usl_timer_armed(&guard));
	usl_timer_cancel(&guard);
}
END_TEST

static void count_cb(struct usl_timer *t)
{
	(void)t;
	nfired++;
}

/* A coarse clock with a 20 ms tick: the monotonic time as of its last tick. */
#define TICK_NS (20 * 1000000LL)
static usl_time tick_now(const struct usl_clock *c)
{
	(void)c;
	return usl_time_ns(usl_clock_now(&usl_clock_monotonic).ns / TICK_NS * TICK_NS);
}

static usl_time tick_lag(const struct usl_clock *c)
{
	(void)c;
	return usl_time_ns(TICK_NS);
}

/*
 * The loop's clock may lag (the coarse clock: as of the last tick), more
 * when woken than when the timer was armed: woken at the deadline it would
 * still read short of it and go round again.  One blocking turn must fire
 * a timer that is due.
 */
START_TEST(test_timer_one_turn)
{
	static const struct usl_clock ticking = { tick_now, tick_lag };
	struct usl_timerset *ts;
	struct usl_timer t;
	int i;

	loop = new_loop(backends[_i]);
	usl_loop_set_clock(loop, &ticking);
	ts = usl_loop_timers(loop);
	usl_timer_init(&t, count_cb);
	nfired = 0;
	for (i = 0; i < 20; i++) {
		usl_timer_arm(ts, &t, usl_time_ms(1));
		ck_assert_int_eq(usl_loop_run_once(loop, true), 0);
		ck_assert_msg(nfired == i + 1, "turn %d: the timer did not fire", i);
	}
	usl_loop_free(loop);
}
END_TEST

/* A socket callback that takes 1.5 s by the loop's clock, one that takes 5 ms */
static struct usl_fake_clock slow_clock;

static void slow_cb(int fd, short what, void *arg)
{
	char buf[8];

	(void)what;
	ck_assert_int_gt(read(fd, buf, sizeof(buf)), 0);
	slow_clock.now = usl_time_add(slow_clock.now, usl_time_ms(*(int *)arg));
}

START_TEST(test_busy)
{
	struct usl_fd *f;
	int p[2], ms = 1500;

	loop = new_loop(backends[_i]);
	usl_fake_clock_init(&slow_clock, usl_time_s(100));
	usl_loop_set_clock(loop, &slow_clock.clock);
	ck_assert_int_eq(pipe(p), 0);
	f = usl_fd_add(loop, p[0], USL_READ, slow_cb, &ms);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	ck_assert_int_eq(usl_loop_run_once(loop, true), 0);
	ck_assert_int_eq(usl_loop_busy(loop)->max.ns, usl_time_ms(1500).ns);
	ck_assert_uint_eq(usl_loop_busy(loop)->over_1s, 1);
	ck_assert_uint_eq(usl_loop_busy(loop)->over_100ms, 1);
	ms = 5;
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	ck_assert_int_eq(usl_loop_run_once(loop, true), 0);
	ck_assert_uint_eq(usl_loop_busy(loop)->over_100ms, 1);
	ck_assert_int_eq(usl_loop_busy(loop)->max.ns, usl_time_ms(1500).ns);
	usl_fd_del(f);
	close(p[0]);
	close(p[1]);
	usl_loop_free(loop);
}
END_TEST

static void sig_cb(int signo, void *arg)
{
	int *got = arg;

	*got = signo;
}

START_TEST(test_signal)
{
	struct usl_sig *s;
	int got = 0;

	loop = new_loop(backends[_i]);
	s = usl_sig_add(loop, SIGUSR1, sig_cb, &got);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(raise(SIGUSR1), 0);
	ck_assert_int_eq(usl_loop_run_once(loop, true), 0);
	ck_assert_int_eq(got, SIGUSR1);
	usl_sig_del(s);
	usl_loop_free(loop);
}
END_TEST

START_TEST(test_unknown_backend)
{
	static const char *const bad[] = { "bogus", "kqueue", "" };
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(err, 0, sizeof(err));
		ck_assert_ptr_null(usl_loop_new(bad[i], err, sizeof(err)));
		ck_assert_msg(strlen(err) > 0, "no error message for \"%s\"", bad[i]);
		ck_assert_msg(strstr(err, "available: ") != NULL, "%s", err);
		ck_assert_msg(strstr(err, "epoll") != NULL, "%s", err);
	}
	/* A tiny error buffer is truncated, not overrun. */
	memset(err, 'X', sizeof(err));
	ck_assert_ptr_null(usl_loop_new("bogus", err, 8));
	ck_assert_int_eq(strlen(err), 7);
	ck_assert_int_eq(err[8], 'X');
}
END_TEST

START_TEST(test_default_backend)
{
	char err[256] = "";
	struct usl_loop *l = usl_loop_new(NULL, err, sizeof(err));

	ck_assert_msg(l != NULL, "%s", err);
	ck_assert_ptr_nonnull(usl_loop_backend(l));
	usl_loop_free(l);
}
END_TEST

/* Resident KiB of the malloc heap ([heap] in smaps). */
static long heap_rss_kib(void)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[256];
	bool in_heap = false;
	long kib = 0;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (isxdigit((unsigned char)line[0]))	/* a mapping's first line */
			in_heap = strstr(line, "[heap]") != NULL;
		else if (in_heap && sscanf(line, "Rss: %ld kB", &kib) == 1)
			break;
	}
	fclose(f);
	return kib;
}

/* malloc is glibc's own here (not valgrind's or ASan's): the heap is measurable */
static bool glibc_heap(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return false;
#else
	const char *pre = getenv("LD_PRELOAD");

	return pre == NULL || strstr(pre, "vgpreload") == NULL;
#endif
}

/*
 * Churn: sockets watched next to tunnel-sized heap objects, then all of it
 * gone.  libevent's per-descriptor records stay (they live as long as the
 * base) but in the loop's own region, so the heap's pages go back.
 */
#define CHURN_FDS	2000
START_TEST(test_churn_returns_heap)
{
	static int fds[CHURN_FDS];
	static void *objs[CHURN_FDS];
	static struct usl_fd *evs[CHURN_FDS];
	struct rlimit rl;
	long before, after;
	int n = CHURN_FDS;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < CHURN_FDS + 64) {
		rl.rlim_cur = rl.rlim_max < CHURN_FDS + 64 ? rl.rlim_max : CHURN_FDS + 64;
		setrlimit(RLIMIT_NOFILE, &rl);
		n = (int)rl.rlim_cur - 64;
	}
	ck_assert_int_ge(n, 500);
	loop = new_loop("epoll");
	malloc_trim(0);
	before = heap_rss_kib();
	for (int i = 0; i < n; i++) {
		objs[i] = malloc(2000);
		memset(objs[i], 1, 2000);
		fds[i] = socket(AF_INET, SOCK_DGRAM, 0);
		ck_assert_int_ge(fds[i], 0);
		evs[i] = usl_fd_add(loop, fds[i], USL_READ, fd_cb, NULL);
		ck_assert_ptr_nonnull(evs[i]);
	}
	/* one record per descriptor number, in the region */
	ck_assert_uint_ge(usl_loop_small_blocks(), (size_t)n);
	for (int i = 0; i < n; i++) {
		usl_fd_del(evs[i]);
		close(fds[i]);
		free(objs[i]);
	}
	malloc_trim(0);
	after = heap_rss_kib();
	if (glibc_heap())	/* 2,000 pinned pages would be ~8 MiB */
		ck_assert_msg(after < before + 1024, "heap resident %ld KiB after churn, %ld before",
			      after, before);
	usl_loop_free(loop);
}
END_TEST

static Suite *loop_suite(void)
{
	Suite *s = suite_create("loop");
	TCase *tc = tcase_create("backends");
	TCase *tc_misc = tcase_create("misc");

	tcase_set_timeout(tc, 20);
	tcase_add_loop_test(tc, test_backend_selected, 0, NBACKENDS);
	tcase_add_loop_test(tc, test_fd_read, 0, NBACKENDS);
	tcase_add_loop_test(tc, test_fd_write_interest, 0, NBACKENDS);
	tcase_add_loop_test(tc, test_timers, 0, NBACKENDS);
	tcase_add_loop_test(tc, test_timer_one_turn, 0, NBACKENDS);
	tcase_add_loop_test(tc, test_signal, 0, NBACKENDS);
	tcase_add_loop_test(tc, test_busy, 0, NBACKENDS);
	suite_add_tcase(s, tc);
	tcase_add_test(tc_misc, test_unknown_backend);
	tcase_add_test(tc_misc, test_default_backend);
	tcase_add_test(tc_misc, test_churn_returns_heap);
	suite_add_tcase(s, tc_misc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(loop_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
