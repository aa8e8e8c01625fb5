/*
 * src/agentx_probe.c - an AgentX rehearsal on the loop (see agentx_probe.h).
 * Wire format: RFC 2741 section 6, in network byte order (flag bit 4).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>

#include "agentx_probe.h"
#include "l2tpv3d.h"

#define AX_HDR_LEN		20
#define AX_OPEN			1
#define AX_CLOSE		2
#define AX_REGISTER		3
#define AX_RESPONSE		18
#define AX_FLAG_NBO		0x10
#define AX_REASON_OTHER		1
#define AX_PROBE_PRIORITY	255	/* lowest: never a duplicate of the real one */
#define AX_MAX_SUBIDS		32
#define AX_BUFSZ		512

enum step { STEP_CONNECT, STEP_OPEN, STEP_REGISTER, STEP_CLOSE };

static const char *const step_names[] = { "connect", "Open", "Register", "Close" };

static struct {
	bool active;
	int fd;
	struct usl_fd *ev;
	struct usl_timer deadline;
	bool timer_ready;
	enum step step;
	uint32_t session_id, packet_id;
	uint32_t subtree[AX_MAX_SUBIDS];
	size_t len;
	uint8_t in[AX_BUFSZ];
	size_t in_len;
	char why[160];
	bool failed;
	axprobe_done_fn done;
	void *arg;
} ax = { .fd = -1 };

/* ---- addresses ------------------------------------------------------------- */

static int parse_socket(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_un *un = (struct sockaddr_un *)ss;
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	char host[64];
	const char *colon;
	char *end;
	long port;

	memset(ss, 0, sizeof(*ss));
	if (strncmp(s, "unix:", 5) == 0)
		s += 5;
	if (s[0] == '/') {
		if (strlen(s) >= sizeof(un->sun_path))
			return -1;
		un->sun_family = AF_UNIX;
		strcpy(un->sun_path, s);
		*len = sizeof(*un);
		return 0;
	}
	if (strncmp(s, "tcp:", 4) != 0)
		return -1;
	s += 4;
	colon = strrchr(s, ':');
	if (colon == NULL || (size_t)(colon - s) >= sizeof(host))
		return -1;
	port = strtol(colon + 1, &end, 10);
	if (*end != '\0' || port <= 0 || port > 65535)
		return -1;
	snprintf(host, sizeof(host), "%.*s", (int)(colon - s), s);
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {	/* [v6] */
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	if (strcmp(host, "localhost") == 0)
		strcpy(host, "127.0.0.1");
	if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		*len = sizeof(*in);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*in6);
		return 0;
	}
	return -1;	/* a name would need a blocking lookup */
}

bool axprobe_supported(const char *socket)
{
	struct sockaddr_storage ss;
	socklen_t len;

	return parse_socket(socket, &ss, &len) == 0;
}

/* ---- PDUs ---------------------------------------------------------------------- */

static void put32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

static size_t pdu_header(uint8_t *p, uint8_t type, size_t payload)
{
	p[0] = 1;			/* h.version */
	p[1] = type;
	p[2] = AX_FLAG_NBO;
	p[3] = 0;
	put32(p + 4, ax.session_id);
	put32(p + 8, 0);		/* transactionID */
	put32(p + 12, ++ax.packet_id);
	put32(p + 16, (uint32_t)payload);
	return AX_HDR_LEN;
}

static size_t put_oid(uint8_t *p, const uint32_t *sub, size_t n)
{
	p[0] = (uint8_t)n;		/* n_subid; prefix 0, include 0 */
	p[1] = p[2] = p[3] = 0;
	for (size_t i = 0; i < n; i++)
		put32(p + 4 + 4 * i, sub[i]);
	return 4 + 4 * n;
}

static size_t build(uint8_t *buf, enum step step)
{
	static const char descr[] = "l2tpv3d probe";
	uint8_t *p = buf + AX_HDR_LEN;
	size_t n = 0, dlen = sizeof(descr) - 1;

	switch (step) {
	case STEP_OPEN:
		p[0] = 1;		/* o.timeout: 1 s */
		p[1] = p[2] = p[3] = 0;
		n = 4 + put_oid(p + 4, NULL, 0);
		put32(p + n, (uint32_t)dlen);
		memset(p + n + 4, 0, (dlen + 3) & ~3u);
		memcpy(p + n + 4, descr, dlen);
		n += 4 + ((dlen + 3) & ~3u);
		break;
	case STEP_REGISTER:
		p[0] = 1;		/* r.timeout */
		p[1] = AX_PROBE_PRIORITY;
		p[2] = p[3] = 0;	/* no range */
		n = 4 + put_oid(p + 4, ax.subtree, ax.len);
		break;
	case STEP_CLOSE:
		p[0] = AX_REASON_OTHER;
		p[1] = p[2] = p[3] = 0;
		n = 4;
		break;
	case STEP_CONNECT:
		break;
	}
	return pdu_header(buf, step == STEP_OPEN ? AX_OPEN : step == STEP_REGISTER ?
			  AX_REGISTER : AX_CLOSE, n) + n;
}

/* ---- the exchange ---------------------------------------------------------------- */

static void finish(bool ok)
{
	axprobe_done_fn done = ax.done;
	void *arg = ax.arg;
	char why[sizeof(ax.why)];

	snprintf(why, sizeof(why), "%s", ok ? "" : ax.why);
	axprobe_cancel();
	done(ok, why, arg);
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Records why and lets the deadline timer report it, at once, from the loop. */
static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ax.why, sizeof(ax.why), fmt, ap);
	va_end(ap);
	ax.failed = true;
	if (ax.ev != NULL)
		usl_fd_del(ax.ev);
	ax.ev = NULL;
	usl_timer_arm(l2tpd.timers, &ax.deadline, usl_time_ms(0));
}

static void send_step(enum step step)
{
	uint8_t buf[AX_HDR_LEN + 8 + 4 * AX_MAX_SUBIDS + 32];
	size_t n = build(buf, step);
	ssize_t w;

	ax.step = step;
	ax.in_len = 0;
	w = send(ax.fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (w != (ssize_t)n)	/* a few dozen bytes on a fresh socket: all or nothing */
		fail("%s: send: %s", step_names[step], w < 0 ? strerror(errno) : "short write");
	else
		usl_fd_set_events(ax.ev, USL_READ);
}

/* One Response, complete: its error decides; the next step, or done. */
static void on_response(const uint8_t *p, size_t payload)
{
	unsigned err;

	if (payload < 8) {
		fail("%s: malformed Response", step_names[ax.step]);
		return;
	}
	err = (unsigned)p[AX_HDR_LEN + 4] << 8 | p[AX_HDR_LEN + 5];
	if (err != 0) {
		fail("%s refused by the master (error %u)", step_names[ax.step], err);
		return;
	}
	switch (ax.step) {
	case STEP_OPEN:
		ax.session_id = get32(p + 4);
		send_step(STEP_REGISTER);
		break;
	case STEP_REGISTER:
		send_step(STEP_CLOSE);
		break;
	default:
		finish(true);
		break;
	}
}

static void on_readable(void)
{
	ssize_t r = recv(ax.fd, ax.in + ax.in_len, sizeof(ax.in) - ax.in_len, MSG_DONTWAIT);
	size_t payload;

	if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
		fail("%s: %s", step_names[ax.step], r == 0 ? "the master closed the connection"
							  : strerror(errno));
		return;
	}
	if (r < 0)
		return;
	ax.in_len += (size_t)r;
	if (ax.in_len < AX_HDR_LEN)
		return;
	if (!(ax.in[2] & AX_FLAG_NBO)) {	/* answers come in our byte order (6.1) */
		fail("%s: Response not in network byte order", step_names[ax.step]);
		return;
	}
	payload = get32(ax.in + 16);
	if (ax.in[1] != AX_RESPONSE || get32(ax.in + 12) != ax.packet_id ||
	    AX_HDR_LEN + payload > sizeof(ax.in)) {
		fail("%s: unexpected PDU type %u", step_names[ax.step], ax.in[1]);
		return;
	}
	if (ax.in_len >= AX_HDR_LEN + payload)
		on_response(ax.in, payload);
}

static void on_event(int fd, short what, void *arg)
{
	int err = 0;
	socklen_t len = sizeof(err);

	(void)fd;
	(void)arg;
	if (ax.step == STEP_CONNECT && (what & USL_WRITE)) {
		getsockopt(ax.fd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err != 0)
			fail("connect: %s", strerror(err));
		else
			send_step(STEP_OPEN);
		return;
	}
	if (what & USL_READ)
		on_readable();
}

static void on_deadline(struct usl_timer *tm)
{
	(void)tm;
	if (!ax.failed)
		snprintf(ax.why, sizeof(ax.why), "no answer to %s in time", step_names[ax.step]);
	finish(false);
}

int axprobe_start(const char *socket_str, const uint32_t *subtree, size_t len,
		  unsigned timeout_ms, axprobe_done_fn done, void *arg)
{
	struct sockaddr_storage ss;
	socklen_t sslen;
	int rc;

	if (ax.active || len > AX_MAX_SUBIDS || parse_socket(socket_str, &ss, &sslen) < 0) {
		errno = EINVAL;
		return -1;
	}
	if (!ax.timer_ready) {
		usl_timer_init(&ax.deadline, on_deadline);
		ax.timer_ready = true;
	}
	ax.fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (ax.fd < 0)
		return -1;
	ax.ev = usl_fd_add(l2tpd.loop, ax.fd, USL_WRITE, on_event, NULL);
	if (ax.ev == NULL) {
		close(ax.fd);
		ax.fd = -1;
		errno = ENOMEM;
		return -1;
	}
	ax.active = true;
	ax.failed = false;
	ax.done = done;
	ax.arg = arg;
	ax.session_id = ax.packet_id = 0;
	memcpy(ax.subtree, subtree, len * sizeof(*subtree));
	ax.len = len;
	ax.step = STEP_CONNECT;
	ax.why[0] = '\0';
	usl_timer_arm(l2tpd.timers, &ax.deadline, usl_time_ms(timeout_ms));
	rc = connect(ax.fd, (struct sockaddr *)&ss, sslen);
	if (rc < 0 && errno != EINPROGRESS)	/* a unix socket's EAGAIN: its backlog is full */
		fail("connect: %s", strerror(errno));
	return 0;
}

void axprobe_cancel(void)
{
	if (!ax.active)
		return;
	usl_timer_cancel(&ax.deadline);
	if (ax.ev != NULL)
		usl_fd_del(ax.ev);
	ax.ev = NULL;
	close(ax.fd);
	ax.fd = -1;
	ax.active = false;
}
