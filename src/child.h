/*
 * src/child.h - one SIGCHLD reaper for every child the daemon runs.
 *
 * Hooks, pppd and whatever comes later share it: SIGCHLD does not say
 * which child exited, so one handler (on the daemon's loop, not in signal
 * context) reaps them all with waitpid(-1, WNOHANG) and hands each status to
 * whoever registered that pid.  A module that waited for its own children
 * with waitpid(pid) would race this reaper, so every child goes through here.
 * Children nobody watches (anymore) are reaped and forgotten.
 *
 * Lives in hooks.c.
 */
#ifndef L2TPD_CHILD_H
#define L2TPD_CHILD_H

#include <sys/types.h>

struct usl_loop;

/* Called from the loop once pid has exited; status as from waitpid(). */
typedef void (*child_exit_fn)(pid_t pid, int status, void *arg);

/*
 * Starts reaping on loop.  Counted: every module that runs children calls
 * it once before its first spawn (a child that exits before the handler is
 * in place would otherwise stay a zombie) and child_shutdown() when done;
 * the handler goes away with the last user, and with it every watch still
 * registered (those children are no longer reaped).  Only the first
 * caller's loop is used.  Must run after any daemonizing fork (libevent).
 * -1 with errno on failure.
 */
int child_init(struct usl_loop *loop);
void child_shutdown(void);

/*
 * Calls cb(pid, status, arg) once pid has exited.  Register right after the
 * spawn, from the same loop callback: the reaper runs only between loop
 * callbacks, so the exit cannot be missed.  -1 with errno (ENOMEM, EEXIST,
 * or EINVAL without child_init).
 */
int child_watch(pid_t pid, child_exit_fn cb, void *arg);
/* Forgets pid: it is still reaped, but no callback runs. */
void child_unwatch(pid_t pid);
/* Children watched and not yet reaped (shutdown, tests). */
unsigned child_count(void);

#endif
