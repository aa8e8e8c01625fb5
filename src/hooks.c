/*
 * src/hooks.c - operator scripts on tunnel/session up and down, and the
 * daemon's child registry (child.h).
 *
 * A hook never blocks the loop: it is spawned, its exit arrives through the
 * SIGCHLD reaper, and a hook overrunning hooks.timeout_ms is killed.  Hooks
 * of one object (tunnel id, session id) run one at a time in event order,
 * so a "down" script never races the "up" script whose work it undoes.  At
 * most hooks.max_concurrent run at once; objects whose next hook waits for
 * a slot queue FIFO.  Path and environment are copied when the event
 * happens: the tunnel or session is usually freed before its "down" hook
 * gets to run.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "usl/escape.h"
#include "usl/log.h"
#include "child.h"
#include "event.h"
#include "l2tpv3d.h"
#include "proto/avp.h"

/* ---- child registry ---------------------------------------------------- */

struct child {
	struct usl_rb_node node;	/* children.tree, by pid */
	pid_t pid;
	child_exit_fn cb;
	void *arg;
};

static struct {
	struct usl_rb_root tree;
	struct usl_sig *sigchld;
	unsigned users;			/* child_init() calls not yet shut down */
	unsigned count;
} children;

static inline struct child *node_child(const struct usl_rb_node *n)
{
	return n ? usl_rb_entry(n, struct child, node) : NULL;
}

static int child_cmp(const struct usl_rb_node *a, const struct usl_rb_node *b)
{
	pid_t pa = node_child(a)->pid, pb = node_child(b)->pid;

	return (pa > pb) - (pa < pb);
}

static int child_key_cmp(const void *key, const struct usl_rb_node *n)
{
	pid_t pid = *(const pid_t *)key, other = node_child(n)->pid;

	return (pid > other) - (pid < other);
}

static struct child *child_find(pid_t pid)
{
	return node_child(usl_rb_find(&children.tree, &pid, child_key_cmp));
}

static void child_forget(struct child *c)
{
	usl_rb_erase(&children.tree, &c->node);
	children.count--;
	free(c);
}

/*
 * Signals coalesce: one SIGCHLD may stand for several exits, so reap until
 * nothing is left.  The entry goes before the callback runs, so the callback
 * may spawn and watch a new child that happens to reuse the pid.
 */
static void child_reap(int signo, void *arg)
{
	struct child *c;
	child_exit_fn cb;
	void *cb_arg;
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		c = child_find(pid);
		if (c == NULL) {
			log_debug("reaped unwatched child %d", (int)pid);
			continue;
		}
		cb = c->cb;
		cb_arg = c->arg;
		child_forget(c);
		cb(pid, status, cb_arg);
	}
}

int child_init(struct usl_loop *loop)
{
	if (children.users > 0) {
		children.users++;
		return 0;
	}
	if (loop == NULL) {
		errno = EINVAL;
		return -1;
	}
	usl_rb_init(&children.tree);
	children.count = 0;
	children.sigchld = usl_sig_add(loop, SIGCHLD, child_reap, NULL);
	if (children.sigchld == NULL) {
		if (errno == 0)
			errno = ENOMEM;
		return -1;
	}
	children.users = 1;
	return 0;
}

void child_shutdown(void)
{
	struct usl_rb_node *n;

	if (children.users == 0 || --children.users > 0)
		return;
	usl_sig_del(children.sigchld);
	children.sigchld = NULL;
	while ((n = usl_rb_first(&children.tree)) != NULL)
		child_forget(node_child(n));
}

int child_watch(pid_t pid, child_exit_fn cb, void *arg)
{
	struct child *c;

	if (children.users == 0 || pid <= 0 || cb == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (child_find(pid) != NULL) {
		errno = EEXIST;
		return -1;
	}
	c = malloc(sizeof(*c));
	if (c == NULL)
		return -1;
	c->pid = pid;
	c->cb = cb;
	c->arg = arg;
	usl_rb_insert(&children.tree, &c->node, child_cmp);
	children.count++;
	return 0;
}

void child_unwatch(pid_t pid)
{
	struct child *c;

	if (children.users > 0 && (c = child_find(pid)) != NULL)
		child_forget(c);
}

unsigned child_count(void)
{
	return children.count;
}

/* ---- hooks ------------------------------------------------------------- */

#define HOOK_ENV_MAX	20
#define HOOK_PATH_ENV	"/usr/sbin:/usr/bin:/sbin:/bin"

static const struct hook_event {
	const char *name;		/* argv[1] and L2TP_EVENT */
	size_t path_off;		/* its script in struct hook_config */
} hook_events[] = {
	{ "tunnel-up",    offsetof(struct hook_config, tunnel_up) },
	{ "tunnel-down",  offsetof(struct hook_config, tunnel_down) },
	{ "session-up",   offsetof(struct hook_config, session_up) },
	{ "session-down", offsetof(struct hook_config, session_down) },
};

/* Everything hooked on one tunnel or session. */
struct hook_obj {
	struct usl_rb_node node;	/* hooks.objs, by key */
	uint64_t key;			/* tunnel id << 32 | session id (0: the tunnel) */
	struct usl_list jobs;		/* struct hook_job in event order; the first may run */
	struct usl_list runnable_link;	/* in hooks.runnable while its first job waits */
	bool running;
};

struct hook_job {
	struct usl_list link;		/* hook_obj.jobs */
	struct hook_obj *obj;
	const char *event;		/* hook_events[].name */
	char what[48];			/* "tunnel 5" / "session 9 (tunnel 5)", for logs */
	char path[CFG_PATH_MAX];
	char *env[HOOK_ENV_MAX + 1];	/* "KEY=value", NULL-terminated */
	unsigned n_env;
	pid_t pid;			/* 0 until spawned */
	usl_time started;
	uint32_t timeout_ms;
	bool timed_out;
	struct usl_timer timeout;
};

static struct {
	bool active;
	struct usl_rb_root objs;	/* struct hook_obj, by key */
	struct usl_list runnable;	/* struct hook_obj, FIFO */
	unsigned running;
} hooks;

static const struct hook_event *hook_event_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(hook_events) / sizeof(hook_events[0]); i++) {
		if (strcmp(hook_events[i].name, name) == 0)
			return &hook_events[i];
	}
	return NULL;
}

static const char *hook_script(const struct hook_event *ev)
{
	return (const char *)&l2tpd.conf->hooks + ev->path_off;
}

static inline const char *str_or_empty(const char *s)
{
	return s ? s : "";
}

/* ---- environment: captured at event time ---- */

/*
 * Appends KEY=value.  Values formatted here are our own text or a peer's
 * name the engine already made printable; control characters become '?'
 * anyway, since scripts read the environment line by line.  A peer's raw
 * bytes go through env_add_bytes() instead.
 */
static int env_add(struct hook_job *job, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int env_add(struct hook_job *job, const char *key, const char *fmt, ...)
{
	char *val, *p;
	va_list ap;
	int n;

	if (job->n_env >= HOOK_ENV_MAX) {
		errno = E2BIG;
		return -1;
	}
	va_start(ap, fmt);
	n = vasprintf(&val, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	for (p = val; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	}
	n = asprintf(&job->env[job->n_env], "%s=%s", key, val);
	free(val);
	if (n < 0) {
		job->env[job->n_env] = NULL;
		return -1;
	}
	job->n_env++;
	return 0;
}

/*
 * KEY=value for a peer's raw bytes: the whole value, NUL and all, escaped
 * like every peer string (usl/escape.h), so it reads as the CLI shows it.
 */
static int env_add_bytes(struct hook_job *job, const char *key, const void *val, size_t len)
{
	size_t klen = strlen(key), need;
	char *e;

	if (job->n_env >= HOOK_ENV_MAX) {
		errno = E2BIG;
		return -1;
	}
	need = usl_str_escape(NULL, 0, val, len);
	e = malloc(klen + 1 + need + 1);
	if (e == NULL)
		return -1;
	memcpy(e, key, klen);
	e[klen] = '=';
	usl_str_escape(e + klen + 1, need + 1, val, len);
	job->env[job->n_env++] = e;
	return 0;
}

/* sockaddr_ntop() returns a static buffer: each value is copied before the next call. */
static int env_tunnel(struct hook_job *job, const struct tunnel *t)
{
	const struct sockaddr *peer = (const struct sockaddr *)&t->remote;
	const struct sockaddr *local = (const struct sockaddr *)&t->local;

	if (env_add(job, "L2TP_EVENT", "%s", job->event) < 0 ||
	    env_add(job, "L2TP_TUNNEL_ID", "%" PRIu32, t->id) < 0 ||
	    env_add(job, "L2TP_PEER_TUNNEL_ID", "%" PRIu32,
		    t->cc ? l2tp_cc_peer_ccid(t->cc) : 0) < 0 ||
	    env_add(job, "L2TP_TUNNEL_NAME", "%s", name_str(t->name)) < 0 ||
	    env_add(job, "L2TP_PEER_ADDR", "%s", str_or_empty(sockaddr_ntop(peer))) < 0 ||
	    env_add(job, "L2TP_PEER_PORT", "%u", (unsigned)sockaddr_port(peer)) < 0 ||
	    env_add(job, "L2TP_LOCAL_ADDR", "%s", str_or_empty(sockaddr_ntop(local))) < 0 ||
	    env_add(job, "L2TP_ENCAP", "%s", t->encap == L2TP_ENCAP_IP ? "ip" : "udp") < 0 ||
	    env_add(job, "L2TP_PEER_HOST_NAME", "%s",
		    t->cc ? str_or_empty(l2tp_cc_peer_host_name(t->cc)) : "") < 0)
		return -1;
	return 0;
}

/* What the engine negotiated when it still has the session, else the profile. */
static int env_session(struct hook_job *job, const struct session *s)
{
	uint16_t pw = s->sess ? l2tp_sess_pw_type(s->sess) : s->prof->pw_type;
	const uint8_t *rei = NULL;
	uint16_t rei_len = 0;

	if (s->sess)
		rei = l2tp_sess_remote_end_id(s->sess, &rei_len);
	if (rei == NULL)
		rei_len = 0;
	if (env_add(job, "L2TP_SESSION_ID", "%" PRIu32, s->id) < 0 ||
	    env_add(job, "L2TP_PEER_SESSION_ID", "%" PRIu32,
		    s->sess ? l2tp_sess_remote_sid(s->sess) : 0) < 0 ||
	    env_add(job, "L2TP_SESSION_NAME", "%s", name_str(s->name)) < 0 ||
	    /* the configuration's and the CLI's words (eth, eth_vlan, ppp): one vocabulary */
	    env_add(job, "L2TP_PW_TYPE", "%s", str_or_empty(config_pw_type_name(pw))) < 0 ||
	    env_add(job, "L2TP_IFNAME", "%.*s", (int)sizeof(s->ifname), s->ifname) < 0 ||
	    env_add_bytes(job, "L2TP_REMOTE_END_ID", rei, rei_len) < 0)
		return -1;
	return 0;
}

/* ---- jobs ---- */

static void job_timeout(struct usl_timer *tm);

static void job_free(struct hook_job *job)
{
	unsigned i;

	if (job == NULL)
		return;
	usl_timer_cancel(&job->timeout);
	for (i = 0; i < job->n_env; i++)
		free(job->env[i]);
	free(job);
}

static struct hook_job *job_new(const struct hook_event *ev, const char *path,
				const struct tunnel *t, const struct session *s)
{
	struct hook_job *job = calloc(1, sizeof(*job));

	if (job == NULL)
		return NULL;
	usl_list_init(&job->link);
	usl_timer_init(&job->timeout, job_timeout);
	job->event = ev->name;
	snprintf(job->path, sizeof(job->path), "%s", path);
	if (s)
		snprintf(job->what, sizeof(job->what), "session %" PRIu32 " (tunnel %" PRIu32 ")",
			 s->id, t->id);
	else
		snprintf(job->what, sizeof(job->what), "tunnel %" PRIu32, t->id);
	if (env_tunnel(job, t) < 0 || (s && env_session(job, s) < 0) ||
	    env_add(job, "PATH", "%s", HOOK_PATH_ENV) < 0) {
		job_free(job);
		return NULL;
	}
	return job;
}

/*
 * posix_spawn, not fork: no copy of a large daemon's page tables, and the
 * child cannot run our signal handlers between fork and exec.  The hook
 * gets its own process group so a timeout kills the script's children too,
 * default signal dispositions (an ignored SIGPIPE would survive exec), and
 * none of our descriptors beyond stdio.
 */
static int job_spawn(struct hook_job *job)
{
	char *argv[] = { job->path, (char *)job->event, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	int err;

	sigemptyset(&none);
	sigfillset(&all);
	if ((err = posix_spawn_file_actions_init(&fa)) != 0)
		goto out;
	if ((err = posix_spawnattr_init(&attr)) != 0)
		goto out_fa;
	err = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
	if (err == 0)
		err = posix_spawn_file_actions_addclosefrom_np(&fa, STDERR_FILENO + 1);
#endif
	if (err == 0)
		err = posix_spawnattr_setsigmask(&attr, &none);
	if (err == 0)
		err = posix_spawnattr_setsigdefault(&attr, &all);
	if (err == 0)
		err = posix_spawnattr_setpgroup(&attr, 0);
	if (err == 0)
		err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK |
					       POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
	if (err == 0)
		err = posix_spawn(&job->pid, job->path, &fa, &attr, argv, job->env);
	posix_spawnattr_destroy(&attr);
out_fa:
	posix_spawn_file_actions_destroy(&fa);
out:
	if (err != 0) {
		job->pid = 0;
		errno = err;
		return -1;
	}
	return 0;
}

/* The whole process group: a script's own children (sleep, ip monitor) go too. */
static void job_kill(const struct hook_job *job)
{
	if (kill(-job->pid, SIGKILL) < 0)
		kill(job->pid, SIGKILL);
}

static void job_timeout(struct usl_timer *tm)
{
	struct hook_job *job = usl_container_of(tm, struct hook_job, timeout);

	log_warnx("%s: %s hook %s still running after %" PRIu32 " ms, killing it",
		  job->what, job->event, job->path, job->timeout_ms);
	job->timed_out = true;
	job_kill(job);
}

static void job_log_exit(const struct hook_job *job, int status)
{
	usl_time now = usl_timerset_now(usl_loop_timers(l2tpd.loop));
	long long ms = (long long)usl_time_to_ms(usl_time_sub(now, job->started));

	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		log_debug("%s: %s hook %s done in %lld ms", job->what, job->event, job->path, ms);
	else if (WIFEXITED(status))
		log_warnx("%s: %s hook %s exited with status %d", job->what, job->event,
			  job->path, WEXITSTATUS(status));
	else if (WIFSIGNALED(status) && !job->timed_out)
		log_warnx("%s: %s hook %s killed by signal %d (%s)", job->what, job->event,
			  job->path, WTERMSIG(status), strsignal(WTERMSIG(status)));
}

static void hooks_dispatch(void);

/* Drops a job that ran or could not start; the object's next job queues for a slot. */
static void job_finish(struct hook_job *job)
{
	struct hook_obj *obj = job->obj;

	if (obj->running) {
		obj->running = false;
		hooks.running--;
	}
	usl_list_del(&job->link);
	job_free(job);
	if (usl_list_empty(&obj->jobs)) {
		usl_rb_erase(&hooks.objs, &obj->node);
		free(obj);
	} else {
		usl_list_add_tail(&hooks.runnable, &obj->runnable_link);
	}
}

static void job_exited(pid_t pid, int status, void *arg)
{
	struct hook_job *job = arg;

	job_log_exit(job, status);
	job_finish(job);
	hooks_dispatch();
}

static int job_start(struct hook_job *job)
{
	struct usl_timerset *ts = usl_loop_timers(l2tpd.loop);

	if (job_spawn(job) < 0) {
		log_warn("%s: cannot run %s hook %s", job->what, job->event, job->path);
		return -1;
	}
	if (child_watch(job->pid, job_exited, job) < 0) {
		/* Unwatched, it would never free its slot: stop it, the reaper collects it. */
		log_warn("%s: %s hook %s: cannot watch pid %d", job->what, job->event,
			 job->path, (int)job->pid);
		job_kill(job);
		job->pid = 0;
		return -1;
	}
	job->obj->running = true;
	hooks.running++;
	job->started = usl_timerset_now(ts);
	job->timeout_ms = l2tpd.conf ? l2tpd.conf->hooks.timeout_ms : 0;
	if (job->timeout_ms > 0)
		usl_timer_arm(ts, &job->timeout, usl_time_ms(job->timeout_ms));
	log_debug("%s: %s hook %s started, pid %d", job->what, job->event, job->path,
		  (int)job->pid);
	return 0;
}

/* 0 would stall every queue for good. */
static unsigned hooks_max_concurrent(void)
{
	uint32_t n = l2tpd.conf ? l2tpd.conf->hooks.max_concurrent : 1;

	return n > 0 ? n : 1;
}

/* Fills free slots from the runnable FIFO.  Not re-entered: job_finish never dispatches. */
static void hooks_dispatch(void)
{
	struct hook_obj *obj;
	struct hook_job *job;

	while (hooks.running < hooks_max_concurrent() && !usl_list_empty(&hooks.runnable)) {
		obj = usl_list_first_entry(&hooks.runnable, struct hook_obj, runnable_link);
		usl_list_del(&obj->runnable_link);
		job = usl_list_first_entry(&obj->jobs, struct hook_job, link);
		if (job_start(job) < 0)
			job_finish(job);
	}
}

/* ---- objects ---- */

static inline struct hook_obj *node_obj(const struct usl_rb_node *n)
{
	return n ? usl_rb_entry(n, struct hook_obj, node) : NULL;
}

static int obj_cmp(const struct usl_rb_node *a, const struct usl_rb_node *b)
{
	uint64_t ka = node_obj(a)->key, kb = node_obj(b)->key;

	return (ka > kb) - (ka < kb);
}

static int obj_key_cmp(const void *key, const struct usl_rb_node *n)
{
	uint64_t k = *(const uint64_t *)key, other = node_obj(n)->key;

	return (k > other) - (k < other);
}

/* Queues job behind the object's earlier hooks (creating the object). */
static int obj_enqueue(struct hook_job *job, uint32_t tunnel_id, uint32_t session_id)
{
	uint64_t key = (uint64_t)tunnel_id << 32 | session_id;
	struct hook_obj *obj;

	obj = node_obj(usl_rb_find(&hooks.objs, &key, obj_key_cmp));
	if (obj == NULL) {
		obj = calloc(1, sizeof(*obj));
		if (obj == NULL)
			return -1;
		obj->key = key;
		usl_list_init(&obj->jobs);
		usl_list_init(&obj->runnable_link);
		usl_rb_insert(&hooks.objs, &obj->node, obj_cmp);
	}
	job->obj = obj;
	usl_list_add_tail(&obj->jobs, &job->link);
	if (!obj->running && usl_list_empty(&obj->runnable_link))
		usl_list_add_tail(&hooks.runnable, &obj->runnable_link);
	return 0;
}

/* Kills the object's running hook, drops the queued ones. */
static void obj_drop(struct hook_obj *obj, unsigned *killed, unsigned *dropped)
{
	struct usl_list *pos, *tmp;
	struct hook_job *job;

	usl_list_foreach_safe(pos, tmp, &obj->jobs) {
		job = usl_list_entry(pos, struct hook_job, link);
		if (job->pid > 0) {
			job_kill(job);
			child_unwatch(job->pid);
			(*killed)++;
		} else {
			(*dropped)++;
		}
		usl_list_del(&job->link);
		job_free(job);
	}
	usl_list_del(&obj->runnable_link);
	usl_rb_erase(&hooks.objs, &obj->node);
	free(obj);
}

/* ---- entry points ---- */

/* The hooks' subscription: up and down of tunnels and sessions. */
static void hooks_on_event(const struct l2tpd_event *ev, void *arg)
{
	(void)arg;
	if (event_is_up_down(ev->kind))
		hooks_run(event_name(ev->kind), ev->t, ev->s);
}

int hooks_init(void)
{
	if (hooks.active)
		return 0;
	if (child_init(l2tpd.loop) < 0) {
		log_warn("hooks: cannot watch child processes");
		return -1;
	}
	usl_rb_init(&hooks.objs);
	usl_list_init(&hooks.runnable);
	hooks.running = 0;
	hooks.active = true;
	return event_subscribe(hooks_on_event, NULL);
}

/* Killed hooks are reaped by the loop if it still runs, else by init. */
void hooks_shutdown(void)
{
	unsigned killed = 0, dropped = 0;
	struct usl_rb_node *n;

	if (!hooks.active)
		return;
	hooks.active = false;
	event_unsubscribe(hooks_on_event, NULL);
	while ((n = usl_rb_first(&hooks.objs)) != NULL)
		obj_drop(node_obj(n), &killed, &dropped);
	hooks.running = 0;
	if (killed || dropped)
		log_info("hooks: killed %u running, dropped %u queued", killed, dropped);
	child_shutdown();
}

/*
 * which: "tunnel-up", "tunnel-down", "session-up" or "session-down"; s is
 * NULL for tunnel events.  Nothing happens when no script is configured.
 */
void hooks_run(const char *which, const struct tunnel *t, const struct session *s)
{
	const struct hook_event *ev;
	struct hook_job *job;
	const char *path;

	if (!hooks.active || l2tpd.conf == NULL)
		return;
	if (t == NULL && s != NULL)
		t = s->tunnel;
	ev = hook_event_find(which);
	if (ev == NULL || t == NULL) {
		log_warnx("hooks: bad event \"%s\" (tunnel %p, session %p)", which,
			  (const void *)t, (const void *)s);
		return;
	}
	path = hook_script(ev);
	if (path[0] == '\0')
		return;
	job = job_new(ev, path, t, s);
	if (job == NULL || obj_enqueue(job, t->id, s ? s->id : 0) < 0) {
		log_warn("%s %" PRIu32 ": %s hook %s not run", s ? "session" : "tunnel",
			 s ? s->id : t->id, ev->name, path);
		job_free(job);
		return;
	}
	hooks_dispatch();
}
