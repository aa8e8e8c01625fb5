/*
 * src/cli/l2tpv3ctl.c - the command-line client of l2tpv3d.
 *
 *   l2tpv3ctl [-s SOCKET] [-j] [-t TIMEOUT] [-b FILE|-] [-w WINDOW] COMMAND ...
 *
 * One command: connect, send one request, print its one reply.  -b: many
 * commands pipelined over one connection (batch.c).  monitor: print events
 * until interrupted.  The protocol is doc/ctl-protocol.md.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ctl_proto.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION	"unknown"
#endif

#define DEFAULT_TIMEOUT	30.0
/*
 * A create waits for the peer; the daemon itself gives up after its
 * retransmission cycle (1+2+4+8+8... s, about a minute by default) and then
 * answers, so the client must wait longer than that.
 */
#define CREATE_TIMEOUT	180.0
#define DEFAULT_WINDOW	64
#define MAX_WINDOW	65536

struct opts {
	const char *socket;
	const char *batch;		/* -b: FILE or "-" */
	bool json;
	bool quiet;			/* -q: nothing printed for a success */
	bool timeout_set;		/* monitor has no timeout unless asked */
	double timeout;			/* seconds; 0: wait forever */
	unsigned window;
};

static const char usage_text[] =
"usage: l2tpv3ctl [-s SOCKET] [-j] [-q] [-t TIMEOUT] [-b FILE|-] [-w WINDOW] COMMAND ...\n"
"\n"
"  -s SOCKET   control socket (default: $L2TPV3CTL_SOCKET, else\n"
"              " CTL_DEFAULT_SOCKET ")\n"
"  -j          JSON output: the reply's data; with -b, one object per reply\n"
"              line {\"line\",\"status\",\"status_name\",\"error\",\"data\"}\n"
"  -q          quiet: nothing printed for a command that succeeds (the daemon\n"
"              answers with the status alone); with -b, the counts at the end\n"
"  -t TIMEOUT  seconds to wait for a reply (default 30, 0: forever);\n"
"              monitor: stop after TIMEOUT seconds (default: never)\n"
"  -b FILE     run the commands in FILE (- for stdin), one per line,\n"
"              pipelined over one connection\n"
"  -w WINDOW   with -b: at most WINDOW requests in flight (default 64)\n"
"  -h, -V      this help; the version\n"
"\n"
"commands (keywords may be abbreviated, e.g. 'tun cr peer ...', 'sh dae'):\n"
"  tunnel create (peer ADDR | pool NAME) [local ADDR] [encap udp|ip] [profile NAME]\n"
"         [name NAME] [secret S|-] [secret-file PATH] [digest none|md5|sha1]\n"
"         [hello SECONDS] [src-port 1701|ephemeral] [description TEXT] [no-wait]\n"
"  tunnel delete (ID | name NAME) [result CODE]\n"
"  tunnel show (ID | name NAME)\n"
"  tunnel list\n"
"  session create tunnel (ID | name NAME) [profile NAME] [name NAME]\n"
"         [pw eth|eth_vlan|ppp] [cookie 0|4|8] [l2spec none|default]\n"
"         [seq none|non-ip|all] [ifname NAME] [remote-end-id ID]\n"
"         [description TEXT] [no-wait]\n"
"  session delete (ID | name NAME) [result CODE]\n"
"  session show (ID | name NAME)\n"
"  session list [tunnel (ID | name NAME)]\n"
"  show daemon\n"
"  stats [tunnel (ID | name NAME)]\n"
"  stats reset [tunnel (ID | name NAME)]\n"
"  metrics                    (Prometheus text format)\n"
"  reload\n"
"  restart\n"
"  failover takeover\n"
"  debug on (tunnel (ID | name NAME) | peer ADDR)\n"
"  debug off (tunnel (ID | name NAME) | peer ADDR)\n"
"  monitor [--reconnect] [events EVENT[,EVENT...]]\n"
"\n"
"ADDR: 192.0.2.1, 2001:db8::1, 192.0.2.1:1701 or [2001:db8::1]:1701.\n"
"Exit status: 0 ok, 1 failed or daemon unreachable, 2 bad arguments.\n";

static volatile sig_atomic_t interrupted;

static void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs(CLI_NAME ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\ntry '" CLI_NAME " -h'\n", stderr);
	exit(EXIT_USAGE);
}

static double parse_seconds(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0 || v > 1e7)
		usage_error("bad value '%s' for -t (expected seconds, 0 for none)", s);
	return v;
}

static unsigned parse_window(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < 1 || v > MAX_WINDOW)
		usage_error("bad value '%s' for -w (expected 1 to %d)", s, MAX_WINDOW);
	return (unsigned)v;
}

static void bad_option(int ch, int optopt_ch, const char *word)
{
	if (ch == ':')
		usage_error("missing value for option '%s'", word);
	if (optopt_ch)
		usage_error("unknown option '-%c'", optopt_ch);
	usage_error("unknown option '%s'", word);
}

static const struct option long_opts[] = {
	{ "socket", required_argument, NULL, 's' },
	{ "json", no_argument, NULL, 'j' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "timeout", required_argument, NULL, 't' },
	{ "batch", required_argument, NULL, 'b' },
	{ "window", required_argument, NULL, 'w' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

/*
 * "+": options only before the command, so "--no-wait" and values that
 * start with '-' reach the command parser untouched.
 */
static int parse_opts(int argc, char *argv[], struct opts *o)
{
	const char *env = getenv("L2TPV3CTL_SOCKET");
	int ch;

	*o = (struct opts){
		.socket = env && *env ? env : CTL_DEFAULT_SOCKET,
		.timeout = DEFAULT_TIMEOUT,
		.window = DEFAULT_WINDOW,
	};
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:s:jqt:b:w:hV", long_opts, NULL)) != -1) {
		switch (ch) {
		case 's': o->socket = optarg; break;
		case 'j': o->json = true; break;
		case 'q': o->quiet = true; break;
		case 't': o->timeout = parse_seconds(optarg); o->timeout_set = true; break;
		case 'b': o->batch = optarg; break;
		case 'w': o->window = parse_window(optarg); break;
		case 'h': fputs(usage_text, stdout); exit(0);
		case 'V': printf(CLI_NAME " (l2tpv3d) %s\n", PACKAGE_VERSION); exit(0);
		default: bad_option(ch, optopt, argv[optind - 1]);
		}
	}
	return optind;
}

static int connect_daemon(struct conn *c, const struct opts *o)
{
	if (conn_open(c, o->socket, o->timeout) == 0) {
		c->quiet = o->quiet;
		return 0;
	}
	if (errno == EAGAIN)
		cli_warnx("cannot reach l2tpv3d at %s: it did not accept the connection "
			  "within %gs", o->socket, o->timeout);
	else
		cli_warnx("cannot reach l2tpv3d at %s: %s (%s)", o->socket, strerror(errno),
			  errno == EACCES || errno == EPERM
			  ? "are you in the daemon's ctl_group?" : "is the daemon running?");
	return -1;
}

/*
 * Reads lines until the reply to id.  A reply without an id (or id 0) is
 * ours too: the daemon could not read our request, and we have only one
 * outstanding.
 */
static int wait_reply(struct conn *c, int64_t id, double deadline, struct reply *r)
{
	for (;;) {
		char *line = conn_wait_line(c, deadline);

		if (!line || reply_parse(line, r) < 0)
			return -1;
		if (!r->event && (r->id == id || r->id <= 0))
			return 0;
		json_object_put(r->root);
	}
}

static double request_timeout(const struct opts *o, const struct request *req)
{
	if (!o->timeout_set && strstr(req->cmd, " create") != NULL)
		return CREATE_TIMEOUT;
	return o->timeout;
}

/* One request on a connection of its own: 0 with its reply in *r, or -1 (said why). */
static int request_once(const struct opts *o, const struct request *req, double timeout,
			struct reply *r)
{
	double deadline = timeout > 0 ? mono_now() + timeout : -1;
	struct conn c;

	if (connect_daemon(&c, o) < 0)
		return -1;
	conn_send(&c, req, 1);
	if (wait_reply(&c, 1, deadline, r) < 0) {
		conn_report_error(errno, timeout);
		conn_close(&c);
		return -1;
	}
	conn_close(&c);
	return 0;
}

static int run_single(const struct opts *o, const struct output *out,
		      const struct request *req)
{
	struct reply r;
	int rc;

	if (request_once(o, req, request_timeout(o, req), &r) < 0)
		return EXIT_FAIL;
	if (!o->quiet || r.status != CTL_OK)
		out->result(req, &r);
	rc = exit_status(r.status);
	json_object_put(r.root);
	return rc;
}

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/*
 * SIGINT/SIGTERM end monitor with status 0.  They stay blocked except
 * inside ppoll() (conn_wait_line), so none is lost between check and wait.
 */
static void catch_stop_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t set;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

#define MONITOR_LOST	(-1)	/* the daemon went away: reconnect, if asked */
#define RECONNECT_FIRST	0.1	/* seconds before the first try, doubling... */
#define RECONNECT_MAX	2.0	/* ...up to this */

/*
 * -t (how long to watch) running out and Ctrl-C are the normal ends of
 * monitor; the daemon closing is MONITOR_LOST when reconnecting.
 */
static int monitor_end(int err, const struct opts *o, bool reconnect)
{
	if (err == ETIMEDOUT || (err == EINTR && interrupted))
		return 0;
	if (reconnect && (err == EPIPE || err == ECONNRESET))
		return MONITOR_LOST;
	conn_report_error(err, o->timeout);
	return EXIT_FAIL;
}

static int monitor_events(struct conn *c, const struct output *out, double deadline,
			  const struct opts *o, bool reconnect)
{
	for (;;) {
		char *line = conn_wait_line(c, deadline);
		struct reply r;

		if (!line && errno == EINTR && !interrupted)
			continue;
		if (!line)
			return monitor_end(errno, o, reconnect);
		if (reply_parse(line, &r) < 0) {
			conn_report_error(EPROTO, 0);
			return EXIT_FAIL;
		}
		if (r.event) {
			out->event(r.event);
			fflush(stdout);		/* whoever watches sees each event as it happens */
		}
		json_object_put(r.root);
	}
}

/* Subscribes on c and prints events until the end: an exit status or MONITOR_LOST. */
static int monitor_on(struct conn *c, const struct opts *o, const struct output *out,
		      const struct request *req, double deadline)
{
	bool reconnect = request_switch(req, "reconnect");
	struct reply r;
	int rc;

	conn_send(c, req, 1);
	if (wait_reply(c, 1, deadline, &r) < 0)
		return monitor_end(errno, o, reconnect);
	if (r.status != CTL_OK) {
		out->result(req, &r);
		rc = exit_status(r.status);
		json_object_put(r.root);
		return rc;
	}
	json_object_put(r.root);
	return monitor_events(c, out, deadline, o, reconnect);
}

/* Sleeps s seconds; false if a stop signal or the deadline came first. */
static bool monitor_pause(double s, double deadline)
{
	struct timespec ts;
	sigset_t none;

	if (deadline >= 0 && mono_now() + s > deadline)
		s = deadline - mono_now();
	if (s <= 0 || interrupted)
		return false;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	sigemptyset(&none);
	ppoll(NULL, 0, &ts, &none);	/* the stop signals are delivered only here */
	return !interrupted && (deadline < 0 || mono_now() < deadline);
}

/* Connects again, backing off, until it does (0) or monitor must end (-1). */
static int monitor_reconnect(struct conn *c, const struct opts *o, double deadline)
{
	double wait = RECONNECT_FIRST;

	cli_warnx("l2tpv3d closed the connection: reconnecting to %s", o->socket);
	while (monitor_pause(wait, deadline)) {
		if (conn_open(c, o->socket, o->timeout) == 0)
			return 0;
		wait = wait * 2 < RECONNECT_MAX ? wait * 2 : RECONNECT_MAX;
	}
	return -1;
}

/*
 * Events until interrupted.  With "reconnect", a daemon that goes away
 * (a restart) is waited for; once subscribed again a marker says that
 * events may have been missed meanwhile.
 */
static int run_monitor(const struct opts *o, const struct output *out,
		       const struct request *req)
{
	double deadline = o->timeout_set && o->timeout > 0 ? mono_now() + o->timeout : -1;
	struct conn c;
	int rc;

	catch_stop_signals();
	if (connect_daemon(&c, o) < 0)
		return EXIT_FAIL;
	while ((rc = monitor_on(&c, o, out, req, deadline)) == MONITOR_LOST) {
		conn_close(&c);
		if (monitor_reconnect(&c, o, deadline) < 0)
			return 0;
		out->reconnected();
		fflush(stdout);
	}
	conn_close(&c);
	return rc;
}

/* The daemon's restart count and start object, asked anew; -1 when it does not answer. */
static int64_t daemon_restarts(const struct opts *o, json_object **start, double deadline)
{
	char *argv[] = { "show", "daemon" };
	char err[CLI_ERRLEN];
	struct request req;
	struct reply r;
	struct conn c;
	json_object *st = NULL, *n = NULL;
	int64_t v = -1;

	*start = NULL;
	if (parse_command(2, argv, &req, err, sizeof(err)) < 0)
		return -1;
	if (conn_open(&c, o->socket, 1) < 0) {
		request_free(&req);
		return -1;
	}
	conn_send(&c, &req, 1);
	if (wait_reply(&c, 1, deadline, &r) == 0) {
		if (r.status == CTL_OK && r.data != NULL &&
		    json_object_object_get_ex(r.data, "start", &st) &&
		    json_object_object_get_ex(st, "restarts", &n)) {
			v = json_object_get_int64(n);
			*start = json_object_get(st);
		}
		json_object_put(r.root);
	}
	conn_close(&c);
	request_free(&req);
	return v;
}

static void print_restarted(const struct opts *o, json_object *start)
{
	json_object *v;

	if (o->json) {
		printf("%s\n", json_object_to_json_string_ext(start, JSON_C_TO_STRING_PLAIN));
		return;
	}
	if (o->quiet)
		return;
	if (json_object_object_get_ex(start, "reason", &v)) {
		printf("restarted, state not carried over: %s\n", json_object_get_string(v));
		return;
	}
	printf("restarted: %" PRId64 " tunnels, ", json_object_object_get_ex(start, "tunnels_adopted",
	       &v) ? json_object_get_int64(v) : 0);
	printf("%" PRId64 " sessions carried over\n", json_object_object_get_ex(start,
	       "sessions_adopted", &v) ? json_object_get_int64(v) : 0);
}

/*
 * The daemon answers a restart before it execs: the new process is the one
 * that says how it went, by answering `show daemon` with one restart more.
 */
static int run_restart(const struct opts *o, const struct output *out, const struct request *req)
{
	double timeout = o->timeout_set && o->timeout > 0 ? o->timeout : 60;
	double deadline = mono_now() + timeout, wait = 0.02;
	json_object *start = NULL, *v;
	int64_t before = -1, now;
	struct reply r;

	if (request_once(o, req, timeout, &r) < 0)
		return EXIT_FAIL;
	if (r.status != CTL_OK) {
		out->result(req, &r);
		json_object_put(r.root);
		return exit_status(r.status);
	}
	if (r.data != NULL && json_object_object_get_ex(r.data, "restarts", &v))
		before = json_object_get_int64(v);
	json_object_put(r.root);
	while (mono_now() < deadline) {
		struct timespec ts = { 0, (long)(wait * 1e9) };

		nanosleep(&ts, NULL);
		wait = wait * 2 < 0.5 ? wait * 2 : 0.5;
		now = daemon_restarts(o, &start, deadline);
		if (now > before) {
			print_restarted(o, start);
			json_object_put(start);
			return 0;
		}
		json_object_put(start);
	}
	cli_warnx("l2tpv3d did not come back restarted within %gs (see its log)", timeout);
	return EXIT_FAIL;
}

static int run_batch(const struct opts *o, const struct output *out)
{
	int fd = strcmp(o->batch, "-") ? open(o->batch, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	struct conn c;
	int rc = EXIT_FAIL;

	if (fd < 0) {
		cli_warnx("cannot open %s: %s", o->batch, strerror(errno));
		return EXIT_FAIL;
	}
	if (connect_daemon(&c, o) == 0) {
		rc = batch_run(&c, fd, out, o->window, o->timeout_set ? o->timeout : CREATE_TIMEOUT,
			       o->quiet);
		conn_close(&c);
	}
	if (fd != STDIN_FILENO)
		close(fd);
	return rc;
}

static int run_command(const struct opts *o, const struct output *out,
		       int argc, char *argv[])
{
	char err[CLI_ERRLEN];
	struct request req;
	int rc;

	if (parse_command(argc, argv, &req, err, sizeof err) < 0) {
		cli_warnx("%s", err);
		return EXIT_USAGE;
	}
	if (req.kind == CMD_MONITOR)
		rc = run_monitor(o, out, &req);
	else if (req.kind == CMD_RESTART)
		rc = run_restart(o, out, &req);
	else
		rc = run_single(o, out, &req);
	request_free(&req);
	return rc;
}

int main(int argc, char *argv[])
{
	struct opts o;
	int first = parse_opts(argc, argv, &o);
	const struct output *out = o.json ? &output_json : &output_text;

	if (!o.batch)
		return run_command(&o, out, argc - first, argv + first);
	if (first < argc)
		usage_error("give either -b or a command, not both");
	return run_batch(&o, out);
}
