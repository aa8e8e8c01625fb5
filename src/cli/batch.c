/*
 * src/cli/batch.c - -b: many commands over one connection, pipelined.
 *
 * At most `window` requests are in flight.  Input is read only while the
 * window has room, so a producer writing to our stdin sees replies before
 * it has finished writing, and memory stays bounded however long the input.
 * Replies come back in any order and find their line through their id.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ctl_proto.h"

#define STDOUT_BUFFER	65536

struct slot {
	bool busy;
	uint64_t gen;			/* uses so far: makes ids unique */
	int64_t id;
	unsigned long line;
	struct request req;
};

struct batch {
	struct conn *c;
	const struct output *out;
	int in_fd;
	bool in_eof;
	struct buf in;			/* input bytes not yet turned into requests */
	struct slot *slots;		/* window of them */
	unsigned *free_slots;		/* a stack of indexes into slots */
	unsigned n_free, window;
	unsigned long lineno;
	double timeout;			/* seconds without a reply; 0: none */
	double last_progress;
	int rc;				/* worst exit status so far */
	bool quiet;			/* -q: only failures, then the counts */
	unsigned long commands, failed;	/* replies and unparsed lines */
};

/* EXIT_USAGE > EXIT_FAIL > 0: a parse error outranks a refused command. */
static void note(struct batch *b, int rc)
{
	if (rc > b->rc)
		b->rc = rc;
}

/*
 * An id encodes its slot (id = gen * window + slot + 1), so a reply finds
 * its request in O(1) whatever order replies arrive in, and ids never repeat.
 */
static struct slot *slot_take(struct batch *b)
{
	unsigned i = b->free_slots[--b->n_free];
	struct slot *s = &b->slots[i];

	s->busy = true;
	s->id = (int64_t)(s->gen++ * b->window + i + 1);
	return s;
}

static struct slot *slot_find(struct batch *b, int64_t id)
{
	struct slot *s;

	if (id < 1)
		return NULL;
	s = &b->slots[(uint64_t)(id - 1) % b->window];
	return s->busy && s->id == id ? s : NULL;
}

static void slot_put(struct batch *b, struct slot *s)
{
	request_free(&s->req);
	s->busy = false;
	b->free_slots[b->n_free++] = (unsigned)(s - b->slots);
}

static void batch_error(struct batch *b, const char *msg)
{
	b->commands++;
	b->failed++;
	cli_warnx("line %lu: %s", b->lineno, msg);
	b->out->batch_error(b->lineno, msg);
	note(b, EXIT_USAGE);
}

static void batch_line(struct batch *b, char *line)
{
	char *words[CLI_MAX_WORDS], err[CLI_ERRLEN];
	struct request req;
	struct slot *s;
	int n;

	b->lineno++;
	n = split_words(line, words, CLI_MAX_WORDS, err, sizeof err);
	if (n == 0)
		return;
	if (n < 0 || parse_command(n, words, &req, err, sizeof err) < 0) {
		batch_error(b, err);
		return;
	}
	if (req.kind == CMD_MONITOR) {
		request_free(&req);
		batch_error(b, "monitor: cannot be used in a batch");
		return;
	}
	/* the reply clock runs only while something is in flight */
	if (b->n_free == b->window)
		b->last_progress = mono_now();
	s = slot_take(b);
	s->line = b->lineno;
	s->req = req;
	conn_send(b->c, &req, s->id);
}

/* Turns buffered input lines into requests while the window has room. */
static void batch_feed(struct batch *b)
{
	char *line;

	while (b->n_free > 0 && (line = buf_line(&b->in)))
		batch_line(b, line);
}

static int batch_read_input(struct batch *b)
{
	int n = buf_read(&b->in, b->in_fd);

	if (n < 0 && errno != EINTR && errno != EAGAIN) {
		cli_warnx("reading the batch: %s", strerror(errno));
		return -1;
	}
	if (n == 0) {
		b->in_eof = true;
		/* a last line without its newline is still a line */
		if (buf_pending(&b->in) && b->in.data[b->in.len - 1] != '\n')
			buf_append(&b->in, "\n", 1);
	}
	return 0;
}

static void batch_reply(struct batch *b, const struct reply *r)
{
	struct slot *s = slot_find(b, r->id);

	if (r->event)
		return;		/* not ours: we never send monitor */
	if (!s) {
		cli_warnx("reply to no request of ours (id %lld): %s: %s", (long long)r->id,
			  r->status_name, r->error ? r->error : "-");
		note(b, EXIT_FAIL);
		return;
	}
	b->commands++;
	if (r->status != CTL_OK)
		b->failed++;
	if (!b->quiet || r->status != CTL_OK)
		b->out->batch_reply(s->line, &s->req, r);
	note(b, exit_status(r->status));
	slot_put(b, s);
}

static int batch_replies(struct batch *b)
{
	char *line;
	bool any = false;

	while ((line = buf_line(&b->c->in))) {
		struct reply r;

		if (reply_parse(line, &r) < 0) {
			conn_report_error(EPROTO, 0);
			return -1;
		}
		batch_reply(b, &r);
		json_object_put(r.root);
		any = true;
	}
	if (any)
		b->last_progress = mono_now();
	return 0;
}

static bool batch_done(const struct batch *b)
{
	return b->in_eof && !buf_pending(&b->in) && b->n_free == b->window;
}

/* Milliseconds poll may sleep: until the reply timeout, or forever when idle. */
static int poll_timeout(const struct batch *b)
{
	double left;

	if (b->n_free == b->window || b->timeout <= 0)
		return -1;
	left = b->last_progress + b->timeout - mono_now();
	return left <= 0 ? 0 : (int)(left * 1000) + 1;	/* round up: never wake early */
}

static int batch_socket_events(struct batch *b, short revents)
{
	int n, err;

	if ((revents & POLLOUT) && conn_flush(b->c) < 0) {
		conn_report_error(errno, 0);
		return -1;
	}
	if (!(revents & (POLLIN | POLLHUP | POLLERR)))
		return 0;
	n = conn_fill(b->c);
	err = errno;
	/* print what did arrive before saying the connection broke */
	if (batch_replies(b) < 0)
		return -1;
	if (n < 0) {
		conn_report_error(err, 0);
		return -1;
	}
	if (b->c->eof && !batch_done(b)) {
		conn_report_error(EPIPE, 0);
		return -1;
	}
	return 0;
}

/* One wait on the socket and, while the window has room, the input. */
static int batch_poll(struct batch *b)
{
	struct pollfd pfd[2] = {
		{ .fd = b->c->fd, .events = POLLIN },
		{ .fd = b->in_fd, .events = POLLIN },
	};
	bool want_input = !b->in_eof && b->n_free > 0;
	int n;

	if (buf_pending(&b->c->out))
		pfd[0].events |= POLLOUT;
	n = poll(pfd, want_input ? 2 : 1, poll_timeout(b));
	if (n < 0 && errno == EINTR)
		return 0;
	if (n < 0) {
		cli_warnx("poll: %s", strerror(errno));
		return -1;
	}
	if (n == 0 && poll_timeout(b) == 0) {
		conn_report_error(ETIMEDOUT, b->timeout);
		return -1;
	}
	if (batch_socket_events(b, pfd[0].revents) < 0)
		return -1;
	if (want_input && pfd[1].revents)
		return batch_read_input(b);
	return 0;
}

static void batch_alloc(struct batch *b)
{
	b->slots = xmalloc(b->window * sizeof *b->slots);
	memset(b->slots, 0, b->window * sizeof *b->slots);
	b->free_slots = xmalloc(b->window * sizeof *b->free_slots);
	for (unsigned i = 0; i < b->window; i++)
		b->free_slots[i] = b->window - 1 - i;	/* slot 0 on top */
}

static void batch_free(struct batch *b)
{
	for (unsigned i = 0; i < b->window; i++)
		if (b->slots[i].busy)
			request_free(&b->slots[i].req);
	free(b->slots);
	free(b->free_slots);
	buf_free(&b->in);
}

/*
 * Runs the commands read from in_fd over c (quiet: printing failures only,
 * then the counts); returns the exit status: 2 if
 * a line did not parse (or was refused as invalid), else 1 if a command
 * failed or the daemon went away, else 0.
 */
int batch_run(struct conn *c, int in_fd, const struct output *out,
	      unsigned window, double timeout, bool quiet)
{
	struct batch b = {
		.c = c, .out = out, .in_fd = in_fd, .window = window,
		.n_free = window, .timeout = timeout, .quiet = quiet,
	};

	parse_stdin_taken();
	/* one write per wakeup, not one per reply; flushed before each wait */
	setvbuf(stdout, NULL, _IOFBF, STDOUT_BUFFER);
	batch_alloc(&b);
	for (;;) {
		batch_feed(&b);
		if (conn_flush(c) < 0) {
			conn_report_error(errno, 0);
			note(&b, EXIT_FAIL);
			break;
		}
		if (batch_done(&b))
			break;
		fflush(stdout);
		if (batch_poll(&b) < 0) {
			note(&b, EXIT_FAIL);
			break;
		}
	}
	if (quiet)
		out->batch_summary(b.commands, b.failed);
	fflush(stdout);
	batch_free(&b);
	return b.rc;
}
