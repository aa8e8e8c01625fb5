/*
 * src/acceptor.c - a listening stream socket that never spins (see
 * acceptor.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "acceptor.h"
#include "l2tpv3d.h"

#define ACCEPT_PAUSE_MS	250	/* accept failing with no way out: try again after */

static void on_pause_end(struct usl_timer *t)
{
	struct acceptor *a = usl_container_of(t, struct acceptor, pause_timer);

	if (a->reserve_fd < 0)
		a->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	usl_fd_set_events(a->ev, USL_READ);
}

static void acceptor_pause(struct acceptor *a)
{
	usl_fd_set_events(a->ev, 0);
	usl_timer_arm(l2tpd.timers, &a->pause_timer, usl_time_ms(ACCEPT_PAUSE_MS));
}

/* Out of descriptors with a client waiting: refuse it through the reserve, or pause. */
static void acceptor_starved(struct acceptor *a, int err)
{
	int cfd, aerr;

	(*a->starved)++;
	log_warnx_rl(&a->rl, usl_timerset_now(l2tpd.timers),
		     "%s: accept: %s (refusing clients until descriptors free up)", a->what,
		     strerror(err));
	if (a->reserve_fd >= 0) {
		close(a->reserve_fd);
		cfd = accept4(a->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		aerr = errno;
		if (cfd >= 0)
			a->refuse(cfd, "l2tpv3d is out of file descriptors");
		a->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (a->reserve_fd >= 0 && (cfd >= 0 || aerr == EAGAIN || aerr == ECONNABORTED))
			return;
	}
	acceptor_pause(a);
}

int acceptor_accept(struct acceptor *a)
{
	int cfd = accept4(a->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	int e;

	while (cfd < 0 && (errno == EMFILE || errno == ENFILE) && a->reclaim != NULL &&
	       a->reclaim())
		cfd = accept4(a->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd >= 0)
		return cfd;
	e = errno;
	if (e == EMFILE || e == ENFILE) {
		acceptor_starved(a, e);
	} else if (e != EAGAIN && e != EINTR && e != ECONNABORTED) {
		/* ENOBUFS, ENOMEM...: the client stays queued, so wait rather than spin */
		log_warnx_rl(&a->rl, usl_timerset_now(l2tpd.timers), "%s: accept: %s", a->what,
			     strerror(e));
		acceptor_pause(a);
	}
	return -1;
}

int acceptor_start(struct acceptor *a, usl_fd_fn cb, void *arg)
{
	a->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (a->reserve_fd < 0)
		log_warn("%s: reserve descriptor: /dev/null", a->what);
	usl_timer_init(&a->pause_timer, on_pause_end);
	a->ev = usl_fd_add(l2tpd.loop, a->fd, USL_READ, cb, arg);
	return a->ev != NULL ? 0 : -1;
}

void acceptor_stop(struct acceptor *a)
{
	usl_timer_cancel(&a->pause_timer);
	usl_fd_close(&a->ev, &a->fd);
	if (a->reserve_fd >= 0)
		close(a->reserve_fd);
	a->reserve_fd = -1;
}
