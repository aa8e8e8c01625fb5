/*
 * src/handover.c - restart and upgrade without dropping a pseudowire.
 *
 * A kernel tunnel lives as long as its socket, and a socket outlives a
 * process that passes it on.  A restart therefore hands the next process
 * two descriptors:
 *
 *   state   a memfd: the daemon's, the engine's and the data plane's record
 *           of every established tunnel and its sessions (format below);
 *   bundle  a UNIX stream socket whose receive queue holds every tunnel
 *           socket in flight (SCM_RIGHTS, in the order of the records): one
 *           descriptor however many tunnels there are.
 *
 * `l2tpv3ctl restart` execs our own binary with both inherited
 * ($L2TPV3D_HANDOVER="STATE,BUNDLE"); `systemctl restart` stores them in
 * systemd's file descriptor store (FDNAME l2tpv3d-state, l2tpv3d-bundle),
 * which gives them to the next process ($LISTEN_FDS).
 *
 * Before it saves, the old process settles: listeners stop reading (what
 * arrives waits in their queues... of the sockets the next process opens
 * again: a peer repeats an SCCRQ), new work from the control socket is
 * refused, work under way gets HANDOVER_SETTLE_MS to finish; what is still
 * half-done then (a connection being set up, a session being negotiated, a
 * PPP pseudowire, whose pppd is our child) is cleared with StopCCN/CDN, and
 * the data plane finishes what it sent the kernel.  Nothing is lost of what
 * is carried: the tunnel sockets keep what peers send meanwhile, and the
 * reliable layer's unacknowledged messages go again from the next process.
 *
 * State format, version HANDOVER_VERSION, little-endian:
 *   "l2tpv3d" 0x01 | u32 version | u32 descriptors | u64 body length |
 *   body | u32 CRC-32 of all before it
 *   body: u64 generation | u64 daemon start (monotonic ns) |
 *         u64 when the restart began, u64 when the state was saved (monotonic ns) |
 *         blob configuration (version 3 on: config_carry_text() of the one
 *         running) | counters |
 *         u32 tunnels | per tunnel: u32 descriptor index (~0: none) |
 *         u32 tunnel id | blob record (tunnel_save)
 * A state of another version, a bad checksum or a descriptor count that
 * does not match is refused whole: the start is then a fresh one (the
 * kernel tunnels of the previous run are deleted, static ones made again).
 *
 * The configuration rides along for one case: the next process refuses
 * the file (a typo, a setting the new binary does not know) and, rather
 * than exit and take every tunnel with it, runs what the previous process
 * ran (handover_previous_config()), until a reload applies the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "dp.h"
#include "event.h"
#include "l2tpv3d.h"
#include "sdnotify.h"
#include "usl/log.h"
#include "usl/pack.h"

#define HANDOVER_MAGIC		"l2tpv3d\x01"
#define HANDOVER_VERSION	3	/* 2: the peer's Failover Capability (RFC 4951); 3: the configuration */
#define HANDOVER_VERSION_CONFIG	3	/* the first that carries the configuration */
#define HANDOVER_VERSION_MIN	1
#define HANDOVER_HDR_LEN	24
#define HANDOVER_ENV		"L2TPV3D_HANDOVER"
#define FDNAME_STATE		"l2tpv3d-state"
#define FDNAME_BUNDLE		"l2tpv3d-bundle"
#define NO_FD			UINT32_MAX
#define FDS_PER_MSG		253	/* SCM_MAX_FD */
#define HANDOVER_TICK_MS	20
#define HANDOVER_SETTLE_MS	5000	/* work under way: a few round trips */
#define HANDOVER_DP_IDLE_MS	2000	/* the kernel answers what it was sent */

enum start_kind { START_FRESH, START_ADOPTED, START_FELL_BACK };

struct handed {
	uint32_t fd_index, id;
	const uint8_t *rec;
	size_t len;
};

static struct {
	/* how this process started */
	enum start_kind start;
	char why[256];			/* a fallback's reason */
	const char *via;		/* "exec", "systemd" */
	uint64_t generation;		/* restarts since the last fresh start */
	uint32_t version;		/* of the state handed over */
	unsigned tunnels, sessions, dropped;
	uint64_t fallbacks;
	/* the last restart's times (ms): settling, saved to adopted, request to adopted */
	int64_t settle_ms, resume_ms, total_ms;
	size_t state_bytes;
	usl_time began, saved;
	usl_time started;		/* the daemon's start, carried over */
	bool read;			/* what was handed over is read (handover_read()) */
	/* what was handed over, until adopted */
	uint8_t *state;
	size_t state_len;
	const uint8_t *config;		/* in state: the previous process's configuration */
	size_t config_len;
	struct handed *handed;
	unsigned n_handed;
	int *fds;
	unsigned n_fds;
	uint32_t *keep;			/* tunnel ids, sorted */
	/* a restart under way */
	bool active, settled;
	enum handover_how how;
	usl_time settle_by, idle_by;
	struct usl_timer tick;
	char exe[PATH_MAX];
	char **argv;
} ho;

/* ---- saving -------------------------------------------------------------- */

static void save_counters(struct usl_pack *w)
{
	const struct l2tpd_stats *s = &l2tpd.stats;

	for (unsigned i = 0; i <= L2TP_MSG_TYPE_SAVED; i++) {
		usl_pack_u64(w, s->rx_msgs[i]);
		usl_pack_u64(w, s->tx_msgs[i]);
	}
	for (unsigned i = 0; i < L2TP_DROP__COUNT; i++)
		usl_pack_u64(w, s->drops[i]);
	usl_pack_u64(w, s->retransmits);
	usl_pack_u64(w, s->ctl_requests);
	usl_pack_u64(w, s->rx_datagrams);
	usl_pack_u64(w, s->tx_datagrams);
	usl_pack_u64(w, s->tx_errors);
	usl_pack_u64(w, s->refusals_sent);
	usl_pack_u64(w, s->refusals_suppressed);
	usl_pack_u64(w, s->half_open_evicted);
}

static void restore_counters(struct usl_unpack *r)
{
	struct l2tpd_stats *s = &l2tpd.stats;

	for (unsigned i = 0; i <= L2TP_MSG_TYPE_SAVED; i++) {
		s->rx_msgs[i] = usl_unpack_u64(r);
		s->tx_msgs[i] = usl_unpack_u64(r);
	}
	for (unsigned i = 0; i < L2TP_DROP__COUNT; i++)
		s->drops[i] = usl_unpack_u64(r);
	s->retransmits = usl_unpack_u64(r);
	s->ctl_requests = usl_unpack_u64(r);
	s->rx_datagrams = usl_unpack_u64(r);
	s->tx_datagrams = usl_unpack_u64(r);
	s->tx_errors = usl_unpack_u64(r);
	s->refusals_sent = usl_unpack_u64(r);
	s->refusals_suppressed = usl_unpack_u64(r);
	s->half_open_evicted = usl_unpack_u64(r);
}

/* The whole state into w, every carried tunnel's socket into fds (-1: none). */
static int save_state(struct usl_pack *w, int **fds, unsigned *n_fds, unsigned *n_sessions)
{
	struct usl_rb_node *node;
	size_t hdr, count_at, off, conf_len;
	uint32_t n = 0, crc;
	char *conf;

	*fds = calloc(l2tpd.n_tunnels ? l2tpd.n_tunnels : 1, sizeof(**fds));
	*n_fds = 0;
	*n_sessions = 0;
	if (*fds == NULL)
		return -1;
	conf = config_carry_text(l2tpd.conf, &conf_len);
	if (conf == NULL)
		return -1;
	usl_pack_bytes(w, HANDOVER_MAGIC, 8);
	usl_pack_u32(w, HANDOVER_VERSION);
	hdr = usl_pack_reserve(w, 12);	/* descriptors, body length */
	usl_pack_u64(w, ho.generation + 1);
	usl_pack_u64(w, (uint64_t)l2tpd.started.ns);
	usl_pack_u64(w, (uint64_t)ho.began.ns);
	usl_pack_u64(w, (uint64_t)usl_timerset_now(l2tpd.timers).ns);
	usl_pack_blob(w, conf, conf_len);
	explicit_bzero(conf, conf_len);
	free(conf);
	save_counters(w);
	count_at = usl_pack_reserve(w, 4);
	for (node = usl_rb_first(&l2tpd.tunnel_order); node != NULL; node = usl_rb_next(node)) {
		struct tunnel *t = usl_rb_entry(node, struct tunnel, by_order);

		if (!tunnel_can_handover(t))
			continue;
		usl_pack_u32(w, t->fd >= 0 ? *n_fds : NO_FD);
		if (t->fd >= 0)
			(*fds)[(*n_fds)++] = t->fd;
		usl_pack_u32(w, t->id);
		off = usl_pack_reserve(w, 4);
		tunnel_save(t, w);
		usl_pack_patch_u32(w, off, (uint32_t)(w->len - off - 4));
		*n_sessions += t->n_sessions;
		n++;
	}
	usl_pack_patch_u32(w, count_at, n);
	usl_pack_patch_u32(w, hdr, *n_fds);
	usl_pack_patch_u32(w, hdr + 4, (uint32_t)(w->len - HANDOVER_HDR_LEN));
	usl_pack_patch_u32(w, hdr + 8, (uint32_t)((uint64_t)(w->len - HANDOVER_HDR_LEN) >> 32));
	crc = w->failed ? 0 : (uint32_t)crc32(0L, w->p, (uInt)w->len);
	usl_pack_u32(w, crc);
	return w->failed ? -1 : (int)n;
}

static int state_memfd(const struct usl_pack *w, char *err, size_t errlen)
{
	int fd = memfd_create(FDNAME_STATE, MFD_CLOEXEC);
	size_t done = 0;
	ssize_t k;

	if (fd < 0) {
		snprintf(err, errlen, "memfd_create: %s", strerror(errno));
		return -1;
	}
	while (done < w->len) {
		k = write(fd, w->p + done, w->len - done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			snprintf(err, errlen, "writing the state: %s", strerror(errno));
			close(fd);
			return -1;
		}
		done += (size_t)k;
	}
	return fd;
}

/* Sends fds into one end of a socket pair; returns the other end, which holds them all. */
static int bundle_fds(const int *fds, unsigned n, char *err, size_t errlen)
{
	int sv[2], big = 64 << 20;
	char cbuf[CMSG_SPACE(sizeof(int) * FDS_PER_MSG)];
	char byte = 'T';

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return -1;
	}
	/* queued skbs count against the sender: room for 100,000 descriptors */
	if (setsockopt(sv[0], SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big)) < 0)
		setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	for (unsigned i = 0; i < n; i += FDS_PER_MSG) {
		unsigned k = n - i < FDS_PER_MSG ? n - i : FDS_PER_MSG;
		struct iovec iov = { &byte, 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				     .msg_controllen = CMSG_SPACE(sizeof(int) * k) };
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * k);
		memcpy(CMSG_DATA(cm), fds + i, sizeof(int) * k);
		if (sendmsg(sv[0], &mh, MSG_NOSIGNAL) != 1) {
			snprintf(err, errlen, "passing %u sockets: %s", n, strerror(errno));
			close(sv[0]);
			close(sv[1]);
			return -1;
		}
	}
	close(sv[0]);
	return sv[1];
}

/* ---- the restart --------------------------------------------------------- */

static bool tunnel_settled(const struct tunnel *t)
{
	const struct usl_list *pos;

	if (t->closing || l2tp_cc_state(t->cc) >= L2TP_CC_STOPPING)
		return true;	/* not carried: its StopCCN is sent */
	if (!tunnel_can_handover(t))
		return false;
	usl_list_foreach(pos, &t->sessions) {
		const struct session *s = usl_container_of(pos, const struct session, tunnel_link);

		if (!session_can_handover(s) && !s->deleted && s->prof->pw_type != L2TP_PW_PPP)
			return false;
	}
	return true;
}

static bool all_settled(void)
{
	struct usl_rb_node *node;

	for (node = usl_rb_first(&l2tpd.tunnel_order); node != NULL; node = usl_rb_next(node))
		if (!tunnel_settled(usl_rb_entry(node, struct tunnel, by_order)))
			return false;
	return true;
}

/* What cannot be carried is cleared, towards the peer and the CLI alike. */
static void clear_uncarried(void)
{
	struct usl_rb_node *node, *next;
	unsigned nt = 0, ns = 0;

	for (node = usl_rb_first(&l2tpd.tunnel_order); node != NULL; node = next) {
		struct tunnel *t = usl_rb_entry(node, struct tunnel, by_order);
		struct usl_list *pos, *tmp;

		next = usl_rb_next(node);
		if (t->closing || l2tp_cc_state(t->cc) >= L2TP_CC_STOPPING)
			continue;
		if (!tunnel_can_handover(t)) {
			tunnel_delete(t, L2TP_STOPCCN_SHUTTING_DOWN, "restarting: not set up in time");
			nt++;
			continue;
		}
		usl_list_foreach_safe(pos, tmp, &t->sessions) {
			struct session *s = usl_container_of(pos, struct session, tunnel_link);

			if (!session_can_handover(s) && !s->deleted) {
				session_delete(s, L2TP_CDN_ADMIN,
					       s->prof->pw_type == L2TP_PW_PPP ?
					       "restarting: PPP pseudowires are not carried" :
					       "restarting: not set up in time");
				ns++;
			}
		}
	}
	if (nt + ns > 0)
		log_warnx("restart: cleared %u tunnels and %u sessions that were not up", nt, ns);
}

static void handover_abort(const char *why)
{
	log_warnx("restart: %s; running on", why);
	ho.active = false;
	l2tpd.restarting = false;
	usl_timer_cancel(&ho.tick);
	transport_listeners_read(true);
	svc_notifyf("READY=1\nSTATUS=restart failed: %s", why);
}

static void exec_next(int state_fd, int bundle_fd)
{
	char env[64];

	if (fcntl(state_fd, F_SETFD, 0) < 0 || fcntl(bundle_fd, F_SETFD, 0) < 0)
		return;
	snprintf(env, sizeof(env), "%d,%d", state_fd, bundle_fd);
	setenv(HANDOVER_ENV, env, 1);
	execv(ho.exe, ho.argv);
	unsetenv(HANDOVER_ENV);
}

/* Saves, hands over, and execs or exits; returns only when that failed. */
static void handover_finish(void)
{
	struct usl_pack w;
	unsigned n_fds = 0, n_sessions = 0;
	int *fds = NULL, state_fd = -1, bundle_fd = -1, n;
	char err[256] = "", why[320];

	usl_pack_init(&w);
	n = save_state(&w, &fds, &n_fds, &n_sessions);
	if (n < 0)
		snprintf(err, sizeof(err), "out of memory saving the state");
	else if ((state_fd = state_memfd(&w, err, sizeof(err))) >= 0)
		bundle_fd = bundle_fds(fds, n_fds, err, sizeof(err));
	usl_pack_free(&w);
	free(fds);
	if (bundle_fd >= 0) {
		event_emit(EV_RESTARTING, NULL, NULL, NULL);
		log_info("restart: handing over %d tunnels, %u sessions (%s); settled in %lld ms",
			 n, n_sessions, ho.how == HANDOVER_EXEC ? "exec" : "systemd's file descriptor store",
			 (long long)usl_time_to_ms(usl_time_sub(usl_timerset_now(l2tpd.timers), ho.began)));
		if (ho.how == HANDOVER_EXEC) {
			exec_next(state_fd, bundle_fd);
			snprintf(err, sizeof(err), "exec %.160s: %s", ho.exe, strerror(errno));
		} else if (sd_fdstore_put(FDNAME_STATE, &state_fd, 1, err, sizeof(err)) == 0 &&
			   sd_fdstore_put(FDNAME_BUNDLE, &bundle_fd, 1, err, sizeof(err)) == 0) {
			log_info("restart: state stored; exiting for the next process");
			_exit(0);
		} else {	/* half a handover is none: the next start must not see it */
			sd_fdstore_remove(FDNAME_STATE, why, sizeof(why));
			sd_fdstore_remove(FDNAME_BUNDLE, why, sizeof(why));
		}
	}
	if (state_fd >= 0)
		close(state_fd);
	if (bundle_fd >= 0)
		close(bundle_fd);
	snprintf(why, sizeof(why), "cannot hand over: %s", err);
	handover_abort(why);
	if (ho.how == HANDOVER_FDSTORE) {	/* systemd stops us: the way it always did */
		log_warnx("restart: closing every tunnel instead");
		kill(getpid(), SIGTERM);
	}
}

static void handover_tick(struct usl_timer *tm)
{
	usl_time now = usl_timerset_now(l2tpd.timers);

	if (!ho.settled) {
		if (!all_settled() && usl_time_cmp(now, ho.settle_by) < 0) {
			usl_timer_arm(l2tpd.timers, tm, usl_time_ms(HANDOVER_TICK_MS));
			return;
		}
		clear_uncarried();
		ho.settled = true;
		ho.idle_by = usl_time_add(now, usl_time_ms(HANDOVER_DP_IDLE_MS));
	}
	if (l2tpd.dp->idle != NULL && !l2tpd.dp->idle() && usl_time_cmp(now, ho.idle_by) < 0) {
		usl_timer_arm(l2tpd.timers, tm, usl_time_ms(HANDOVER_TICK_MS));
		return;
	}
	handover_finish();
}

/*
 * An exec restart runs the binary at our path, maybe an upgraded one: that
 * binary must load the configuration, or the next process would exit at
 * once and take every tunnel with it.  It checks the file (`-n`) first; its
 * first complaint becomes ours.  HANDOVER_CHECK_MS bounds the wait.
 */
#define HANDOVER_CHECK_MS	10000

static int config_check_next(char *err, size_t errlen)
{
	char out[512], *nl;
	size_t got = 0;
	int p[2], status = 0;
	struct pollfd pfd;
	pid_t pid;

	if (l2tpd.conf_path == NULL || pipe2(p, O_CLOEXEC) < 0)
		return 0;	/* nothing to check it with: the exec says */
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return 0;
	}
	if (pid == 0) {
		dup2(p[1], STDERR_FILENO);
		dup2(p[1], STDOUT_FILENO);
		execl(ho.exe, ho.exe, "-n", "-f", l2tpd.conf_path, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	pfd.fd = p[0];
	pfd.events = POLLIN;
	while (got < sizeof(out) - 1 && poll(&pfd, 1, HANDOVER_CHECK_MS) > 0) {
		ssize_t n = read(p[0], out + got, sizeof(out) - 1 - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	out[got] = '\0';
	close(p[0]);
	kill(pid, SIGKILL);	/* gone already, unless it hung */
	if (waitpid(pid, &status, 0) != pid)
		return 0;	/* its status is lost: the exec says */
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if ((nl = strchr(out, '\n')) != NULL)
		*nl = '\0';
	snprintf(err, errlen, "%s does not load %s, nothing restarted: %s", ho.exe, l2tpd.conf_path,
		 out[0] ? out : WIFEXITED(status) ? "it failed" : "no answer in time");
	return -1;
}

int handover_begin(enum handover_how how, char *err, size_t errlen)
{
	if (ho.active) {
		snprintf(err, errlen, "a restart is under way");
		return -1;
	}
	if (l2tpd.shutting_down) {
		snprintf(err, errlen, "daemon is shutting down");
		return -1;
	}
	if (how == HANDOVER_EXEC && ho.exe[0] == '\0') {
		snprintf(err, errlen, "the daemon's own binary is unknown (/proc/self/exe)");
		return -1;
	}
	if (how == HANDOVER_EXEC && config_check_next(err, errlen) < 0) {
		log_warnx("restart refused: %s", err);
		return HANDOVER_E_CONFIG;
	}
	ho.active = true;
	l2tpd.restarting = true;
	ho.settled = false;
	ho.how = how;
	ho.began = usl_timerset_now(l2tpd.timers);
	ho.settle_by = usl_time_add(usl_timerset_now(l2tpd.timers), usl_time_ms(HANDOVER_SETTLE_MS));
	log_info("restart: settling %u tunnels, %u sessions", l2tpd.n_tunnels, l2tpd.n_sessions);
	svc_notifyf(how == HANDOVER_EXEC ? "RELOADING=1\nSTATUS=restarting" : "STOPPING=1");
	transport_listeners_read(false);
	usl_timer_init(&ho.tick, handover_tick);
	usl_timer_arm(l2tpd.timers, &ho.tick, usl_time_ms(0));
	return 0;
}

/* ---- loading --------------------------------------------------------------- */

/*
 * What was handed over goes: descriptors no tunnel took are closed (a
 * kernel tunnel dies with its socket), the state freed; with keep_ids the
 * IDs the start's cleanup spares go too (a fallback: none is spared).
 */
static void handed_free(bool keep_ids)
{
	for (unsigned i = 0; i < ho.n_fds; i++)
		if (ho.fds[i] >= 0)
			close(ho.fds[i]);
	free(ho.fds);
	free(ho.handed);
	if (ho.state != NULL)
		explicit_bzero(ho.state, ho.state_len);	/* the configuration's secrets */
	free(ho.state);
	ho.fds = NULL;
	ho.handed = NULL;
	ho.state = NULL;
	ho.config = NULL;
	ho.config_len = 0;
	ho.n_fds = 0;
	if (keep_ids) {
		free(ho.keep);
		ho.keep = NULL;
		ho.n_handed = 0;
		l2tpd.kept_tunnel_ids = NULL;
		l2tpd.n_kept_tunnel_ids = 0;
	}
}

static void fall_back(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fall_back(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ho.why, sizeof(ho.why), fmt, ap);
	va_end(ap);
	ho.start = START_FELL_BACK;
	ho.fallbacks++;
	log_warnx("restart: the handed-over state is not used (%s): starting afresh; "
		  "the previous run's kernel tunnels are deleted", ho.why);
	handed_free(true);
}

/*
 * systemd would give the same descriptors to every later start (a crash's
 * automatic restart too) until told otherwise: they are ours now.
 */
static void forget_stored(void)
{
	char err[256];

	if (sd_listen_count() == 0)
		return;
	if (sd_fdstore_remove(FDNAME_STATE, err, sizeof(err)) < 0 ||
	    sd_fdstore_remove(FDNAME_BUNDLE, err, sizeof(err)) < 0)
		log_warnx("restart: clearing systemd's file descriptor store: %s", err);
}

/* Where the previous process left the state and the bundle: exec, or systemd. */
static bool find_descriptors(int *state_fd, int *bundle_fd)
{
	const char *env = getenv(HANDOVER_ENV);

	*state_fd = *bundle_fd = -1;
	if (env != NULL) {
		ho.via = "exec";
		if (sscanf(env, "%d,%d", state_fd, bundle_fd) != 2 || *state_fd < 3 ||
		    *bundle_fd < 3 || fcntl(*state_fd, F_GETFD) < 0 || fcntl(*bundle_fd, F_GETFD) < 0)
			*state_fd = *bundle_fd = -1;
		unsetenv(HANDOVER_ENV);
		if (*state_fd >= 0) {
			fcntl(*state_fd, F_SETFD, FD_CLOEXEC);
			fcntl(*bundle_fd, F_SETFD, FD_CLOEXEC);
		}
	} else {
		*state_fd = sd_listen_take(FDNAME_STATE);
		*bundle_fd = sd_listen_take(FDNAME_BUNDLE);
		if (*state_fd >= 0 || *bundle_fd >= 0)
			ho.via = "systemd";
		forget_stored();
	}
	sd_listen_close_rest();
	if (*state_fd < 0 || *bundle_fd < 0) {
		if (*state_fd >= 0)
			close(*state_fd);
		if (*bundle_fd >= 0)
			close(*bundle_fd);
		if (ho.via != NULL)
			fall_back("the %s handover lacks its state or its sockets", ho.via);
		return false;
	}
	return true;
}

/* Every descriptor in the bundle's queue, in order; -1 when they are not exactly n. */
static int receive_fds(int bundle, unsigned n)
{
	char cbuf[CMSG_SPACE(sizeof(int) * FDS_PER_MSG)];
	unsigned got = 0;

	ho.fds = calloc(n ? n : 1, sizeof(int));
	if (ho.fds == NULL)
		return -1;
	for (;;) {
		char byte;
		struct iovec iov = { &byte, 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				     .msg_controllen = sizeof(cbuf) };
		ssize_t k = recvmsg(bundle, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		struct cmsghdr *cm;

		if (k <= 0)
			break;
		for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm)) {
			unsigned k2 = (unsigned)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			const int *p = (const int *)CMSG_DATA(cm);

			if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
				continue;
			for (unsigned i = 0; i < k2; i++) {
				if (got < n)
					ho.fds[got] = p[i];
				else
					close(p[i]);
				got++;
			}
		}
		if (mh.msg_flags & MSG_CTRUNC)
			got = n + 1;	/* lost some: refuse the lot */
	}
	ho.n_fds = got < n ? got : n;
	return got == n ? 0 : -1;
}

static int keep_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The body's tunnel index (records stay unparsed until adoption). */
static int index_body(struct usl_unpack *r)
{
	uint32_t n;

	ho.generation = usl_unpack_u64(r);
	ho.started = usl_time_ns((int64_t)usl_unpack_u64(r));
	ho.began = usl_time_ns((int64_t)usl_unpack_u64(r));
	ho.saved = usl_time_ns((int64_t)usl_unpack_u64(r));
	if (ho.version >= HANDOVER_VERSION_CONFIG)
		ho.config = usl_unpack_blob(r, &ho.config_len);
	restore_counters(r);
	n = usl_unpack_u32(r);
	if (r->bad || n > usl_unpack_left(r) / 12)
		return -1;
	ho.handed = calloc(n ? n : 1, sizeof(*ho.handed));
	ho.keep = calloc(n ? n : 1, sizeof(*ho.keep));
	if (ho.handed == NULL || ho.keep == NULL)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		struct handed *h = &ho.handed[i];

		h->fd_index = usl_unpack_u32(r);
		h->id = usl_unpack_u32(r);
		h->rec = usl_unpack_blob(r, &h->len);
		if (r->bad || (h->fd_index != NO_FD && h->fd_index >= ho.n_fds))
			return -1;
		ho.keep[i] = h->id;
	}
	ho.n_handed = n;
	qsort(ho.keep, n, sizeof(*ho.keep), keep_cmp);
	l2tpd.kept_tunnel_ids = ho.keep;
	l2tpd.n_kept_tunnel_ids = n;
	return usl_unpack_left(r) == 4 ? 0 : -1;
}

/* Checks the container: magic, version, length, checksum; the body's extent. */
static const char *check_container(const uint8_t *p, size_t len, uint32_t *n_fds,
				   size_t *body_len)
{
	struct usl_unpack r;
	uint64_t blen;
	uint32_t version, crc;

	usl_unpack_init(&r, p, len);
	if (memcmp(p, HANDOVER_MAGIC, 8) != 0)
		return "not an l2tpv3d state";
	r.off = 8;
	version = usl_unpack_u32(&r);
	*n_fds = usl_unpack_u32(&r);
	blen = usl_unpack_u64(&r);
	if (version < HANDOVER_VERSION_MIN || version > HANDOVER_VERSION) {
		snprintf(ho.why, sizeof(ho.why), "state format version %u, this binary reads %u to %u",
			 version, HANDOVER_VERSION_MIN, HANDOVER_VERSION);
		return ho.why;
	}
	ho.version = version;
	if (blen != len - HANDOVER_HDR_LEN - 4)
		return "state truncated or padded";
	crc = (uint32_t)p[len - 4] | (uint32_t)p[len - 3] << 8 | (uint32_t)p[len - 2] << 16 |
	      (uint32_t)p[len - 1] << 24;
	if (crc != (uint32_t)crc32(0L, p, (uInt)(len - 4)))
		return "state checksum mismatch";
	*body_len = (size_t)blen;
	return NULL;
}

/* Takes and checks what was handed over, once (a refused file has it read early). */
static void handover_read(void)
{
	int state_fd, bundle_fd;
	uint32_t n_fds;
	size_t body_len;
	struct usl_unpack r;
	const char *bad;
	char why[256];

	if (ho.read)
		return;
	ho.read = true;
	/*
	 * Tests point a restart elsewhere: a stand-in for systemd, which
	 * restarts without checking the file and passes the descriptors as
	 * $LISTEN_FDS (tests/integration/handover-badconf.sh).
	 */
	if (getenv("L2TPV3D_RESTART_EXEC") != NULL && getenv("L2TPV3D_RESTART_EXEC")[0])
		snprintf(ho.exe, sizeof(ho.exe), "%s", getenv("L2TPV3D_RESTART_EXEC"));
	else if (readlink("/proc/self/exe", ho.exe, sizeof(ho.exe) - 1) < 0)
		ho.exe[0] = '\0';
	if (!find_descriptors(&state_fd, &bundle_fd))
		return;
	if (fd_read_whole(state_fd, HANDOVER_HDR_LEN + 4, (size_t)1 << 34, &ho.state,
			  &ho.state_len) < 0) {
		close(state_fd);
		close(bundle_fd);
		fall_back("the state cannot be read");
		return;
	}
	close(state_fd);
	ho.state_bytes = ho.state_len;
	bad = check_container(ho.state, ho.state_len, &n_fds, &body_len);
	if (bad != NULL) {
		snprintf(why, sizeof(why), "%s", bad);
		receive_fds(bundle_fd, 0);
		close(bundle_fd);
		fall_back("%s", why);
		return;
	}
	if (receive_fds(bundle_fd, n_fds) < 0) {
		close(bundle_fd);
		fall_back("%u sockets announced, %u received", n_fds, ho.n_fds);
		return;
	}
	close(bundle_fd);
	usl_unpack_init(&r, ho.state + HANDOVER_HDR_LEN, body_len + 4);
	if (index_body(&r) < 0) {
		fall_back("malformed state");
		return;
	}
	ho.start = START_ADOPTED;
}

void handover_load(void)
{
	handover_read();
	if (ho.start == START_ADOPTED)
		l2tpd.started = ho.started;	/* uptime goes on */
}

struct l2tpd_config *handover_previous_config(const char *path, const char *file_err)
{
	struct l2tpd_config *c;
	char err[512];

	handover_read();
	if (ho.start != START_ADOPTED)
		return NULL;	/* a fresh start, or a refused state: said already */
	if (ho.version < HANDOVER_VERSION_CONFIG || ho.config == NULL) {
		log_warnx("restart: the handed-over state (format version %u) holds no "
			  "configuration to run instead of the refused file", ho.version);
		return NULL;
	}
	c = config_load_text((const char *)ho.config, ho.config_len, path, err, sizeof(err));
	if (c == NULL) {
		log_warnx("restart: the previous process's configuration is refused too: %s", err);
		return NULL;
	}
	log_at(LOG_LVL_ERR, "configuration file %s refused: %s; running the configuration the "
	       "previous process ran (handed over with its tunnels) until a reload applies the "
	       "file", path ? path : "(none)", file_err);
	return c;
}

void handover_adopt(void)
{
	char err[256];
	usl_time now;

	if (ho.start != START_ADOPTED)
		return;
	for (unsigned i = 0; i < ho.n_handed; i++) {
		const struct handed *h = &ho.handed[i];
		int fd = h->fd_index == NO_FD ? -1 : ho.fds[h->fd_index];
		struct usl_unpack r;
		unsigned ns;

		if (h->fd_index != NO_FD)
			ho.fds[h->fd_index] = -1;	/* the tunnel's now, or closed */
		usl_unpack_init(&r, h->rec, h->len);
		r.version = ho.version == HANDOVER_VERSION ? 0 : ho.version;
		if (tunnel_restore(&r, fd, false, &ns, err, sizeof(err)) == NULL) {
			log_warnx("restart: tunnel %u not adopted: %s", h->id, err);
			ho.dropped++;
			continue;
		}
		ho.tunnels++;
		ho.sessions += ns;
	}
	handed_free(false);
	now = usl_timerset_now(l2tpd.timers);
	ho.resume_ms = usl_time_to_ms(usl_time_sub(now, ho.saved));
	ho.total_ms = usl_time_to_ms(usl_time_sub(now, ho.began));
	log_info("restart: adopted %u tunnels, %u sessions (%s, restart %llu) %lld ms after the "
		 "state was saved, %lld ms after the restart began%s", ho.tunnels, ho.sessions,
		 ho.via, (unsigned long long)ho.generation, (long long)ho.resume_ms,
		 (long long)ho.total_ms, ho.dropped ? "; some were not: see above" : "");
}

void handover_stats(struct handover_stats *st)
{
	static const char *const kinds[] = { "fresh", "restarted", "fell-back" };

	st->start = kinds[ho.start];
	st->restarts = ho.generation;
	st->tunnels = ho.tunnels;
	st->sessions = ho.sessions;
	st->dropped = ho.dropped;
	st->restart_ms = ho.total_ms;
}

void handover_set_argv(char **argv)
{
	ho.argv = argv;
}

json_object *handover_json(void)
{
	json_object *o = json_object_new_object();
	struct handover_stats st;

	handover_stats(&st);
	json_add_str(o, "start", st.start);
	json_add_int(o, "restarts", (int64_t)ho.generation);
	if (ho.via != NULL)
		json_add_str(o, "via", ho.via);
	if (ho.start == START_ADOPTED) {
		json_add_int(o, "tunnels_adopted", ho.tunnels);
		json_add_int(o, "sessions_adopted", ho.sessions);
		json_add_int(o, "tunnels_dropped", ho.dropped);
		json_add_int(o, "state_bytes", (int64_t)ho.state_bytes);
		json_add_int(o, "resume_ms", ho.resume_ms);
		json_add_int(o, "restart_ms", ho.total_ms);
	}
	if (ho.start == START_FELL_BACK)
		json_add_str(o, "reason", ho.why);
	json_add_int(o, "fallbacks", (int64_t)ho.fallbacks);

	json_object_object_add(o, "restarting", json_object_new_boolean(ho.active));
	return o;
}
