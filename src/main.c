/*
 * src/main.c - l2tpv3d: options, start-up, signals, reload and shutdown.
 *
 *   l2tpv3d [-f FILE] [-F] [-E epoll|poll] [-d] [--dataplane kernel|null]
 *           [--ctl PATH] [-n [-v]]
 *
 * Signal handlers are libevent signal events: they run in the loop like
 * everything else, never asynchronously.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "dp.h"
#include "l2tpv3d.h"
#include "sdnotify.h"
#include "usl/log.h"

#define DEFAULT_CONFIG		SYSCONFDIR "/l2tpv3d/l2tpv3d.conf"
#define SHUTDOWN_DEADLINE_S	40	/* > one StopCCN retransmission cycle (31 s) */

static struct options {
	const char *config;
	bool config_given;
	bool foreground;
	bool debug;
	bool check_only;
	bool verbose;
	const char *event_loop;
	const char *dataplane;
	const char *ctl;
} opt;

static struct usl_timer shutdown_timer;
static struct usl_timer log_flush_timer;
static struct usl_sig *signals[3];	/* TERM, INT, HUP: released before the loop */

/* Every rate-limited log line kind says how many it suppressed (usl/log.h). */
#define LOG_FLUSH_S	5

static void log_flush(struct usl_timer *t)
{
	log_ratelimit_flush(usl_timerset_now(l2tpd.timers));
	usl_timer_arm(l2tpd.timers, t, usl_time_s(LOG_FLUSH_S));
}

/* The version, and what this build can do that another build may not. */
static void print_version(void)
{
	printf("l2tpv3d %s\n", PACKAGE_VERSION);
#ifdef HAVE_SNMP
	printf("snmp: AgentX subagent (snmp.enabled)\n");
#else
	printf("snmp: not built in (configure --with-snmp)\n");
#endif
#ifdef HAVE_LIBSYSTEMD
	printf("systemd: restart through the file descriptor store (libsystemd)\n");
#else
	printf("systemd: readiness only; restart with l2tpv3ctl restart (no libsystemd)\n");
#endif
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: l2tpv3d [-FdnvhV] [-f FILE] [-E epoll|poll] [--dataplane kernel|null] [--ctl PATH]\n"
		"  -f, --config FILE     configuration file (default %s)\n"
		"  -F, --foreground      stay in the foreground, log to stderr (systemd)\n"
		"  -E, --event-loop B    event loop backend: epoll or poll\n"
		"  -d, --debug           debug logging\n"
		"      --dataplane D     kernel (default) or null (no kernel objects)\n"
		"      --ctl PATH        control socket path\n"
		"  -n, --check           check the configuration file and exit\n"
		"  -v, --verbose         with -n: print the normalised configuration\n"
		"      --show-secrets    with -nv: print secrets instead of ********\n"
		"  -V, --version         print the version and what this build has, and exit\n"
		"      --list-settings   print every configuration setting and exit\n", DEFAULT_CONFIG);
}

/* Every "section.setting" the parser accepts (the man page test reads it). */
static void list_settings(void)
{
	for (const char *const *k = config_known_settings; *k != NULL; k++)
		printf("%s\n", *k);
}

static void parse_options(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "foreground", no_argument, NULL, 'F' },
		{ "event-loop", required_argument, NULL, 'E' },
		{ "debug", no_argument, NULL, 'd' },
		{ "dataplane", required_argument, NULL, 'D' },
		{ "ctl", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "list-settings", no_argument, NULL, 'L' },
		{ "show-secrets", no_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	opt.config = DEFAULT_CONFIG;
	while ((ch = getopt_long(argc, argv, "f:FE:dnvhV", lopts, NULL)) != -1) {
		switch (ch) {
		case 'f': opt.config = optarg; opt.config_given = true; break;
		case 'F': opt.foreground = true; break;
		case 'E': opt.event_loop = optarg; break;
		case 'd': opt.debug = true; break;
		case 'D': opt.dataplane = optarg; break;
		case 'c': opt.ctl = optarg; break;
		case 'n': opt.check_only = true; break;
		case 'v': opt.verbose = true; break;
		case 'h': usage(stdout); exit(0);
		case 'V': print_version(); exit(0);
		case 'L': list_settings(); exit(0);
		case 'S': config_print_secrets(true); break;
		default: usage(stderr); exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "l2tpv3d: unexpected argument '%s'\n", argv[optind]);
		exit(2);
	}
	if (opt.event_loop && strcmp(opt.event_loop, "epoll") && strcmp(opt.event_loop, "poll")) {
		fprintf(stderr, "l2tpv3d: bad value '%s' for -E (valid: epoll, poll)\n", opt.event_loop);
		exit(2);
	}
	if (opt.dataplane && dp_find(opt.dataplane) == NULL && strcmp(opt.dataplane, "kernel")) {
		fprintf(stderr, "l2tpv3d: bad value '%s' for --dataplane (valid: kernel, null)\n",
			opt.dataplane);
		exit(2);
	}
}

/* The config file, or the built-in defaults when the default file is absent. */
static struct l2tpd_config *load_config(char *err, size_t errlen)
{
	struct stat st;

	if (!opt.config_given && stat(opt.config, &st) < 0 && errno == ENOENT) {
		opt.config = NULL;
		return config_defaults();
	}
	/* a check (-n) runs nothing: any file may be checked */
	if (!opt.check_only && path_trusted("configuration", opt.config, err, errlen) < 0)
		return NULL;
	/* include_dir and its files, at start and at every reload, as the main file */
	if (!opt.check_only)
		config_set_trust_check(path_trusted);
	return config_load(opt.config, err, errlen);
}

static void apply_overrides(struct l2tpd_config *c)
{
	if (opt.event_loop)
		snprintf(c->event_loop, sizeof(c->event_loop), "%s", opt.event_loop);
	if (opt.dataplane)
		snprintf(c->dataplane, sizeof(c->dataplane), "%s", opt.dataplane);
	if (opt.ctl)
		snprintf(c->ctl_socket, sizeof(c->ctl_socket), "%s", opt.ctl);
}

static enum log_level parse_level(const char *s)
{
	if (!strcmp(s, "err")) return LOG_LVL_ERR;
	if (!strcmp(s, "warn")) return LOG_LVL_WARN;
	if (!strcmp(s, "debug")) return LOG_LVL_DEBUG;
	return LOG_LVL_INFO;
}

/* 10,000 tunnels are 10,000 sockets: take every descriptor we are allowed. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void daemonize(void)
{
	pid_t pid = fork();
	int fd;

	if (pid < 0)
		fatal("fork");
	if (pid > 0)
		_exit(0);
	setsid();
	if (chdir("/") < 0)
		fatal("chdir /");
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
}

/* ---- shutdown and reload ------------------------------------------------ */

static void l2tpd_shutdown_done_check(void)
{
	if (l2tpd.shutting_down && l2tpd.n_tunnels == 0)
		usl_loop_exit(l2tpd.loop);
}

static void shutdown_deadline(struct usl_timer *t)
{
	(void)t;
	log_warnx("shutdown: %u tunnels did not close in %d s, dropping them",
		  l2tpd.n_tunnels, SHUTDOWN_DEADLINE_S);
	usl_loop_exit(l2tpd.loop);
}

/*
 * SIGTERM from systemd restarting the unit (systemctl restart, a package
 * upgrade): the tunnels go to the next process through the file descriptor
 * store instead of being closed.  A stop, or no systemd: false.
 */
static bool restart_requested(void)
{
	char why[256] = "", err[256];
	int rc;

	if (l2tpd.restarting)
		return true;
	rc = sd_restart_pending(why, sizeof(why));
	if (rc == 0)
		return false;
	if (rc < 0) {
		if (getenv("NOTIFY_SOCKET") != NULL)
			log_info("SIGTERM: cannot tell a restart from a stop (%s): stopping", why);
		return false;
	}
	if (handover_begin(HANDOVER_FDSTORE, err, sizeof(err)) < 0) {
		log_warnx("SIGTERM for a restart: %s; stopping instead", err);
		return false;
	}
	log_info("SIGTERM: systemd restarts the service: handing %u tunnels over",
		 l2tpd.n_tunnels);
	return true;
}

static void begin_shutdown(int signo, void *arg)
{
	(void)arg;
	if (l2tpd.shutting_down) {
		log_info("second signal %d: exiting now", signo);
		usl_loop_exit(l2tpd.loop);
		return;
	}
	if (signo == SIGTERM && restart_requested())
		return;
	log_info("signal %d: closing %u tunnels", signo, l2tpd.n_tunnels);
	l2tpd.shutting_down = true;
	svc_notifyf("STOPPING=1");
	tunnel_shutdown_all();
	usl_timer_init(&shutdown_timer, shutdown_deadline);
	usl_timer_arm(l2tpd.timers, &shutdown_timer, usl_time_s(SHUTDOWN_DEADLINE_S));
	l2tpd_shutdown_done_check();
}

/* Re-reads the config file and applies the difference, or keeps the old one (-1, err). */
static int l2tpd_reload_apply(json_object **summary, char *err, size_t errlen)
{
	struct l2tpd_config *c;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	svc_notifyf("RELOADING=1\nMONOTONIC_USEC=%lld",
		   (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
	if (opt.config == NULL) {
		c = config_defaults();
	} else if (path_trusted("configuration", opt.config, err, errlen) < 0 ||
		   (c = config_load(opt.config, err, errlen)) == NULL) {
		log_warnx("reload: %s; keeping the running configuration", err);
		if (l2tpd.conf_refused != NULL) {	/* what the file says now */
			char *why = strdup(err);

			if (why != NULL) {
				free(l2tpd.conf_refused);
				l2tpd.conf_refused = why;
			}
		}
		svc_notifyf("READY=1");
		return -1;
	}
	apply_overrides(c);
	*summary = json_object_new_object();
	if (config_apply(c, *summary, err, errlen) < 0) {
		log_warnx("reload: %s; keeping the running configuration and listeners", err);
		json_object_put(*summary);
		*summary = NULL;
		config_free(c);
		svc_notifyf("READY=1");
		return -1;
	}
	if (l2tpd.conf_refused != NULL) {
		log_info("reload: %s applied: the previous process's configuration no longer runs",
			 opt.config);
		free(l2tpd.conf_refused);
		l2tpd.conf_refused = NULL;
	}
	log_set_level(opt.debug ? LOG_LVL_DEBUG : parse_level(l2tpd.conf->log_level));
	svc_notifyf("READY=1");
	return 0;
}

/* A reload, its outcome and time recorded for the metrics. */
static int l2tpd_reload(json_object **summary, char *err, size_t errlen)
{
	int rc = l2tpd_reload_apply(summary, err, errlen);

	l2tpd.last_reload_at = (int64_t)time(NULL);
	l2tpd.last_reload_ok = rc == 0;
	return rc;
}

static void on_sighup(int signo, void *arg)
{
	json_object *summary = NULL;
	char err[512];

	(void)signo;
	(void)arg;
	log_info("SIGHUP: reloading %s", opt.config ? opt.config : "(built-in defaults)");
	if (l2tpd_reload(&summary, err, sizeof(err)) == 0)
		json_object_put(summary);
}

/* ---- start-up ----------------------------------------------------------- */

static void identity_init(const struct l2tpd_config *c)
{
	if (c->hostname[0])
		snprintf(l2tpd.hostname, sizeof(l2tpd.hostname), "%s", c->hostname);
	else if (gethostname(l2tpd.hostname, sizeof(l2tpd.hostname) - 1) < 0)
		snprintf(l2tpd.hostname, sizeof(l2tpd.hostname), "l2tpv3d");
	if (c->router_id_set) {
		l2tpd.router_id = c->router_id;
		return;
	}
	l2tpd.router_id = router_id_derive(c);
	if (l2tpd.router_id == 0)
		l2tpd.router_id = random_u32_nonzero();
	log_info("router_id not configured: derived %s from a local address",
		 router_id_str(l2tpd.router_id));
}

/*
 * The way out, in the words of the files an operator edits: under systemd
 * the daemon runs with the packaged file and /etc/default's options.
 */
static const char *dataplane_hint(void)
{
	static char hint[512];

	snprintf(hint, sizeof(hint), "on a host without L2TP set dataplane = \"null\" in %s "
		 "(global) or L2TPV3D_OPTS=\"--dataplane null\" in %s",
		 l2tpd.conf_path ? l2tpd.conf_path : "the configuration file",
		 SYSCONFDIR "/default/l2tpv3d");
	return hint;
}

static void dataplane_init(const struct l2tpd_config *c)
{
	char err[512] = "";
	int rc;

	l2tpd.dp = dp_find(c->dataplane);
	if (l2tpd.dp == NULL)
		fatalx_status(EX_UNAVAILABLE, "data plane '%s' is not available in this build; %s",
			      c->dataplane, dataplane_hint());
	rc = l2tpd.dp->init(err, sizeof(err));
	if (rc == DP_ERR_STATE)	/* err names the path and the errno: no hint */
		fatalx_status(EX_UNAVAILABLE, "data plane %s: %s", c->dataplane, err);
	if (rc < 0)
		fatalx_status(EX_UNAVAILABLE, "data plane %s: %s; %s", c->dataplane, err,
			      dataplane_hint());
}

static void modules_init(const struct l2tpd_config *c)
{
	char err[512] = "";

	if (peer_init() < 0 || tunnel_init() < 0 || session_init() < 0)
		fatal("index allocation");
	if (transport_init(c, err, sizeof(err)) < 0)
		fatalx("%s", err);
	if (ctl_init(c, err, sizeof(err)) < 0)
		fatalx("%s", err);
	if (hooks_init() < 0)
		fatalx("hooks: cannot start");
	if (metrics_init(c, err, sizeof(err)) < 0)
		fatalx("%s", err);
	signals[0] = usl_sig_add(l2tpd.loop, SIGTERM, begin_shutdown, NULL);
	signals[1] = usl_sig_add(l2tpd.loop, SIGINT, begin_shutdown, NULL);
	signals[2] = usl_sig_add(l2tpd.loop, SIGHUP, on_sighup, NULL);
	if (signals[0] == NULL || signals[1] == NULL || signals[2] == NULL)
		fatalx("signal registration failed");
	signal(SIGPIPE, SIG_IGN);
}

static int check_config(struct l2tpd_config *c, const char *err)
{
	if (c == NULL) {
		fprintf(stderr, "l2tpv3d: %s\n", err);
		return 1;
	}
	if (opt.verbose)
		config_print(c, stdout);
	else
		printf("configuration OK\n");
	config_free(c);
	return 0;
}

/* The digests of RFC 3931 (5.4, 4.3): without them no tunnel can be made or checked. */
static void crypto_init(void)
{
	const char *failed = l2tp_auth_self_test();

	if (failed != NULL)
		fatalx("the crypto library (OpenSSL) does not compute %s (its configuration: "
		       "OPENSSL_CONF, openssl.cnf): no control connection can be made", failed);
}

int main(int argc, char **argv)
{
	struct l2tpd_config *c;
	char err[512] = "";
	/* read before the handover's descriptors are taken (which unsets it) */
	bool handed_by_exec = getenv("L2TPV3D_HANDOVER") != NULL;

	parse_options(argc, argv);
	c = load_config(err, sizeof(err));
	if (opt.check_only)
		return check_config(c, err);
	log_init("l2tpv3d", opt.debug ? LOG_LVL_DEBUG : LOG_LVL_INFO, true);
	/* a restart is not stopped by a refused file: the tunnels' configuration runs on */
	if (c == NULL && (c = handover_previous_config(opt.config, err)) != NULL &&
	    (l2tpd.conf_refused = strdup(err)) == NULL)
		fatal("strdup");
	if (c == NULL)
		fatalx_status(EX_CONFIG, "%s", err);
	apply_overrides(c);
	if (!opt.debug)
		log_set_level(parse_level(c->log_level));
	l2tpd.conf = c;
	l2tpd.conf_path = opt.config;
	handover_set_argv(argv);
	/* a handed-over process is the same daemon: it daemonised already */
	if (!opt.foreground && !handed_by_exec) {
		daemonize();
		log_init("l2tpv3d", opt.debug ? LOG_LVL_DEBUG : parse_level(c->log_level), false);
	}
	raise_fd_limit();
	l2tpd.loop = usl_loop_new(c->event_loop, err, sizeof(err));
	if (l2tpd.loop == NULL)
		fatalx("%s", err);
	l2tpd.timers = usl_loop_timers(l2tpd.loop);
	l2tpd.started = usl_timerset_now(l2tpd.timers);
	l2tpd.reload = l2tpd_reload;
	usl_timer_init(&log_flush_timer, log_flush);
	usl_timer_arm(l2tpd.timers, &log_flush_timer, usl_time_s(LOG_FLUSH_S));
	identity_init(c);
	crypto_init();
	handover_load();
	dataplane_init(c);
	modules_init(c);
	snmpagent_init(c);
	handover_adopt();
	if (failover_init() < 0)
		fatalx("failover: cannot start");
	if (ha_init(err, sizeof(err)) < 0)
		fatalx_status(EX_CONFIG, "%s", err);
	{
		struct handover_stats hs;

		handover_stats(&hs);
		failover_recover(strcmp(hs.start, "restarted") == 0);
	}
	if (pwred_init() < 0)
		fatalx("pseudowire redundancy: cannot start");
	static_tunnels_start();
	log_info("started: version %s, event loop %s, data plane %s, router id %s, control %s",
		 PACKAGE_VERSION, usl_loop_backend(l2tpd.loop), l2tpd.dp->name,
		 router_id_str(l2tpd.router_id), c->ctl_socket);
	svc_notifyf("READY=1\nSTATUS=event loop %s, data plane %s%s", usl_loop_backend(l2tpd.loop),
		   l2tpd.dp->name, l2tpd.conf_refused != NULL ? "; configuration file refused: "
		   "running the previous process's configuration" : "");
	if (usl_loop_run(l2tpd.loop) < 0)
		log_warnx("event loop failed");
	static_tunnels_stop();
	failover_stop(l2tpd.restarting);
	ha_shutdown();
	tunnel_free_all();
	snmpagent_shutdown();
	hooks_shutdown();
	metrics_shutdown();
	ctl_shutdown();
	transport_shutdown();
	l2tpd.dp->shutdown();
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		usl_sig_del(signals[i]);
	usl_loop_free(l2tpd.loop);
	config_free(l2tpd.conf);
	free(l2tpd.conf_refused);
	log_info("stopped");
	return l2tpd.exit_code;
}
