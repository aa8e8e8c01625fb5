/*
 * src/pppd.c - PPP pseudowires: a PPPoL2TP socket attached to the kernel
 * session, and pppd (with its pppol2tp plugin) running on it.
 *
 * The kernel session (PW_TYPE PPP) is created over generic netlink first
 * (dp_kernel.c); connecting an AF_PPPOX/PX_PROTO_OL2TP socket with the
 * session's IDs binds a PPP channel to it (l2tp.rst, "PPPoL2TP Session
 * Socket API").  pppd gets that socket through the plugin's `pppol2tp FD`
 * option: Debian's plugin (ppp 2.4.9) has no L2TPv3 switch of its own, it
 * only drives whatever PPPoL2TP socket it is given, so v3 is decided by the
 * sockaddr we connect with (sockaddr_pppol2tpv3 / ...v3in6).
 *
 * The daemon closes its copy after the spawn: pppd is then the socket's
 * only holder, and pppd exiting releases the socket, which deletes the
 * kernel session as well (pppol2tp_release).  The exit reaches the daemon
 * through the child registry (child.h) and tears the L2TP session down.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if_pppox.h>

#include "child.h"
#include "l2tpv3d.h"

#define PPPD_DEFAULT	"/usr/sbin/pppd"
#define PPPD_FD		3	/* the socket's number in pppd */
#define PPPD_MAX_ARGS	64

extern char **environ;

const char *pppd_path(void)
{
	const char *p = getenv("L2TPV3D_PPPD");	/* tests point it elsewhere */

	return p && p[0] ? p : PPPD_DEFAULT;
}

/* The sockaddr that makes the kernel treat the socket as L2TPv3 (v4 or v6 peer). */
static socklen_t pppol2tp_addr(const struct session *s, struct sockaddr_storage *out)
{
	const struct tunnel *t = s->tunnel;
	uint32_t peer_tid = l2tp_cc_peer_ccid(t->cc), peer_sid = l2tp_sess_remote_sid(s->sess);

	memset(out, 0, sizeof(*out));
	if (t->remote.sa.sa_family == AF_INET6) {
		struct sockaddr_pppol2tpv3in6 *a = (void *)out;

		a->sa_family = AF_PPPOX;
		a->sa_protocol = PX_PROTO_OL2TP;
		a->pppol2tp.fd = t->fd;
		a->pppol2tp.s_tunnel = t->id;
		a->pppol2tp.s_session = s->id;
		a->pppol2tp.d_tunnel = peer_tid;
		a->pppol2tp.d_session = peer_sid;
		memcpy(&a->pppol2tp.addr, &t->remote, sizeof(a->pppol2tp.addr));
		return sizeof(*a);
	}
	struct sockaddr_pppol2tpv3 *a = (void *)out;

	a->sa_family = AF_PPPOX;
	a->sa_protocol = PX_PROTO_OL2TP;
	a->pppol2tp.fd = t->fd;
	a->pppol2tp.s_tunnel = t->id;
	a->pppol2tp.s_session = s->id;
	a->pppol2tp.d_tunnel = peer_tid;
	a->pppol2tp.d_session = peer_sid;
	memcpy(&a->pppol2tp.addr, &t->remote, sizeof(a->pppol2tp.addr));
	return sizeof(*a);
}

/* A PPPoL2TP socket bound to the existing kernel session of s; never fd PPPD_FD. */
static int pppol2tp_socket(const struct session *s, char *err, size_t errlen)
{
	struct sockaddr_storage a;
	socklen_t alen = pppol2tp_addr(s, &a);
	int fd = socket(AF_PPPOX, SOCK_DGRAM | SOCK_CLOEXEC, PX_PROTO_OL2TP), fd2;

	if (fd < 0) {
		snprintf(err, errlen, "PPPoL2TP socket: %s%s", strerror(errno),
			 errno == EAFNOSUPPORT || errno == EPROTONOSUPPORT ?
			 " (load l2tp_ppp)" : "");
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&a, alen) < 0) {
		snprintf(err, errlen, "PPPoL2TP connect: %s", strerror(errno));
		close(fd);
		return -1;
	}
	if (fd == PPPD_FD) {	/* dup2(3, 3) would leave close-on-exec set */
		fd2 = fcntl(fd, F_DUPFD_CLOEXEC, PPPD_FD + 1);
		close(fd);
		fd = fd2;
	}
	return fd;
}

/* Appends the whitespace-separated words of opts to argv (opts is modified). */
static int split_options(char *opts, char **argv, int argc)
{
	char *save = NULL;

	for (char *w = strtok_r(opts, " \t", &save); w != NULL; w = strtok_r(NULL, " \t", &save)) {
		if (argc >= PPPD_MAX_ARGS - 1)
			return -1;
		argv[argc++] = w;
	}
	argv[argc] = NULL;
	return argc;
}

static pid_t spawn_pppd(int fd, char **argv, char *err, size_t errlen)
{
	posix_spawn_file_actions_t fa;
	pid_t pid = -1;
	int rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fd, PPPD_FD);
	rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		snprintf(err, errlen, "cannot run %s: %s", argv[0], strerror(rc));
		errno = rc;
		return -1;
	}
	return pid;
}

pid_t pppd_start(const struct session *s, const char *ifname, child_exit_fn on_exit,
		 void *arg, char *err, size_t errlen)
{
	char *argv[PPPD_MAX_ARGS], opts[sizeof(s->prof->pppd_options)];
	int argc = 0, fd, e;
	pid_t pid;

	fd = pppol2tp_socket(s, err, errlen);
	if (fd < 0)
		return -1;
	argv[argc++] = (char *)pppd_path();
	argv[argc++] = "plugin";
	argv[argc++] = "pppol2tp.so";
	argv[argc++] = "pppol2tp";
	argv[argc++] = "3";		/* PPPD_FD */
	argv[argc++] = "nodetach";	/* stays our child: its exit ends the session */
	argv[argc++] = "ifname";
	argv[argc++] = (char *)ifname;
	snprintf(opts, sizeof(opts), "%s", s->prof->pppd_options);
	if (split_options(opts, argv, argc) < 0) {
		snprintf(err, errlen, "too many pppd_options");
		close(fd);
		errno = E2BIG;
		return -1;
	}
	pid = spawn_pppd(fd, argv, err, errlen);
	e = errno;
	close(fd);	/* pppd holds it now */
	if (pid > 0 && child_watch(pid, on_exit, arg) < 0) {
		e = errno;
		snprintf(err, errlen, "cannot watch pppd: %s", strerror(e));
		kill(pid, SIGTERM);
		pid = -1;
	}
	errno = e;
	return pid;
}

void pppd_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	child_unwatch(pid);	/* still reaped by the registry, no callback */
	kill(pid, SIGTERM);
}
