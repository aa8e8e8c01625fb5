/*
 * usl/loop.c - a thin wrapper over libevent 2.1: fds, signals, one timerset.
 *
 * All usl timers share one libevent timer armed for the earliest expiry,
 * so libevent's own timeout heap holds one entry however many tunnels and
 * sessions there are, and re-arming a protocol timer is an rbtree update.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#if defined(__SANITIZE_ADDRESS__)
#define USL_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define USL_LSAN 1
#endif
#endif
#ifdef USL_LSAN
#include <sanitizer/lsan_interface.h>
#endif

#include "log.h"
#include "loop.h"

/*
 * Timer wake-ups are aligned to a grid: the loop wakes at the earliest
 * expiry rounded up to the next multiple of USL_TIMER_GRID, so timers due
 * within one grid cell (10,000 tunnels' HELLOs and delayed ACKs) are run by
 * one wake-up instead of one each.  Protocol timers are tens of ms to
 * minutes long; 10 ms of lateness is nothing to them.
 */
#define USL_TIMER_GRID_NS	(10 * 1000000LL)

struct usl_loop {
	struct event_base *base;
	struct event *timer_ev;		/* fires at the timerset's earliest expiry */
	struct usl_timerset timers;
	usl_time armed;			/* grid deadline timer_ev is armed for, or NEVER */
	struct usl_stall busy;		/* single callbacks' durations */
};

/*
 * The libevent event is embedded (event_struct.h, event_assign) rather than
 * event_new()ed: one allocation per watched socket instead of two, which
 * at 10,000 tunnel sockets is worth libevent's less stable struct layout
 * (we build against the installed headers, never a fixed ABI).
 */
struct usl_fd {
	struct usl_loop *loop;
	struct event ev_storage;
	struct event *ev;		/* &ev_storage */
	int fd;
	short what;
	usl_fd_fn cb;
	void *arg;
};

struct usl_sig {
	struct usl_loop *loop;
	struct event *ev;
	usl_sig_fn cb;
	void *arg;
};

#define MAX_BACKENDS	8

/* While probing, a backend that fails to start is expected, not news. */
static bool libevent_quiet;

/* libevent warns from inside its loop (a failing accept, a failing epoll_ctl): limited. */
static struct log_ratelimit libevent_rl = LOG_RATELIMIT_INIT(10, 5);

static void libevent_log(int severity, const char *msg)
{
	if (libevent_quiet)
		return;
	if (severity >= EVENT_LOG_WARN)
		log_warnx_rl(&libevent_rl, usl_clock_now(&usl_clock_coarse), "libevent: %s", msg);
	else
		log_debug("libevent: %s", msg);
}

/*
 * libevent's compiled-in methods.  event_get_supported_methods() frees the
 * array it returned last time on every call, so we copy it once (the names
 * themselves are libevent's static strings).
 */
static const char *const *methods_built(void)
{
	static const char *built[MAX_BACKENDS + 1];
	const char **m;
	size_t n = 0;

	if (built[0] == NULL) {
		for (m = event_get_supported_methods(); m && *m && n < MAX_BACKENDS; m++)
			built[n++] = *m;
		built[n] = NULL;
	}
	return built;
}

/*
 * libevent keeps a record for every descriptor number it has ever watched
 * (16-24 bytes each, kept for the life of the base).  From malloc, those
 * records land among the objects of the tunnels alive at the time and, once
 * those tunnels are freed, each pins its heap page: after churning 20,000
 * tunnels the heap kept 34 MiB resident for 0.9 MiB in use.  libevent's small
 * blocks therefore come from a region of their own, reserved as address
 * space and touched as used (a free list of SMALL_BLOCK-byte blocks); the
 * rest, and everything once the region is full, from malloc.
 */
#define SMALL_BLOCK	32
#define SMALL_REGION	(64u << 20)	/* 2M blocks: descriptors, not memory */

static struct {
	unsigned char *base, *next, *end;
	void *free;			/* freed blocks, linked through their first word */
	size_t in_use;
} small;

static bool small_owns(const void *p)
{
	return small.base != NULL && (const unsigned char *)p >= small.base &&
	       (const unsigned char *)p < small.end;
}

static void *small_alloc(void)
{
	void *p = small.free;

	if (p != NULL)
		small.free = *(void **)p;
	else if (small.next != NULL && small.next < small.end)
		p = small.next, small.next += SMALL_BLOCK;
	if (p != NULL)
		small.in_use++;
	return p;
}

static void *ev_malloc(size_t n)
{
	void *p = n <= SMALL_BLOCK ? small_alloc() : NULL;

	return p != NULL ? p : malloc(n);
}

static void ev_free(void *p)
{
	if (!small_owns(p)) {
		free(p);
		return;
	}
	*(void **)p = small.free;
	small.free = p;
	small.in_use--;
}

static void *ev_realloc(void *p, size_t n)
{
	void *q;

	if (p == NULL)
		return ev_malloc(n);
	if (!small_owns(p))
		return realloc(p, n);
	if (n <= SMALL_BLOCK)
		return p;
	q = malloc(n);
	if (q != NULL) {
		memcpy(q, p, SMALL_BLOCK);
		ev_free(p);
	}
	return q;
}

/* Before libevent's first allocation; without the region, malloc serves all. */
static void small_region_init(void)
{
	void *r;

	if (small.base != NULL || small.end != NULL)
		return;
	r = mmap(NULL, SMALL_REGION, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED) {
		small.end = (unsigned char *)1;	/* tried */
		return;
	}
	small.base = small.next = r;
	small.end = small.base + SMALL_REGION;
#ifdef USL_LSAN
	/*
	 * LeakSanitizer scans the heap, not mappings of our own: libevent's
	 * blocks here hold the only pointers to some of its malloc()ed ones,
	 * which would be reported as leaked at any exit before the loop is
	 * freed (a fatal error at start-up).
	 */
	__lsan_register_root_region(r, SMALL_REGION);
#endif
	event_set_mem_functions(ev_malloc, ev_realloc, ev_free);
}

size_t usl_loop_small_blocks(void)
{
	return small.in_use;
}

void usl_loop_mem_free(void *p)
{
	ev_free(p);
}

/* Creates a base that may use only the given method (NULL: libevent's pick). */
static struct event_base *base_new_only(const char *method)
{
	struct event_config *cfg;
	struct event_base *base;
	const char *const *m;

	small_region_init();
	cfg = event_config_new();
	if (cfg == NULL)
		return NULL;
	/*
	 * No EVENT_BASE_FLAG_PRECISE_TIMER: it costs a timerfd_settime() per
	 * re-arm, as many syscalls as the messages themselves at 10,000
	 * tunnels.  An early wake-up from the coarse clock finds nothing due
	 * and simply re-arms.
	 */
	for (m = methods_built(); method && *m; m++) {
		if (strcmp(*m, method) != 0)
			event_config_avoid_method(cfg, *m);
	}
	base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	return base;
}

const char **usl_loop_backends_available(void)
{
	static const char *avail[MAX_BACKENDS + 1];
	static bool probed;
	struct event_base *base;
	const char *const *m;
	size_t n = 0;

	if (probed)
		return avail;
	/* Built in is not enough: the kernel or EVENT_NO<NAME> may veto one. */
	event_set_log_callback(libevent_log);
	libevent_quiet = true;
	for (m = methods_built(); *m; m++) {
		base = base_new_only(*m);
		if (base == NULL)
			continue;
		if (strcmp(event_base_get_method(base), *m) == 0)
			avail[n++] = *m;
		event_base_free(base);
	}
	libevent_quiet = false;
	avail[n] = NULL;
	probed = true;
	return avail;
}

static bool backend_is_available(const char *name)
{
	const char **m;

	for (m = usl_loop_backends_available(); *m; m++) {
		if (strcmp(*m, name) == 0)
			return true;
	}
	return false;
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static void backend_unavailable(const char *backend, char *err, size_t errlen)
{
	char list[128] = "";
	const char **m;
	size_t len = 0;

	for (m = usl_loop_backends_available(); *m && len < sizeof(list); m++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
					len ? ", " : "", *m);
	set_err(err, errlen, "event loop backend \"%s\" is not available (available: %s)",
		backend, len ? list : "none");
}

/* Converts a delay to a timeval, rounding up so we never wake early. */
static struct timeval delay_to_tv(usl_time delay)
{
	int64_t us = delay.ns <= 0 ? 0 : (delay.ns + 999) / 1000;
	struct timeval tv;

	tv.tv_sec = (time_t)(us / 1000000);
	tv.tv_usec = (suseconds_t)(us % 1000000);
	return tv;
}

static void loop_timers_changed(struct usl_timerset *ts, void *arg)
{
	struct usl_loop *l = arg;
	usl_time next = usl_timerset_next(ts);
	struct timeval tv;

	if (usl_time_is_never(next)) {
		if (!usl_time_is_never(l->armed))
			evtimer_del(l->timer_ev);
		l->armed = USL_TIME_NEVER;
		return;
	}
	next.ns = (next.ns + USL_TIMER_GRID_NS - 1) / USL_TIMER_GRID_NS * USL_TIMER_GRID_NS;
	if (usl_time_cmp(next, l->armed) == 0 && evtimer_pending(l->timer_ev, NULL))
		return;		/* same grid cell: nothing to tell libevent */
	l->armed = next;
	/* a clock that lags would still read short of next when woken at it */
	tv = delay_to_tv(usl_time_add(usl_time_sub(next, usl_timerset_now(ts)),
				      usl_clock_lag(ts->clock)));
	evtimer_add(l->timer_ev, &tv);
}

/*
 * Each callback is timed: one that blocks (a system call waiting on a
 * stalled peer) keeps every other socket and timer waiting that long.
 */
static usl_time busy_start(struct usl_loop *l)
{
	return usl_timerset_now(&l->timers);
}

static void busy_end(struct usl_loop *l, usl_time t0)
{
	usl_stall_count(&l->busy, usl_time_sub(usl_timerset_now(&l->timers), t0));
}

static void loop_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct usl_loop *l = arg;
	usl_time t0 = busy_start(l);

	l->armed = USL_TIME_NEVER;
	usl_timerset_run(&l->timers);
	busy_end(l, t0);
}

struct usl_loop *usl_loop_new(const char *backend, char *err, size_t errlen)
{
	struct usl_loop *l;

	event_set_log_callback(libevent_log);
	if (backend && !backend_is_available(backend)) {
		backend_unavailable(backend, err, errlen);
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (l == NULL) {
		set_err(err, errlen, "out of memory");
		return NULL;
	}
	l->base = base_new_only(backend);
	if (l->base == NULL) {
		set_err(err, errlen, "cannot create the libevent event base");
		goto fail;
	}
	/* Belt and braces: never run on a backend other than the one asked for. */
	if (backend && strcmp(event_base_get_method(l->base), backend) != 0) {
		backend_unavailable(backend, err, errlen);
		goto fail;
	}
	l->timer_ev = evtimer_new(l->base, loop_timer_cb, l);
	if (l->timer_ev == NULL) {
		set_err(err, errlen, "cannot create the loop timer event");
		goto fail;
	}
	/*
	 * Every timer armed reads the clock: some twenty reads per pseudowire
	 * brought up, each a system call with a clocksource the vDSO cannot
	 * read.  The coarse clock never is; its tick (1-10 ms) is within the
	 * wake-up grid's lateness.
	 */
	usl_timerset_init(&l->timers, &usl_clock_coarse);
	l->armed = USL_TIME_NEVER;
	l->timers.on_change = loop_timers_changed;
	l->timers.on_change_arg = l;
	return l;
fail:
	if (l->base)
		event_base_free(l->base);
	free(l);
	return NULL;
}

/*
 * Timers still armed are disarmed so that their owners' later cancel calls
 * are harmless.  Fds and signals must have been deleted by their owners.
 */
void usl_loop_free(struct usl_loop *l)
{
	struct usl_rb_node *n;

	if (l == NULL)
		return;
	l->timers.on_change = NULL;
	while ((n = usl_rb_first(&l->timers.tree)) != NULL)
		usl_timer_cancel(usl_rb_entry(n, struct usl_timer, node));
	event_free(l->timer_ev);
	event_base_free(l->base);
	free(l);
}

const char *usl_loop_backend(const struct usl_loop *l)
{
	return event_base_get_method(l->base);
}

void usl_loop_set_clock(struct usl_loop *l, const struct usl_clock *clock)
{
	l->timers.clock = clock;
}

const struct usl_stall *usl_loop_busy(const struct usl_loop *l)
{
	return &l->busy;
}

struct usl_timerset *usl_loop_timers(struct usl_loop *l)
{
	return &l->timers;
}

struct event_base *usl_loop_base(struct usl_loop *l)
{
	return l->base;
}

static inline short fd_events(short what)
{
	return (short)((what & (USL_READ | USL_WRITE)) | EV_PERSIST);
}

static void fd_cb(evutil_socket_t fd, short what, void *arg)
{
	struct usl_fd *f = arg;
	struct usl_loop *l = f->loop;	/* the callback may free f */
	usl_time t0 = busy_start(l);

	f->cb(fd, what & (USL_READ | USL_WRITE), f->arg);
	busy_end(l, t0);
}


struct usl_fd *usl_fd_add(struct usl_loop *l, int fd, short what, usl_fd_fn cb, void *arg)
{
	struct usl_fd *f;

	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return NULL;
	f->loop = l;
	f->fd = fd;
	f->what = what;
	f->cb = cb;
	f->arg = arg;
	f->ev = &f->ev_storage;
	if (event_assign(f->ev, l->base, fd, fd_events(what), fd_cb, f) < 0) {
		free(f);
		return NULL;
	}
	/* An event with nothing to watch is kept but not added. */
	if ((what & (USL_READ | USL_WRITE)) && event_add(f->ev, NULL) < 0)
		goto fail;
	return f;
fail:
	event_del(f->ev);
	free(f);
	return NULL;
}

int usl_fd_set_events(struct usl_fd *f, short what)
{
	if (what == f->what)
		return 0;
	/* libevent cannot change a pending event's flags: remove, reassign, re-add. */
	if (event_del(f->ev) < 0)
		return -1;
	f->what = what;
	if (event_assign(f->ev, f->loop->base, f->fd, fd_events(what), fd_cb, f) < 0)
		return -1;
	if ((what & (USL_READ | USL_WRITE)) && event_add(f->ev, NULL) < 0)
		return -1;
	return 0;
}

void usl_fd_del(struct usl_fd *f)
{
	if (f == NULL)
		return;
	event_del(f->ev);
	free(f);
}

void usl_fd_close(struct usl_fd **f, int *fd)
{
	usl_fd_del(*f);
	*f = NULL;
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void sig_cb(evutil_socket_t signo, short what, void *arg)
{
	struct usl_sig *s = arg;
	struct usl_loop *l = s->loop;	/* the callback may free s */
	usl_time t0 = busy_start(l);

	s->cb((int)signo, s->arg);
	busy_end(l, t0);
}

struct usl_sig *usl_sig_add(struct usl_loop *l, int signo, usl_sig_fn cb, void *arg)
{
	struct usl_sig *s;

	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->loop = l;
	s->cb = cb;
	s->arg = arg;
	s->ev = evsignal_new(l->base, signo, sig_cb, s);
	if (s->ev == NULL || event_add(s->ev, NULL) < 0) {
		if (s->ev)
			event_free(s->ev);
		free(s);
		return NULL;
	}
	return s;
}

void usl_sig_del(struct usl_sig *s)
{
	if (s == NULL)
		return;
	event_free(s->ev);
	free(s);
}

int usl_loop_run(struct usl_loop *l)
{
	/* Without NO_EXIT_ON_EMPTY libevent returns as soon as nothing is watched. */
	return event_base_loop(l->base, EVLOOP_NO_EXIT_ON_EMPTY) < 0 ? -1 : 0;
}

int usl_loop_run_once(struct usl_loop *l, bool block)
{
	return event_base_loop(l->base, block ? EVLOOP_ONCE : EVLOOP_NONBLOCK) < 0 ? -1 : 0;
}

void usl_loop_exit(struct usl_loop *l)
{
	event_base_loopbreak(l->base);
}
