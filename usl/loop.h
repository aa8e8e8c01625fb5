/*
 * usl/loop.h - a thin wrapper over libevent: fds, signals and one timerset.
 *
 * The backend (epoll or poll) is chosen at creation by telling libevent to
 * avoid every other method; asking for one the system lacks fails with a
 * message instead of silently falling back.  libevent keeps its fd set
 * incrementally, so nothing is rebuilt per turn.  The loop owns a usl
 * timerset driven by one libevent timer armed for the earliest expiry.
 */
#ifndef USL_LOOP_H
#define USL_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include "timer.h"

struct usl_loop;
struct usl_fd;
struct usl_sig;
struct event_base;

#define USL_READ  0x02	/* same values as libevent's EV_READ / EV_WRITE */
#define USL_WRITE 0x04

typedef void (*usl_fd_fn)(int fd, short what, void *arg);
typedef void (*usl_sig_fn)(int signo, void *arg);

/*
 * backend: "epoll", "poll" or NULL (libevent's best).  On failure returns
 * NULL and writes a one-line reason into err (size errlen).
 */
struct usl_loop *usl_loop_new(const char *backend, char *err, size_t errlen);
void usl_loop_free(struct usl_loop *l);
/* The method libevent actually uses ("epoll", "poll", ...). */
const char *usl_loop_backend(const struct usl_loop *l);
/* Backends libevent was built with and this system offers, NULL-terminated. */
const char **usl_loop_backends_available(void);
/* libevent blocks held in the loop's small-block region (loop.c explains why). */
size_t usl_loop_small_blocks(void);
/*
 * Frees what libevent allocated and handed over (evbuffer_readln()'s line):
 * it may come from that region, so never free() it.
 */
void usl_loop_mem_free(void *p);
struct usl_timerset *usl_loop_timers(struct usl_loop *l);
/* How long single callbacks (a socket's, a timer round's, a signal's) took. */
const struct usl_stall *usl_loop_busy(const struct usl_loop *l);
/* Another clock for the timers (tests: one that lags); before any is armed. */
void usl_loop_set_clock(struct usl_loop *l, const struct usl_clock *clock);
struct event_base *usl_loop_base(struct usl_loop *l);

/* Persistent fd watch; what = USL_READ and/or USL_WRITE.  NULL on failure. */
struct usl_fd *usl_fd_add(struct usl_loop *l, int fd, short what, usl_fd_fn cb, void *arg);
/* Changes the events watched (e.g. add USL_WRITE while a queue is pending). */
int usl_fd_set_events(struct usl_fd *f, short what);
void usl_fd_del(struct usl_fd *f);	/* stops watching; does not close fd */
/* Stops watching *f and closes *fd (either may be unset: NULL, -1); both left unset. */
void usl_fd_close(struct usl_fd **f, int *fd);

struct usl_sig *usl_sig_add(struct usl_loop *l, int signo, usl_sig_fn cb, void *arg);
void usl_sig_del(struct usl_sig *s);

/* Runs until usl_loop_exit(); 0, or -1 on a libevent failure. */
int usl_loop_run(struct usl_loop *l);
/* Runs one non-blocking or blocking pass (tests). */
int usl_loop_run_once(struct usl_loop *l, bool block);
void usl_loop_exit(struct usl_loop *l);

#endif
