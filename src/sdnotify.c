/*
 * src/sdnotify.c - systemd's readiness protocol (sd_notify(3)) without
 * libsystemd: one datagram to the AF_UNIX socket named by $NOTIFY_SOCKET
 * (a leading '@' means the abstract namespace).  Silent when not under
 * systemd.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "l2tpv3d.h"
#include "usl/log.h"

void sd_notifyf(const char *fmt, ...)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char msg[256];
	va_list ap;
	socklen_t len;
	int fd;

	if (path == NULL || path[0] == '\0' || strlen(path) >= sizeof(sun.sun_path))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memcpy(sun.sun_path, path, strlen(path));
	if (sun.sun_path[0] == '@')
		sun.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sun, len) < 0)
		log_warn("sd_notify %s", msg);
	close(fd);
}
