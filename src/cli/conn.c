/*
 * src/cli/conn.c - the client end of the control socket: byte queues, a
 * non-blocking UNIX stream connection, request lines out, reply lines in.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ctl_proto.h"

#define READ_CHUNK	65536
#define FILL_ROUNDS	16	/* reads per wakeup, so a chatty daemon cannot starve stdin */

/* Makes room for n more bytes, reclaiming consumed ones before growing. */
static void buf_reserve(struct buf *b, size_t n)
{
	size_t cap;

	if (b->len + n <= b->cap)
		return;
	if (b->off) {
		memmove(b->data, b->data + b->off, b->len - b->off);
		b->len -= b->off;
		b->scan -= b->off;
		b->off = 0;
		if (b->len + n <= b->cap)
			return;
	}
	for (cap = b->cap ? b->cap : 4096; cap < b->len + n; cap *= 2)
		;
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
}

void buf_append(struct buf *b, const void *p, size_t n)
{
	buf_reserve(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

size_t buf_pending(const struct buf *b)
{
	return b->len - b->off;
}

/*
 * Takes the next complete line off the queue, NUL-terminated in place.  It
 * stays valid until the queue grows again.  The scan mark means a long
 * reply arriving in many reads is searched once, not once per read.
 */
char *buf_line(struct buf *b)
{
	char *nl, *line;

	if (b->scan < b->off)
		b->scan = b->off;
	if (b->scan == b->len)
		return NULL;
	nl = memchr(b->data + b->scan, '\n', b->len - b->scan);
	if (!nl) {
		b->scan = b->len;
		return NULL;
	}
	*nl = '\0';
	line = b->data + b->off;
	b->off = b->scan = (size_t)(nl - b->data) + 1;
	return line;
}

/* One read(2) into the queue: its result, like read(2). */
int buf_read(struct buf *b, int fd)
{
	ssize_t n;

	buf_reserve(b, READ_CHUNK);
	n = read(fd, b->data + b->len, b->cap - b->len);
	if (n > 0)
		b->len += (size_t)n;
	return n < 0 ? -1 : (int)(n > 0);
}

void buf_free(struct buf *b)
{
	free(b->data);
	memset(b, 0, sizeof *b);
}

/*
 * A full listen backlog would block connect(2) forever; on AF_UNIX the
 * send timeout bounds it (connect then fails with EAGAIN).
 */
static void set_connect_timeout(int fd, double timeout)
{
	struct timeval tv = {
		.tv_sec = (time_t)timeout,
		.tv_usec = (suseconds_t)((timeout - (double)(time_t)timeout) * 1e6),
	};

	if (timeout > 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* Connects to path; -1 with errno (the caller says what it means). */
int conn_open(struct conn *c, const char *path, double timeout)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	size_t len = strlen(path);
	int err;

	memset(c, 0, sizeof *c);
	c->fd = -1;
	if (len >= sizeof sun.sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sun.sun_path, path, len + 1);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -1;
	set_connect_timeout(c->fd, timeout);
	if (connect(c->fd, (struct sockaddr *)&sun, sizeof sun) == 0 &&
	    fcntl(c->fd, F_SETFL, O_NONBLOCK) == 0)
		return 0;
	err = errno;
	close(c->fd);
	c->fd = -1;
	errno = err;
	return -1;
}

void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	buf_free(&c->in);
	buf_free(&c->out);
}

/*
 * Queues {"id":N,"cmd":"...","args":{...}} (and "quiet":true).  No length check against
 * CTL_MAX_LINE: parse.c bounds every value, so a request stays far below.
 */
void conn_send(struct conn *c, const struct request *req, int64_t id)
{
	json_object *o = json_object_new_object();
	const char *s;
	size_t len;

	json_object_object_add(o, "id", json_object_new_int64(id));
	json_object_object_add(o, "cmd", json_object_new_string(req->cmd));
	json_object_object_add(o, "args", json_object_get(req->args));
	if (c->quiet)
		json_object_object_add(o, "quiet", json_object_new_boolean(1));
	s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN |
					      JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	buf_append(&c->out, s, len);
	buf_append(&c->out, "\n", 1);
	json_object_put(o);
}

/* Writes what the socket takes now; -1 only when the daemon is gone. */
int conn_flush(struct conn *c)
{
	while (buf_pending(&c->out)) {
		ssize_t n = send(c->fd, c->out.data + c->out.off, buf_pending(&c->out),
				 MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : -1;
		c->out.off += (size_t)n;
	}
	return 0;
}

/*
 * Reads what the socket has: 1, or 0 at EOF, or -1 on error; both of the
 * latter set c->eof so lines already buffered are still handed out.
 */
int conn_fill(struct conn *c)
{
	for (int i = 0; i < FILL_ROUNDS; i++) {
		int n = buf_read(&c->in, c->fd);

		if (n > 0)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 1;
		if (n < 0 && errno == EINTR)
			continue;
		c->eof = true;
		c->err = n < 0 ? errno : 0;
		return n;
	}
	return 1;
}

static struct timespec *left_until(double deadline, struct timespec *ts)
{
	double left;

	if (deadline < 0)
		return NULL;
	left = deadline - mono_now();
	if (left < 0)
		left = 0;
	ts->tv_sec = (time_t)left;
	ts->tv_nsec = (long)((left - (double)ts->tv_sec) * 1e9);
	return ts;
}

/*
 * Waits for the next line (flushing queued requests meanwhile) until
 * deadline (monotonic seconds, < 0: none).  NULL with errno ETIMEDOUT,
 * EPIPE (daemon closed), EINTR (a signal: the caller decides) or another.
 */
char *conn_wait_line(struct conn *c, double deadline)
{
	sigset_t none;

	sigemptyset(&none);
	for (;;) {
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		struct timespec ts;
		char *line = buf_line(&c->in);

		if (line)
			return line;
		if (c->eof) {
			errno = c->err ? c->err : EPIPE;
			return NULL;
		}
		if (conn_flush(c) < 0) {
			int e = errno;

			/* the daemon may have said why before it closed (a limit) */
			conn_fill(c);
			if ((line = buf_line(&c->in)) != NULL)
				return line;
			errno = e;
			return NULL;
		}
		if (buf_pending(&c->out))
			pfd.events |= POLLOUT;
		if (deadline >= 0 && mono_now() >= deadline) {
			errno = ETIMEDOUT;
			return NULL;
		}
		/*
		 * ppoll with an empty mask: the signals monitor mode blocks are
		 * delivered only here, so a SIGINT cannot slip in between the
		 * caller's check and the wait.
		 */
		if (ppoll(&pfd, 1, left_until(deadline, &ts), &none) < 0)
			return NULL;
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR))
			conn_fill(c);
	}
}

static const char *get_string(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/*
 * A status alone, exactly as the daemon writes it (every success of a -q
 * batch, CTL_STATUS_LINE_FMT) with the name we know for the status.  Read
 * without json-c, which would spend more on these lines than the rest of a
 * batch does: the two numbers are taken and the line written again must be
 * the same.  Any other line goes through json-c.
 */
static bool reply_parse_status(const char *line, struct reply *r)
{
	char again[CTL_STATUS_LINE_MAX];
	long long id;
	int st;

	if (sscanf(line, "{\"id\":%lld,\"status\":%d,", &id, &st) != 2)
		return false;
	ctl_status_line(again, id, st);
	if (strcmp(again, line) != 0)
		return false;
	r->id = id;
	r->status = st;
	r->status_name = ctl_status_name(st);
	return true;
}

/* json-c's tokener, kept for the whole run: one per line would cost over a quarter of the parse */
static json_object *line_parse(const char *line)
{
	static json_tokener *tok;

	if (tok == NULL && (tok = json_tokener_new()) == NULL)
		return NULL;
	json_tokener_reset(tok);
	return json_tokener_parse_ex(tok, line, (int)strlen(line));
}

/*
 * Decodes one line from the daemon.  A reply without an id gets id -1
 * (the daemon answers a request it could not read with no id, or id 0;
 * ours start at 1).  -1 with EPROTO if it is not a JSON object with a
 * status or an event.
 */
int reply_parse(const char *line, struct reply *r)
{
	json_object *o, *v;

	memset(r, 0, sizeof *r);
	r->id = -1;
	if (reply_parse_status(line, r))
		return 0;
	o = line_parse(line);
	if (!o || !json_object_is_type(o, json_type_object))
		goto bad;
	r->root = o;
	if (json_object_object_get_ex(o, "id", &v) && json_object_is_type(v, json_type_int))
		r->id = json_object_get_int64(v);
	if (json_object_object_get_ex(o, "event", &r->event))
		return 0;
	if (!json_object_object_get_ex(o, "status", &v) || !json_object_is_type(v, json_type_int))
		goto bad;
	r->status = json_object_get_int(v);
	r->status_name = get_string(o, "status_name");
	if (!r->status_name)
		r->status_name = ctl_status_name(r->status);
	r->error = get_string(o, "error");
	json_object_object_get_ex(o, "data", &r->data);
	return 0;
bad:
	json_object_put(o);
	r->root = NULL;
	errno = EPROTO;
	return -1;
}

/* Says why waiting for the daemon failed (errno values of conn_wait_line). */
void conn_report_error(int err, double timeout)
{
	switch (err) {
	case ETIMEDOUT:
		cli_warnx("timeout: no reply from l2tpv3d within %gs", timeout);
		break;
	case EPIPE:
	case ECONNRESET:
		cli_warnx("l2tpv3d closed the connection");
		break;
	case EPROTO:
		cli_warnx("bad reply from l2tpv3d (not a JSON reply object)");
		break;
	default:
		cli_warnx("connection to l2tpv3d: %s", strerror(err));
	}
}
