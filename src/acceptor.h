/*
 * src/acceptor.h - a listening stream socket that never spins.  When
 * accept(2) fails for want of descriptors the listening socket stays
 * readable, and returning would make the loop call again at once: a
 * descriptor kept in reserve makes room to accept the waiting client and
 * refuse it, and without one accepting pauses for a while.  The control
 * socket and /metrics use it.
 */
#ifndef L2TPD_ACCEPTOR_H
#define L2TPD_ACCEPTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "usl/log.h"
#include "usl/loop.h"
#include "usl/timer.h"

struct acceptor {
	int fd;				/* listening, non-blocking */
	struct usl_fd *ev;
	int reserve_fd;			/* given up to accept a client when fds run out */
	struct usl_timer pause_timer;	/* ends a pause of accepting */
	struct log_ratelimit rl;
	const char *what;		/* "control", "metrics": names the log lines */
	/* tells a client it cannot be served (one non-blocking send) and closes it */
	void (*refuse)(int cfd, const char *why);
	/* frees a descriptor of the daemon's own, or false (may be NULL) */
	bool (*reclaim)(void);
	uint64_t *starved;		/* counts the accepts failed for want of descriptors */
};

/* Watches a->fd (set by the caller, with the fields above) and calls cb when a client waits. */
int acceptor_start(struct acceptor *a, usl_fd_fn cb, void *arg);
/* The next client (non-blocking, close-on-exec), or -1 when there is none or it was refused. */
int acceptor_accept(struct acceptor *a);
/* Stops watching, closes the listening socket and the reserve. */
void acceptor_stop(struct acceptor *a);

#endif
