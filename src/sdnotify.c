/*
 * src/sdnotify.c - the daemon's side of systemd's service protocols, most
 * without libsystemd:
 *   - readiness (sd_notify(3)): one datagram to the AF_UNIX socket named by
 *     $NOTIFY_SOCKET (a leading '@' means the abstract namespace); silent
 *     when not under systemd;
 *   - the file descriptor store: the same datagrams, with SCM_RIGHTS;
 *   - descriptors passed at start (sd_listen_fds(3)): $LISTEN_PID,
 *     $LISTEN_FDS, $LISTEN_FDNAMES, descriptors from 3 on;
 *   - whether our unit is being restarted: a question to systemd over D-Bus,
 *     the only part that needs libsystemd (sd-bus).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_LIBSYSTEMD
/* Not <systemd/sd-daemon.h>: its svc_notifyf() is not ours (l2tpv3d.h). */
#include <systemd/sd-bus.h>
#endif

#include "l2tpv3d.h"
#include "sdnotify.h"
#include "usl/log.h"

/* systemd's limit on FDNAME= (and so on each $LISTEN_FDNAMES field). */
enum { FDNAME_MAX = 255 };
/* SD_LISTEN_FDS_START: the first descriptor systemd passes. */
enum { LISTEN_FDS_START = 3 };
/*
 * A store request is sent on SIGTERM: a service manager too busy to drain
 * its socket must not hold the daemon past its stop timeout.
 */
enum { NOTIFY_SEND_TIMEOUT_SEC = 2 };

static int fail(char *err, size_t len, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Formats the reason into err and returns rc, so error paths are one line. */
static int fail(char *err, size_t len, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && len > 0) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* $NOTIFY_SOCKET as an address; false when unset, empty or too long. */
static bool notify_address(struct sockaddr_un *sun, socklen_t *len)
{
	const char *path = getenv("NOTIFY_SOCKET");
	size_t n;

	if (path == NULL || path[0] == '\0')
		return false;
	n = strlen(path);
	if (n >= sizeof(sun->sun_path))
		return false;
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, path, n);
	if (sun->sun_path[0] == '@')
		sun->sun_path[0] = '\0';
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	return true;
}

void svc_notifyf(const char *fmt, ...)
{
	struct sockaddr_un sun;
	char msg[256];
	va_list ap;
	socklen_t len;
	int fd;

	if (!notify_address(&sun, &len))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sun, len) < 0)
		log_warn("sd_notify %s", msg);
	close(fd);
}

/* ---- the file descriptor store ------------------------------------------ */

/*
 * systemd's rule for a descriptor name: printable ASCII but ':' (the
 * separator of $LISTEN_FDNAMES), at most FDNAME_MAX.  Empty is refused too:
 * systemd would name such a descriptor "stored", which nobody asks for.
 */
static bool fdname_valid(const char *name)
{
	size_t n = 0;

	if (name == NULL || name[0] == '\0')
		return false;
	for (; name[n] != '\0'; n++)
		if (name[n] < ' ' || name[n] > '~' || name[n] == ':')
			return false;
	return n <= FDNAME_MAX;
}

/* One datagram: the text, and up to SD_FDSTORE_PER_DATAGRAM descriptors. */
static int notify_sendmsg(int sock, const struct sockaddr_un *sun, socklen_t sunlen,
			  const char *text, const int *fds, unsigned n)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * SD_FDSTORE_PER_DATAGRAM)];
	} control;
	struct iovec iov = { .iov_base = (void *)text, .iov_len = strlen(text) };
	struct msghdr mh = {
		.msg_name = (void *)sun, .msg_namelen = sunlen, .msg_iov = &iov, .msg_iovlen = 1,
	};
	struct cmsghdr *cm;

	if (n > 0) {
		memset(&control, 0, sizeof(control));
		mh.msg_control = control.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
	}
	while (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/* text to $NOTIFY_SOCKET, with fds split over as many datagrams as needed. */
static int notify_send(const char *text, const int *fds, unsigned n, char *err, size_t errlen)
{
	struct timeval tv = { .tv_sec = NOTIFY_SEND_TIMEOUT_SEC };
	unsigned datagrams = n == 0 ? 1 : (n + SD_FDSTORE_PER_DATAGRAM - 1) / SD_FDSTORE_PER_DATAGRAM;
	unsigned sent = 0, chunk;
	struct sockaddr_un sun;
	socklen_t sunlen;
	int sock, rc;

	if (!notify_address(&sun, &sunlen))
		return fail(err, errlen, -ENOTSUP, "not under systemd (no usable NOTIFY_SOCKET)");
	sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return fail(err, errlen, -errno, "notify socket: %s", strerror(errno));
	(void)setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	do {
		chunk = n - sent < SD_FDSTORE_PER_DATAGRAM ? n - sent : SD_FDSTORE_PER_DATAGRAM;
		rc = notify_sendmsg(sock, &sun, sunlen, text, n > 0 ? fds + sent : NULL, chunk);
		if (rc < 0)
			fail(err, errlen, rc, "sending to %s (datagram %u of %u): %s",
			     getenv("NOTIFY_SOCKET"), sent / SD_FDSTORE_PER_DATAGRAM + 1, datagrams,
			     strerror(-rc));
		sent += chunk;
	} while (rc == 0 && sent < n);
	close(sock);
	return rc;
}

int sd_fdstore_put(const char *name, const int *fds, unsigned n, char *err, size_t errlen)
{
	char text[sizeof("FDSTORE=1\nFDNAME=\nFDPOLL=0") + FDNAME_MAX];

	if (!fdname_valid(name))
		return fail(err, errlen, -EINVAL, "invalid descriptor name (1 to %d printable "
			    "characters, no ':')", FDNAME_MAX);
	if (fds == NULL || n == 0)
		return fail(err, errlen, -EINVAL, "no descriptors to store under %s", name);
	/* FDPOLL=0: systemd would refuse what epoll cannot watch (a memfd). */
	snprintf(text, sizeof(text), "FDSTORE=1\nFDNAME=%s\nFDPOLL=0", name);
	return notify_send(text, fds, n, err, errlen);
}

int sd_fdstore_remove(const char *name, char *err, size_t errlen)
{
	char text[sizeof("FDSTOREREMOVE=1\nFDNAME=") + FDNAME_MAX];

	if (!fdname_valid(name))
		return fail(err, errlen, -EINVAL, "invalid descriptor name (1 to %d printable "
			    "characters, no ':')", FDNAME_MAX);
	snprintf(text, sizeof(text), "FDSTOREREMOVE=1\nFDNAME=%s", name);
	return notify_send(text, NULL, 0, err, errlen);
}

/* ---- descriptors passed at start ---------------------------------------- */

/*
 * What systemd passed, read once: the environment may be gone by the next
 * call (sd_listen_close_rest() unsets it).  names holds $LISTEN_FDNAMES with
 * each ':' made a NUL; it and taken are NULL when the names are missing or
 * do not match the count, and then nothing can be taken by name.
 */
static struct {
	bool parsed;
	bool closed;		/* sd_listen_close_rest() ran: nothing left to take */
	unsigned n;
	char *names;
	bool *taken;
} passed;

/* A decimal number without sign, blanks or trailing text, at most max. */
static bool parse_ulong(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > max)
		return false;
	*out = v;
	return true;
}

/* The number of descriptors passed to this process, 0 for anything amiss. */
static unsigned listen_fds_count(void)
{
	long open_max = sysconf(_SC_OPEN_MAX);
	unsigned long pid, n;

	if (!parse_ulong(getenv("LISTEN_PID"), ULONG_MAX, &pid) || pid != (unsigned long)getpid())
		return 0;
	/* No descriptor can be numbered past our limit: a larger count is garbage. */
	if (open_max <= LISTEN_FDS_START || open_max > INT_MAX)
		open_max = INT_MAX;
	if (!parse_ulong(getenv("LISTEN_FDS"), (unsigned long)open_max - LISTEN_FDS_START, &n))
		return 0;
	return (unsigned)n;
}

/* $LISTEN_FDNAMES split, when it names exactly n descriptors. */
static void listen_names(const char *names, unsigned n)
{
	unsigned fields = 1;
	char *p;

	if (names == NULL)
		return;
	for (const char *c = names; *c != '\0'; c++)
		fields += *c == ':';
	if (fields != n)
		return;
	passed.names = strdup(names);
	passed.taken = calloc(n, sizeof(*passed.taken));
	if (passed.names == NULL || passed.taken == NULL) {
		free(passed.names);
		free(passed.taken);
		passed.names = NULL;
		passed.taken = NULL;
		return;
	}
	for (p = passed.names; (p = strchr(p, ':')) != NULL; p++)
		*p = '\0';
}

static void listen_parse(void)
{
	passed.parsed = true;
	passed.n = listen_fds_count();
	if (passed.n == 0)
		return;
	/* Until they are taken or closed, no child of ours may inherit them. */
	for (unsigned i = 0; i < passed.n; i++)
		(void)fcntl(LISTEN_FDS_START + (int)i, F_SETFD, FD_CLOEXEC);
	listen_names(getenv("LISTEN_FDNAMES"), passed.n);
}

int sd_listen_take(const char *name)
{
	const char *p;
	int fd;

	if (!passed.parsed)
		listen_parse();
	if (name == NULL || passed.names == NULL)
		return -1;
	p = passed.names;
	for (unsigned i = 0; i < passed.n; p += strlen(p) + 1, i++) {
		if (strcmp(p, name) != 0)
			continue;
		/* The first under a name decides: a duplicate is a stale store's. */
		if (passed.taken[i])
			return -1;
		fd = LISTEN_FDS_START + (int)i;
		if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
			return -1;	/* $LISTEN_FDS counted more than was passed */
		passed.taken[i] = true;
		return fd;
	}
	return -1;
}

void sd_listen_close_rest(void)
{
	if (!passed.parsed)
		listen_parse();
	if (!passed.closed) {
		for (unsigned i = 0; i < passed.n; i++)
			if (passed.taken == NULL || !passed.taken[i])
				close(LISTEN_FDS_START + (int)i);
		free(passed.names);
		free(passed.taken);
		passed.names = NULL;
		passed.taken = NULL;
		passed.closed = true;
	}
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
}

unsigned sd_listen_count(void)
{
	if (!passed.parsed)
		listen_parse();
	return passed.n;
}

/* ---- restart or stop ---------------------------------------------------- */

#ifdef HAVE_LIBSYSTEMD

/* The whole question, connecting included. */
enum { RESTART_QUERY_USEC = 2000000 };

/* sd_booted(3)'s test, which the service manager documents as stable. */
static bool booted_with_systemd(void)
{
	struct stat st;

	return lstat("/run/systemd/system/", &st) == 0 && S_ISDIR(st.st_mode);
}

static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	sd_bus_message **reply = userdata;

	*reply = sd_bus_message_ref(m);
	return 0;
}

/*
 * call's reply (maybe an error reply), waiting no later than deadline.
 * Not sd_bus_call(): it first waits for the connection to authenticate,
 * bounded only by sd-bus's own timeout, far beyond ours.
 */
static int bus_call(sd_bus *bus, sd_bus_message *call, uint64_t deadline, sd_bus_message **reply)
{
	sd_bus_slot *slot = NULL;
	uint64_t now = now_usec();
	int rc;

	*reply = NULL;
	if (now >= deadline)
		return -ETIMEDOUT;
	rc = sd_bus_call_async(bus, &slot, call, on_reply, reply, deadline - now);
	while (rc >= 0 && *reply == NULL) {
		now = now_usec();
		if (now >= deadline) {
			rc = -ETIMEDOUT;
			break;
		}
		rc = sd_bus_process(bus, NULL);
		if (rc == 0)
			rc = sd_bus_wait(bus, deadline - now);
		if (rc == -EINTR)
			rc = 0;
	}
	sd_bus_slot_unref(slot);
	if (rc < 0)
		*reply = sd_bus_message_unref(*reply);
	return rc < 0 ? rc : 0;
}

/*
 * call (freed here) answered without error: its reply, or -1 with why
 * ("<what>: <reason>").
 */
static int bus_ask(sd_bus *bus, sd_bus_message *call, int rc, uint64_t deadline,
		   const char *what, sd_bus_message **reply, char *why, size_t len)
{
	const sd_bus_error *e;

	if (rc >= 0)
		rc = bus_call(bus, call, deadline, reply);
	sd_bus_message_unref(call);
	if (rc < 0)
		return fail(why, len, -1, "%s: %s", what, strerror(-rc));
	if (!sd_bus_message_is_method_error(*reply, NULL))
		return 0;
	e = sd_bus_message_get_error(*reply);
	fail(why, len, -1, "%s: %s", what, e && e->message ? e->message : "error reply");
	*reply = sd_bus_message_unref(*reply);
	return -1;
}

/* A property of systemd's object at path (its reply, the variant unread). */
static int bus_property(sd_bus *bus, uint64_t deadline, const char *path, const char *iface,
			const char *name, sd_bus_message **reply, char *why, size_t len)
{
	sd_bus_message *call = NULL;
	int rc;

	rc = sd_bus_message_new_method_call(bus, &call, "org.freedesktop.systemd1", path,
					    "org.freedesktop.DBus.Properties", "Get");
	if (rc >= 0)
		rc = sd_bus_message_append(call, "ss", iface, name);
	return bus_ask(bus, call, rc, deadline, name, reply, why, len);
}

/* The object path of the unit our PID belongs to (allocated). */
static int unit_of_self(sd_bus *bus, uint64_t deadline, char **unit, char *why, size_t len)
{
	sd_bus_message *call = NULL, *reply;
	const char *path;
	int rc;

	rc = sd_bus_message_new_method_call(bus, &call, "org.freedesktop.systemd1",
					    "/org/freedesktop/systemd1",
					    "org.freedesktop.systemd1.Manager", "GetUnitByPID");
	if (rc >= 0)
		rc = sd_bus_message_append(call, "u", (uint32_t)getpid());
	if (bus_ask(bus, call, rc, deadline, "GetUnitByPID", &reply, why, len) < 0)
		return -1;
	if (sd_bus_message_read(reply, "o", &path) < 0)
		path = NULL;
	*unit = path ? strdup(path) : NULL;
	sd_bus_message_unref(reply);
	return *unit ? 0 : fail(why, len, -1, "GetUnitByPID: malformed reply or out of memory");
}

/* The object path of the unit's job (allocated), NULL when it has none. */
static int job_of_unit(sd_bus *bus, uint64_t deadline, const char *unit, char **job,
		       char *why, size_t len)
{
	sd_bus_message *reply;
	const char *path;
	uint32_t id;

	*job = NULL;
	if (bus_property(bus, deadline, unit, "org.freedesktop.systemd1.Unit", "Job", &reply,
			 why, len) < 0)
		return -1;
	if (sd_bus_message_read(reply, "v", "(uo)", &id, &path) < 0) {
		sd_bus_message_unref(reply);
		return fail(why, len, -1, "Job of %s: malformed reply", unit);
	}
	if (id != 0)
		*job = strdup(path);
	sd_bus_message_unref(reply);
	return id != 0 && *job == NULL ? fail(why, len, -1, "out of memory") : 0;
}

/* 1 when the job restarts the unit, 0 when it does something else. */
static int job_restarts(sd_bus *bus, uint64_t deadline, const char *job, char *why, size_t len)
{
	sd_bus_message *reply;
	const char *type;
	int rc;

	if (bus_property(bus, deadline, job, "org.freedesktop.systemd1.Job", "JobType", &reply,
			 why, len) < 0)
		return -1;
	if (sd_bus_message_read(reply, "v", "s", &type) < 0)
		rc = fail(why, len, -1, "JobType of %s: malformed reply", job);
	else
		rc = strcmp(type, "restart") == 0 || strcmp(type, "try-restart") == 0;
	sd_bus_message_unref(reply);
	return rc;
}

/* The question over one connection (address NULL: the system bus). */
static int restart_query(const char *address, uint64_t deadline, char *why, size_t len)
{
	char *unit = NULL, *job = NULL;
	sd_bus *bus = NULL;
	int rc;

	rc = address ? sd_bus_new(&bus) : sd_bus_open_system(&bus);
	if (rc >= 0 && address)
		rc = sd_bus_set_address(bus, address);
	if (rc >= 0 && address)
		rc = sd_bus_start(bus);
	if (rc < 0)
		rc = fail(why, len, -1, "%s", strerror(-rc));
	else if (unit_of_self(bus, deadline, &unit, why, len) < 0)
		rc = -1;
	else if (job_of_unit(bus, deadline, unit, &job, why, len) < 0)
		rc = -1;
	else
		rc = job ? job_restarts(bus, deadline, job, why, len) : 0;
	free(job);
	free(unit);
	/* Not sd_bus_flush_close_unref(): flushing may wait. */
	sd_bus_close_unref(bus);
	return rc;
}

int sd_restart_pending(char *why, size_t len)
{
	uint64_t deadline = now_usec() + RESTART_QUERY_USEC;
	char private[128], system[128];
	int rc;

	if (!booted_with_systemd())
		return fail(why, len, -1, "not running under systemd");
	/* systemd's own socket first: it answers even when the system bus is down. */
	rc = restart_query("unix:path=/run/systemd/private", deadline, private, sizeof(private));
	if (rc < 0)
		rc = restart_query(NULL, deadline, system, sizeof(system));
	if (rc < 0)
		fail(why, len, -1, "asking systemd: private bus: %s; system bus: %s", private, system);
	return rc;
}

#else

int sd_restart_pending(char *why, size_t len)
{
	return fail(why, len, -1, "built without libsystemd");
}

#endif
