/*
 * tests/unit/check_hooks.c - hook scripts run for real on a real usl loop.
 *
 * The scripts live in a temp dir and leave traces there (their environment,
 * start/end markers); the test drives the loop until the child registry is
 * empty.  hooks.c needs the daemon's global and a few helpers implemented
 * elsewhere: they are defined here, with fake engine objects.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "usl/log.h"
#include "usl/loop.h"
#include "child.h"
#include "l2tpv3d.h"
#include "proto/avp.h"

/* ---- what hooks.c borrows from the daemon and the engine ---- */

struct l2tpd l2tpd;

struct l2tp_cc {
	uint32_t peer_ccid;
	const char *host;
};

struct l2tp_sess {
	uint32_t remote_sid;
	uint16_t pw;
	const char *rei;
};

uint32_t l2tp_cc_peer_ccid(const struct l2tp_cc *cc) { return cc->peer_ccid; }
const char *l2tp_cc_peer_host_name(const struct l2tp_cc *cc) { return cc->host; }
uint32_t l2tp_sess_remote_sid(const struct l2tp_sess *s) { return s->remote_sid; }
uint16_t l2tp_sess_pw_type(const struct l2tp_sess *s) { return s->pw; }

const uint8_t *l2tp_sess_remote_end_id(const struct l2tp_sess *s, uint16_t *len)
{
	*len = s->rei ? (uint16_t)strlen(s->rei) : 0;
	return (const uint8_t *)s->rei;
}

const char *config_pw_type_name(uint16_t pw)
{
	return pw == 5 ? "eth" : pw == 4 ? "eth_vlan" : pw == 7 ? "ppp" : "unknown";
}

const char *sockaddr_ntop(const struct sockaddr *sa)
{
	static char buf[INET6_ADDRSTRLEN];
	const void *a = sa->sa_family == AF_INET6 ?
		(const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr :
		(const void *)&((const struct sockaddr_in *)sa)->sin_addr;

	if (inet_ntop(sa->sa_family, a, buf, sizeof(buf)) == NULL)
		snprintf(buf, sizeof(buf), "?");
	return buf;
}

uint16_t sockaddr_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return ntohs(((const struct sockaddr_in *)sa)->sin_port);
}

/* ---- fake objects ---- */

static struct tunnel *tunnel_new(uint32_t id, const char *name, const char *peer_host)
{
	struct tunnel *t = calloc(1, sizeof(*t));
	struct sockaddr_in *r = (struct sockaddr_in *)&t->remote;
	struct sockaddr_in *l = (struct sockaddr_in *)&t->local;

	t->cc = calloc(1, sizeof(*t->cc));
	ck_assert(t->cc != NULL);
	t->id = id;
	t->name = strdup(name);
	t->cc->peer_ccid = id + 1000;
	t->cc->host = peer_host;
	r->sin_family = AF_INET;
	r->sin_port = htons(1701);
	inet_pton(AF_INET, "192.0.2.1", &r->sin_addr);
	l->sin_family = AF_INET;
	l->sin_port = htons(40000);
	inet_pton(AF_INET, "198.51.100.7", &l->sin_addr);
	t->encap = L2TP_ENCAP_UDP;
	return t;
}

static void tunnel_free(struct tunnel *t)
{
	free(t->name);
	free(t->cc);
	free(t);
}

static struct session *session_new(struct tunnel *t, uint32_t id, const char *name,
				   const char *rei)
{
	struct session *s = calloc(1, sizeof(*s));

	s->sess = calloc(1, sizeof(*s->sess));
	ck_assert(s->sess != NULL);
	s->tunnel = t;
	s->id = id;
	s->name = strdup(name);
	snprintf(s->ifname, sizeof(s->ifname), "l2tpeth%u", id);
	s->sess->remote_sid = id + 5000;
	s->sess->pw = 5;
	s->sess->rei = rei;
	return s;
}

static void session_free(struct session *s)
{
	free(s->name);
	free(s->sess);
	free(s);
}

/* ---- captured log ---- */

enum { LOG_LINES = 128 };
static struct {
	enum log_level lvl;
	char msg[300];
} logs[LOG_LINES];
static unsigned n_logs;

static void log_capture(enum log_level lvl, const char *msg, void *arg)
{
	if (n_logs >= LOG_LINES)
		return;
	logs[n_logs].lvl = lvl;
	snprintf(logs[n_logs].msg, sizeof(logs[n_logs].msg), "%s", msg);
	n_logs++;
}

static unsigned log_count(enum log_level lvl, const char *needle)
{
	unsigned i, n = 0;

	for (i = 0; i < n_logs; i++) {
		if (logs[i].lvl == lvl && strstr(logs[i].msg, needle))
			n++;
	}
	return n;
}

/* ---- fixture ---- */

static char dir[64];
static struct l2tpd_config *conf;
static struct usl_timer tick;

static void tick_fn(struct usl_timer *t)
{
}

static void setup(void)
{
	char err[128];

	snprintf(dir, sizeof(dir), "/tmp/check_hooks.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	l2tpd.loop = usl_loop_new(NULL, err, sizeof(err));
	ck_assert_msg(l2tpd.loop != NULL, "%s", err);
	conf = calloc(1, sizeof(*conf));
	ck_assert_ptr_nonnull(conf);
	conf->hooks.max_concurrent = 8;
	conf->hooks.timeout_ms = 10000;
	l2tpd.conf = conf;
	usl_timer_init(&tick, tick_fn);
	n_logs = 0;
	log_set_level(LOG_LVL_DEBUG);
	log_set_sink(log_capture, NULL);
	ck_assert_int_eq(hooks_init(), 0);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void teardown(void)
{
	hooks_shutdown();
	/* Killed hooks die at once: collect them so no test inherits another's. */
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	usl_timer_cancel(&tick);
	usl_loop_free(l2tpd.loop);
	l2tpd.loop = NULL;
	l2tpd.conf = NULL;
	free(conf);
	log_set_sink(NULL, NULL);
	nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* Runs the loop until every watched child has been reaped; false on timeout. */
static bool wait_idle(int64_t ms)
{
	struct usl_timerset *ts = usl_loop_timers(l2tpd.loop);
	usl_time deadline = usl_time_add(usl_timerset_now(ts), usl_time_ms(ms));

	while (child_count() > 0) {
		if (usl_time_cmp(usl_timerset_now(ts), deadline) > 0)
			return false;
		/* The tick bounds each blocking pass, SIGCHLD usually ends it sooner. */
		usl_timer_arm(ts, &tick, usl_time_ms(20));
		ck_assert_int_eq(usl_loop_run_once(l2tpd.loop, true), 0);
	}
	usl_timer_cancel(&tick);
	return true;
}

/* Writes dir/name as an executable sh script; returns its path (static). */
static const char *script(const char *name, const char *fmt, ...)
{
	static char path[CFG_PATH_MAX];
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "#!/bin/sh\nDIR='%s'\n", dir);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(path, 0755), 0);
	return path;
}

static void set_hook(char *slot, const char *path)
{
	snprintf(slot, CFG_PATH_MAX, "%s", path);
}

/* Reads dir/name whole into buf; its length, or -1 when missing. */
static ssize_t slurp(const char *name, char *buf, size_t size)
{
	char path[CFG_PATH_MAX];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	return (ssize_t)n;
}

/* The value of KEY in an `env` dump, or NULL. */
static const char *env_get(const char *dump, const char *key)
{
	static char val[256];
	size_t klen = strlen(key);
	const char *p = dump, *eol;

	while (*p) {
		eol = strchr(p, '\n');
		if (eol == NULL)
			eol = p + strlen(p);
		if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
			snprintf(val, sizeof(val), "%.*s", (int)(eol - p - klen - 1), p + klen + 1);
			return val;
		}
		p = *eol ? eol + 1 : eol;
	}
	return NULL;
}

#define ck_assert_env(dump, key, want) do {					\
	const char *got_ = env_get((dump), (key));				\
	ck_assert_msg(got_ != NULL, "%s missing", (key));			\
	ck_assert_msg(strcmp(got_, (want)) == 0, "%s=\"%s\", want \"%s\"",	\
		      (key), got_, (want));					\
} while (0)

/* ---- tests ---- */

START_TEST(test_env_tunnel)
{
	struct tunnel *t = tunnel_new(5, "edge-1", "lns\nx");
	char dump[4096];

	set_hook(conf->hooks.tunnel_up, script("up", "env > \"$DIR/env.$1\"\n"));
	setenv("HOOKS_TEST_LEAK", "1", 1);
	hooks_run("tunnel-up", t, NULL);
	unsetenv("HOOKS_TEST_LEAK");
	tunnel_free(t);
	ck_assert(wait_idle(5000));

	ck_assert_int_gt(slurp("env.tunnel-up", dump, sizeof(dump)), 0);
	ck_assert_env(dump, "L2TP_EVENT", "tunnel-up");
	ck_assert_env(dump, "L2TP_TUNNEL_ID", "5");
	ck_assert_env(dump, "L2TP_PEER_TUNNEL_ID", "1005");
	ck_assert_env(dump, "L2TP_TUNNEL_NAME", "edge-1");
	ck_assert_env(dump, "L2TP_PEER_ADDR", "192.0.2.1");
	ck_assert_env(dump, "L2TP_PEER_PORT", "1701");
	ck_assert_env(dump, "L2TP_LOCAL_ADDR", "198.51.100.7");
	ck_assert_env(dump, "L2TP_ENCAP", "udp");
	ck_assert_env(dump, "L2TP_PEER_HOST_NAME", "lns?x");	/* control chars masked */
	ck_assert_env(dump, "PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
	ck_assert_ptr_null(env_get(dump, "L2TP_SESSION_ID"));
	ck_assert_ptr_null(env_get(dump, "HOOKS_TEST_LEAK"));	/* not our environment */
	ck_assert_uint_eq(log_count(LOG_LVL_WARN, ""), 0);
}
END_TEST

/* stdin is /dev/null, and none of the daemon's descriptors leak into the hook. */
START_TEST(test_stdio_and_fds)
{
	struct tunnel *t = tunnel_new(6, "fds", "peer");
	char buf[4096];
	int fd;

	fd = open("/dev/null", O_RDONLY);	/* no O_CLOEXEC, like a careless module */
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(dup2(fd, 57), 57);
	close(fd);
	set_hook(conf->hooks.tunnel_up,
		 script("fds", "readlink /proc/$$/fd/0 > \"$DIR/stdin\"\n"
			       "if [ -e /proc/$$/fd/57 ]; then echo leaked; else echo closed; fi"
			       " > \"$DIR/fd57\"\n"));
	hooks_run("tunnel-up", t, NULL);
	close(57);
	tunnel_free(t);
	ck_assert(wait_idle(5000));
	ck_assert_int_gt(slurp("stdin", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/dev/null\n");
	ck_assert_int_gt(slurp("fd57", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "closed\n");
}
END_TEST

/*
 * The session-down hook waits behind session-up for the same session; the
 * objects are freed before it runs, so it can only use what was copied
 * (valgrind/ASan catch any read of the freed objects).
 */
START_TEST(test_env_session_captured_at_event)
{
	struct tunnel *t = tunnel_new(7, "core", "lac-1");
	struct session *s = session_new(t, 9, "cust-a", "circuit-7");
	const char *path;
	char dump[4096];

	path = script("sess", "env > \"$DIR/env.$1\"\nsleep 0.05\n");
	set_hook(conf->hooks.session_up, path);
	set_hook(conf->hooks.session_down, path);
	t->encap = L2TP_ENCAP_IP;
	hooks_run("session-up", t, s);
	s->sess->remote_sid = 4242;
	snprintf(s->ifname, sizeof(s->ifname), "l2tpeth-late");
	hooks_run("session-down", NULL, s);	/* tunnel found through the session */
	ck_assert_uint_eq(child_count(), 1);	/* down waits for up */
	session_free(s);
	tunnel_free(t);
	ck_assert(wait_idle(5000));

	ck_assert_int_gt(slurp("env.session-up", dump, sizeof(dump)), 0);
	ck_assert_env(dump, "L2TP_SESSION_ID", "9");
	ck_assert_env(dump, "L2TP_PEER_SESSION_ID", "5009");
	ck_assert_env(dump, "L2TP_IFNAME", "l2tpeth9");

	ck_assert_int_gt(slurp("env.session-down", dump, sizeof(dump)), 0);
	ck_assert_env(dump, "L2TP_EVENT", "session-down");
	ck_assert_env(dump, "L2TP_TUNNEL_ID", "7");
	ck_assert_env(dump, "L2TP_TUNNEL_NAME", "core");
	ck_assert_env(dump, "L2TP_PEER_HOST_NAME", "lac-1");
	ck_assert_env(dump, "L2TP_ENCAP", "ip");
	ck_assert_env(dump, "L2TP_SESSION_ID", "9");
	ck_assert_env(dump, "L2TP_PEER_SESSION_ID", "4242");
	ck_assert_env(dump, "L2TP_SESSION_NAME", "cust-a");
	/* the words of the configuration and the CLI, which the man page's example tests */
	ck_assert_env(dump, "L2TP_PW_TYPE", "eth");
	ck_assert_env(dump, "L2TP_IFNAME", "l2tpeth-late");
	ck_assert_env(dump, "L2TP_REMOTE_END_ID", "circuit-7");
	ck_assert_env(dump, "PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
}
END_TEST

/*
 * Markers per object key "tunnel/session": every start must be followed by
 * its own end before the next start, events in the order they were raised.
 */
static void check_serial(const char *logbuf, const char *key, const char *const *events,
			 unsigned n)
{
	char want[128], line[128];
	const char *p = logbuf, *eol;
	unsigned i = 0;
	bool open = false;

	for (; *p; p = *eol ? eol + 1 : eol) {
		eol = strchr(p, '\n');
		if (eol == NULL)
			eol = p + strlen(p);
		snprintf(line, sizeof(line), "%.*s", (int)(eol - p), p);
		if (strrchr(line, ' ') == NULL || strcmp(strrchr(line, ' ') + 1, key) != 0)
			continue;
		ck_assert_msg(i < n, "%s: extra line \"%s\"", key, line);
		snprintf(want, sizeof(want), "%s %s %s", open ? "end" : "start", events[i], key);
		ck_assert_msg(strcmp(line, want) == 0, "%s: got \"%s\", want \"%s\"",
			      key, line, want);
		if (open)
			i++;
		open = !open;
	}
	ck_assert_msg(i == n && !open, "%s: %u of %u hooks seen", key, i, n);
}

START_TEST(test_serialised_per_object)
{
	static const char *const a_events[] = { "tunnel-up", "tunnel-down", "tunnel-up",
						"tunnel-down" };
	static const char *const b_events[] = { "tunnel-up", "tunnel-down" };
	static const char *const s_events[] = { "session-up", "session-down", "session-up" };
	struct tunnel *a = tunnel_new(1, "a", "peer");
	struct tunnel *b = tunnel_new(2, "b", "peer");
	struct session *s = session_new(a, 3, "s", NULL);
	const char *path;
	char buf[4096];
	unsigned i;

	path = script("mark", "K=\"$L2TP_TUNNEL_ID/${L2TP_SESSION_ID:-0}\"\n"
			      "echo \"start $1 $K\" >> \"$DIR/log\"\n"
			      "sleep 0.05\n"
			      "echo \"end $1 $K\" >> \"$DIR/log\"\n");
	set_hook(conf->hooks.tunnel_up, path);
	set_hook(conf->hooks.tunnel_down, path);
	set_hook(conf->hooks.session_up, path);
	set_hook(conf->hooks.session_down, path);
	for (i = 0; i < 2; i++) {
		hooks_run("tunnel-up", a, NULL);
		hooks_run("session-up", a, s);
		hooks_run("tunnel-down", a, NULL);
		if (i == 0) {
			hooks_run("tunnel-up", b, NULL);
			hooks_run("tunnel-down", b, NULL);
			hooks_run("session-down", a, s);
		}
	}
	/* One per object runs at once: a, a's session, b. */
	ck_assert_uint_eq(child_count(), 3);
	session_free(s);
	tunnel_free(a);
	tunnel_free(b);
	ck_assert(wait_idle(10000));

	ck_assert_int_gt(slurp("log", buf, sizeof(buf)), 0);
	check_serial(buf, "1/0", a_events, 4);
	check_serial(buf, "2/0", b_events, 2);
	check_serial(buf, "1/3", s_events, 3);
	ck_assert_uint_eq(log_count(LOG_LVL_WARN, ""), 0);
}
END_TEST

START_TEST(test_max_concurrent)
{
	struct tunnel *t[6];
	char buf[4096], want[64];
	const char *p;
	int running = 0, peak = 0, starts = 0;
	unsigned i, seen = 0;

	conf->hooks.max_concurrent = 2;
	set_hook(conf->hooks.tunnel_up, script("slow", "echo start >> \"$DIR/log\"\n"
							"sleep 0.05\n"
							"echo end >> \"$DIR/log\"\n"));
	for (i = 0; i < 6; i++) {
		t[i] = tunnel_new(i + 1, "t", "peer");
		hooks_run("tunnel-up", t[i], NULL);
	}
	ck_assert_uint_eq(child_count(), 2);
	for (i = 0; i < 6; i++)
		tunnel_free(t[i]);
	ck_assert(wait_idle(10000));

	/* Markers: never more than two between their start and end. */
	ck_assert_int_gt(slurp("log", buf, sizeof(buf)), 0);
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, "start", 5) == 0) {
			starts++;
			running++;
		} else {
			running--;
		}
		if (running > peak)
			peak = running;
	}
	ck_assert_int_eq(starts, 6);
	ck_assert_int_eq(running, 0);
	ck_assert_int_le(peak, 2);

	/* Started in the order the events came (FIFO), as the daemon logged it. */
	for (i = 0; i < n_logs; i++) {
		snprintf(want, sizeof(want), "tunnel %u: tunnel-up hook", seen + 1);
		if (strstr(logs[i].msg, "started") && strstr(logs[i].msg, "tunnel-up hook")) {
			ck_assert_msg(strncmp(logs[i].msg, want, strlen(want)) == 0,
				      "start #%u: %s", seen + 1, logs[i].msg);
			seen++;
		}
	}
	ck_assert_uint_eq(seen, 6);
}
END_TEST

/* Dead or a zombie waiting for its (new) parent: either way not running. */
static bool pid_gone(pid_t pid)
{
	char path[64], st[256], *rp;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return true;
	n = fread(st, 1, sizeof(st) - 1, f);
	fclose(f);
	st[n] = '\0';
	rp = strrchr(st, ')');
	return rp && rp[1] == ' ' && rp[2] == 'Z';
}

START_TEST(test_timeout_kills_group)
{
	struct tunnel *t = tunnel_new(11, "slow", "peer");
	struct usl_timerset *ts = usl_loop_timers(l2tpd.loop);
	usl_time start, took;
	char buf[64];
	pid_t gc;
	int i;

	conf->hooks.timeout_ms = 300;
	set_hook(conf->hooks.tunnel_up, script("hang", "sleep 30 &\n"
							"echo $! > \"$DIR/grandchild\"\n"
							"wait\n"));
	start = usl_timerset_now(ts);
	hooks_run("tunnel-up", t, NULL);
	tunnel_free(t);
	ck_assert(wait_idle(5000));
	took = usl_time_sub(usl_timerset_now(ts), start);
	ck_assert_int_ge(usl_time_to_ms(took), 300);
	ck_assert_int_lt(usl_time_to_ms(took), 3000);
	ck_assert_uint_eq(log_count(LOG_LVL_WARN, "still running after 300 ms, killing it"), 1);
	ck_assert_uint_eq(log_count(LOG_LVL_WARN, "exited"), 0);
	ck_assert_uint_eq(log_count(LOG_LVL_WARN, "killed by signal"), 0);

	/* The script's own child went with it (process group kill). */
	ck_assert_int_gt(slurp("grandchild", buf, sizeof(buf)), 0);
	gc = (pid_t)atoi(buf);
	ck_assert_int_gt(gc, 0);
	for (i = 0; i < 100 && !pid_gone(gc); i++)
		usleep(10000);
	ck_assert_msg(pid_gone(gc), "grandchild %d survived", (int)gc);
}
END_TEST

START_TEST(test_exit_status_logged)
{
	struct tunnel *t = tunnel_new(12, "x", "peer");

	set_hook(conf->hooks.tunnel_down, script("fail", "exit 3\n"));
	set_hook(conf->hooks.tunnel_up, script("ok", "exit 0\n"));
	hooks_run("tunnel-up", t, NULL);
	hooks_run("tunnel-down", t, NULL);
	tunnel_free(t);
	ck_assert(wait_idle(5000));
	ck_assert_uint_eq(log_count(LOG_LVL_WARN, "tunnel 12: tunnel-down hook"), 1);
	ck_assert_uint_eq(log_count(LOG_LVL_WARN, "exited with status 3"), 1);
	ck_assert_uint_eq(log_count(LOG_LVL_WARN, "tunnel-up"), 0);
	ck_assert_uint_eq(log_count(LOG_LVL_DEBUG, "tunnel-up hook"), 2);	/* started, done */
}
END_TEST

/* A script that cannot start is reported; the object's next hook still runs. */
START_TEST(test_spawn_failure_moves_on)
{
	struct tunnel *t = tunnel_new(13, "x", "peer");
	char buf[64];

	set_hook(conf->hooks.tunnel_up, "/nonexistent/l2tp-hook");
	set_hook(conf->hooks.tunnel_down, script("down", "echo ran > \"$DIR/down\"\n"));
	hooks_run("tunnel-up", t, NULL);
	hooks_run("tunnel-down", t, NULL);
	ck_assert_uint_eq(child_count(), 1);
	tunnel_free(t);
	ck_assert(wait_idle(5000));
	/* glibc reports the failed exec; under valgrind the child exits 127 instead. */
	ck_assert_uint_eq(log_count(LOG_LVL_WARN, "cannot run tunnel-up hook /nonexistent") +
			  log_count(LOG_LVL_WARN, "/nonexistent/l2tp-hook exited with status 127"),
			  1);
	ck_assert_int_gt(slurp("down", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "ran\n");
}
END_TEST

START_TEST(test_unset_is_noop)
{
	struct tunnel *t = tunnel_new(14, "x", "peer");
	struct session *s = session_new(t, 15, "y", NULL);

	hooks_run("tunnel-up", t, NULL);
	hooks_run("session-up", t, s);
	hooks_run("session-down", t, s);
	hooks_run("tunnel-down", t, NULL);
	ck_assert_uint_eq(child_count(), 0);
	ck_assert_uint_eq(n_logs, 0);

	/* An event with no script slot is a bug: reported, nothing runs. */
	set_hook(conf->hooks.tunnel_up, script("up", "exit 0\n"));
	hooks_run("tunnel-sideways", t, NULL);
	ck_assert_uint_eq(child_count(), 0);
	ck_assert_uint_eq(log_count(LOG_LVL_WARN, "tunnel-sideways"), 1);

	/* After shutdown nothing runs either. */
	hooks_shutdown();
	hooks_run("tunnel-up", t, NULL);
	ck_assert_uint_eq(child_count(), 0);
	session_free(s);
	tunnel_free(t);
}
END_TEST

START_TEST(test_shutdown_kills_and_frees)
{
	struct tunnel *a = tunnel_new(21, "a", "peer");
	struct tunnel *b = tunnel_new(22, "b", "peer");
	const char *path = script("hang", "sleep 30\n");

	set_hook(conf->hooks.tunnel_up, path);
	set_hook(conf->hooks.tunnel_down, path);
	hooks_run("tunnel-up", a, NULL);
	hooks_run("tunnel-down", a, NULL);
	hooks_run("tunnel-up", b, NULL);
	ck_assert_uint_eq(child_count(), 2);
	tunnel_free(a);
	tunnel_free(b);

	hooks_shutdown();
	ck_assert_uint_eq(child_count(), 0);
	ck_assert_uint_eq(log_count(LOG_LVL_INFO, "killed 2 running, dropped 1 queued"), 1);
	/* The reaper is gone with its last user: the teardown collects the dead. */
}
END_TEST

/* child_watch is shared: a pid registered by someone else gets its own callback. */
static int other_status = -1;

static void other_exited(pid_t pid, int status, void *arg)
{
	*(pid_t *)arg = pid;
	other_status = status;
}

START_TEST(test_child_registry_shared)
{
	pid_t pid, seen = 0;

	ck_assert_int_eq(child_init(l2tpd.loop), 0);	/* a second user */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(7);
	ck_assert_int_eq(child_watch(pid, other_exited, &seen), 0);
	ck_assert_int_eq(child_watch(pid, other_exited, &seen), -1);
	ck_assert_int_eq(errno, EEXIST);
	ck_assert(wait_idle(5000));
	ck_assert_int_eq(seen, pid);
	ck_assert(WIFEXITED(other_status) && WEXITSTATUS(other_status) == 7);

	/* hooks_shutdown drops one user; the registry stays for the other. */
	hooks_shutdown();
	ck_assert_int_eq(child_watch(getpid(), other_exited, &seen), 0);
	child_unwatch(getpid());
	ck_assert_uint_eq(child_count(), 0);
	child_shutdown();
	ck_assert_int_eq(child_watch(getpid(), other_exited, &seen), -1);
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

static Suite *hooks_suite(void)
{
	Suite *s = suite_create("hooks");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_env_tunnel);
	tcase_add_test(tc, test_stdio_and_fds);
	tcase_add_test(tc, test_env_session_captured_at_event);
	tcase_add_test(tc, test_serialised_per_object);
	tcase_add_test(tc, test_max_concurrent);
	tcase_add_test(tc, test_timeout_kills_group);
	tcase_add_test(tc, test_exit_status_logged);
	tcase_add_test(tc, test_spawn_failure_moves_on);
	tcase_add_test(tc, test_unset_is_noop);
	tcase_add_test(tc, test_shutdown_kills_and_frees);
	tcase_add_test(tc, test_child_registry_shared);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(hooks_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
