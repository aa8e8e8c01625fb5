/*
 * src/sdnotify.h - what the daemon asks of the service manager beyond
 * readiness (svc_notifyf(), in l2tpv3d.h): keeping descriptors across a
 * restart in systemd's file descriptor store, taking them back in the next
 * process, and telling a restart from a stop.
 *
 * The store is systemd's: FileDescriptorStoreMax= must leave room, and a
 * `systemctl stop` empties it.  systemd keeps its copy of a stored
 * descriptor until it is removed (sd_fdstore_remove()) or the unit stops,
 * and hands it to every later start, a start after a crash included.
 */
#ifndef L2TPD_SDNOTIFY_H
#define L2TPD_SDNOTIFY_H

#include <stddef.h>

/* SCM_MAX_FD: the most descriptors the kernel takes in one message. */
enum { SD_FDSTORE_PER_DATAGRAM = 253 };

/*
 * Sends fds to $NOTIFY_SOCKET under name ("FDSTORE=1", "FDNAME=", "FDPOLL=0":
 * systemd does not watch them, so a memfd is accepted), SD_FDSTORE_PER_DATAGRAM
 * at a time.  The caller keeps its own descriptors.  0, or -errno with the
 * reason in err: -ENOTSUP when not under systemd, -EINVAL for a name systemd
 * would refuse or no fds.  After a failure some datagrams may have been
 * accepted; sd_fdstore_remove() drops them.  0 does not mean stored: systemd
 * ignores the message silently when the store is full or disabled.
 */
int sd_fdstore_put(const char *name, const int *fds, unsigned n, char *err, size_t errlen);

/* Drops every descriptor stored under name ("FDSTOREREMOVE=1").  As above. */
int sd_fdstore_remove(const char *name, char *err, size_t errlen);

/*
 * The descriptor passed under name ($LISTEN_FDNAMES), close-on-exec, or -1
 * when none was (or it was taken already: a name is taken once).  The
 * variables are read at the first call of any sd_listen_*(), and only when
 * $LISTEN_PID is this process; malformed ones count as nothing passed.
 */
int sd_listen_take(const char *name);
/* Closes every passed descriptor not taken and unsets $LISTEN_PID,
 * $LISTEN_FDS and $LISTEN_FDNAMES, so that children inherit neither. */
void sd_listen_close_rest(void);
/* How many descriptors were passed, taken or not. */
unsigned sd_listen_count(void);

/*
 * 1 when the service manager is restarting our unit (found by our PID; its
 * job is "restart" or "try-restart"), 0 when it is not (a stop job, no job),
 * -1 when it cannot tell (not under systemd, no bus, built without
 * libsystemd), with the reason in why.  Asks systemd over its private bus
 * (root), else over the system bus, and gives up after 2 s.
 */
int sd_restart_pending(char *why, size_t len);

#endif
