/*
 * src/dp_kernel_owned.c - the kernel tunnels this daemon owns: the state
 * file that records them, and the start-up cleanup that deletes those a
 * previous run left (an overview: dp_kernel.c).
 *
 * Crash safety.  Tunnel ids are appended to a state file ("+id" before the
 * create is sent, "-id" once the delete is answered) and compacted by an
 * atomic rewrite when the log is mostly dead lines; at start-up the kernel's
 * tunnels are dumped and the recorded ones deleted, at shut-down whatever is
 * left is deleted.  The file is per network namespace (tunnel ids are), and
 * locked, so two daemons cannot clean up each other's tunnels.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <libmnl/libmnl.h>
#include <linux/l2tp.h>

#include "dp_kernel_int.h"

/* a full disk retries every second: a few lines a minute, and the count */
static struct log_ratelimit rec_rl = LOG_RATELIMIT_INIT(60, 5);

/* ---- state file: the tunnel ids we own ------------------------------------ */

bool ktunnel_id_eq(const struct usl_hnode *n, const void *key)
{
	return usl_hash_entry(n, struct ktunnel, by_id)->id == *(const uint32_t *)key;
}

struct ktunnel *ktunnel_find(uint32_t id)
{
	struct usl_hnode *n = usl_hash_lookup(&kdp.tunnels, &id, usl_hash_u32(id));

	return n ? usl_hash_entry(n, struct ktunnel, by_id) : NULL;
}

struct ktunnel *ktunnel_new(uint32_t id, enum kstate state)
{
	struct ktunnel *kt = calloc(1, sizeof(*kt));

	if (kt == NULL)
		return NULL;
	kt->id = id;
	kt->state = state;
	usl_list_init(&kt->sess_dels);
	usl_list_init(&kt->confirm);
	return kt;
}

/* Records kt as ours ("+id"): from now on a crash leaves a trace of it. */
void record_add(struct ktunnel *kt)
{
	usl_hash_insert(&kdp.tunnels, &kt->by_id, usl_hash_u32(kt->id));
	dps_append(&kdp.rec, '+', kt->id);
}

/* kt is gone from the kernel: forget and free it. */
void record_del(struct ktunnel *kt)
{
	usl_list_del(&kt->confirm);
	usl_hash_remove(&kdp.tunnels, &kt->by_id);
	dps_append(&kdp.rec, '-', kt->id);
	free(kt);
}

/* Every failure is worth a line (a full disk is not silent), within limits. */
static void rec_warn(void)
{
	log_warnx_rl(&rec_rl, now(), "state file %s: %s (%" PRIu64 " failures)%s", kdp.rec.path,
		     kdp.rec.why, kdp.rec.failures,
		     kdp.rec.stale ? "; tunnels created meanwhile may outlive a crash" : "");
}

/* Rewrites the file with the live ids only (dps_rewrite). */
static int rec_rewrite(void)
{
	size_t n = 0, count = usl_hash_count(&kdp.tunnels);
	uint32_t *ids = malloc((count + 1) * sizeof(*ids));
	struct usl_hnode *h;
	int rc;

	if (ids == NULL) {
		snprintf(kdp.rec.why, sizeof(kdp.rec.why), "rewrite: out of memory");
		return -ENOMEM;
	}
	for (h = usl_hash_first(&kdp.tunnels); h != NULL; h = usl_hash_next(&kdp.tunnels, h))
		ids[n++] = usl_hash_entry(h, struct ktunnel, by_id)->id;
	rc = dps_rewrite(&kdp.rec, ids, n);
	free(ids);
	return rc;
}

/* Compacts, or repairs after a failed write; a failure retries in a second. */
static void rec_rewrite_now(void)
{
	bool was_stale = kdp.rec.stale;

	if (rec_rewrite() < 0) {
		rec_warn();
		usl_timer_arm(l2tpd.timers, &kdp.rec_timer, usl_time_ms(1000));
	} else if (was_stale && kdp.rec.failures > 0) {
		log_info("state file %s: complete again after %" PRIu64 " failures", kdp.rec.path,
			 kdp.rec.failures);
	}
}

/*
 * Appends the buffered lines (one write per loop turn), and rewrites when
 * dead lines dominate (O(live) once per O(live) appends) or a write failed
 * (the file lacks records).  No fsync: the file protects against the
 * daemon dying, not the host (kernel tunnels do not survive a reboot either).
 */
void rec_flush(void)
{
	if (dps_flush(&kdp.rec) < 0)
		rec_warn();
	if (dps_want_rewrite(&kdp.rec, usl_hash_count(&kdp.tunnels)) &&
	    !usl_timer_armed(&kdp.rec_timer))
		rec_rewrite_now();
}

void on_rec_timer(struct usl_timer *tm)
{
	(void)tm;
	rec_flush();
}

static int mkdir_p(const char *dir)
{
	char p[CFG_PATH_MAX];

	snprintf(p, sizeof(p), "%s", dir);
	for (char *s = strchr(p + 1, '/'); ; s = strchr(s + 1, '/')) {
		if (s != NULL)
			*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return -1;
		if (s == NULL)
			return 0;
		*s = '/';
	}
}

/* Tunnel ids are per network namespace, and so is the file. */
static unsigned long netns_inode(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) == 0 ? (unsigned long)st.st_ino : 0;
}

static int rec_lock(const char *dir, unsigned long ns, char *err, size_t errlen)
{
	char lock[sizeof(kdp.rec.path) + 8];

	snprintf(lock, sizeof(lock), "%s/kernel-tunnels.%lu.lock", dir, ns);
	kdp.lock_fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (kdp.lock_fd < 0) {
		snprintf(err, errlen, "state file lock %s: %s", lock, strerror(errno));
		return -1;
	}
	if (flock(kdp.lock_fd, LOCK_EX | LOCK_NB) < 0) {
		snprintf(err, errlen, "%s is locked: another l2tpv3d runs the kernel data plane "
			 "in this network namespace with state_dir %s", lock, dir);
		return -1;
	}
	return 0;
}

/* One record of the previous run: kdp.tunnels ends up with its live ids, K_STALE. */
static void rec_apply(void *arg, char op, uint32_t id)
{
	struct usl_hnode *n = usl_hash_lookup(&kdp.tunnels, &id, usl_hash_u32(id));
	struct ktunnel *kt;

	(void)arg;
	if (op == '-' && n != NULL) {
		usl_hash_remove(&kdp.tunnels, n);
		free(usl_hash_entry(n, struct ktunnel, by_id));
	} else if (op == '+' && n == NULL && (kt = ktunnel_new(id, K_STALE)) != NULL) {
		usl_hash_insert(&kdp.tunnels, &kt->by_id, usl_hash_u32(id));
	}
}

/*
 * Reads the previous run's ids.  Torn and garbled lines are skipped (a
 * tunnel of ours may then survive, but no id we did not write is taken).
 */
static void rec_load(void)
{
	struct dps_load_stats st;
	int rc = dps_load(kdp.rec.path, rec_apply, NULL, &st);

	if (rc < 0)
		log_warnx("state file %s: %s: tunnels of a previous run are not cleaned up",
			  kdp.rec.path, strerror(-rc));
	if (st.torn > 0 || st.bad > 0)
		log_warnx("state file %s: ignored %u torn and %u garbled lines (a full disk or "
			  "a crash during a write)", kdp.rec.path, st.torn, st.bad);
}

/* A start needs a writable state file: without it a crash would leak tunnels. */
int rec_open(char *err, size_t errlen)
{
	const char *dir = l2tpd.conf->state_dir;
	unsigned long ns = netns_inode();
	char path[sizeof(kdp.rec.path)];

	if (mkdir_p(dir) < 0) {
		snprintf(err, errlen, "state_dir %s: %s", dir, strerror(errno));
		return -1;
	}
	/* its record decides which kernel tunnels a start deletes */
	if (path_trusted("state_dir", dir, err, errlen) < 0)
		return -1;
	if (rec_lock(dir, ns, err, errlen) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/kernel-tunnels.%lu", dir, ns);
	dps_init(&kdp.rec, path);
	rec_load();
	if (dps_open(&kdp.rec) < 0) {
		snprintf(err, errlen, "state file %s: %s", kdp.rec.path, kdp.rec.why);
		return -1;
	}
	return 0;
}

/* ---- start-up cleanup -------------------------------------------------------- */

/*
 * The start-up looks at our tunnels with a TUNNEL_GET of each id, not a
 * dump: Linux 6.1 finds each tunnel of a dump by walking its tunnels from
 * the first (quadratic: more than a minute at 10,000 tunnels under
 * emulation, while the daemon answers nobody), where a GET finds one by
 * its id.  The requests go out in windows like any others.
 */
static struct {
	int err;		/* the first answer other than "no such tunnel" */
} look;

static void look_data(struct kreq *r, const struct nlmsghdr *nlh)
{
	const struct nlattr *tb[L2TP_ATTR_MAX + 1];
	struct ktunnel *kt;

	(void)r;
	l2tp_attrs(nlh, tb);
	kt = ktunnel_find(attr_u32(tb[L2TP_ATTR_CONN_ID]));
	if (kt == NULL)
		return;
	kt->present = true;
	kt->kpeer = attr_u32(tb[L2TP_ATTR_PEER_CONN_ID]);
	kt->kencap = attr_u16(tb[L2TP_ATTR_ENCAP_TYPE]);
}

static void look_done(struct kreq *r, int err, const char *ext)
{
	(void)r;
	(void)ext;
	if (err != 0 && !gone(err) && look.err == 0)
		look.err = err;
}

static bool look_one(uint32_t id)
{
	struct nlmsghdr *nlh = l2tp_msg(L2TP_CMD_TUNNEL_GET, NLM_F_ACK);

	mnl_attr_put_u32(nlh, L2TP_ATTR_CONN_ID, id);
	return kreq_submit(nlh, NULL, look_done, look_data) != NULL;
}

/*
 * Whether each tunnel of ours in the given state is in the kernel now
 * (present, with its peer id and encapsulation).  A GET of id 0, nobody's,
 * goes first: it proves we may use the family at all (CAP_NET_ADMIN in
 * the network namespace), better found here than on the first tunnel.
 */
int tunnels_look(enum kstate state, const char *what, char *err, size_t errlen)
{
	struct usl_hnode *n;

	look.err = 0;
	if (!look_one(0))
		look.err = -ENOMEM;
	for (n = usl_hash_first(&kdp.tunnels); n != NULL; n = usl_hash_next(&kdp.tunnels, n)) {
		struct ktunnel *kt = usl_hash_entry(n, struct ktunnel, by_id);

		if (kt->state != state)
			continue;
		kt->present = false;
		if (!look_one(kt->id))
			look.err = -ENOMEM;
	}
	if (nl_sync(SYNC_MS) < 0) {
		snprintf(err, errlen, "looking up %s kernel L2TP tunnels: no answer", what);
		return -1;
	}
	if (look.err != 0) {
		snprintf(err, errlen, "looking up %s kernel L2TP tunnels: %s%s", what,
			 strerror(-look.err), look.err == -EPERM ? " (needs CAP_NET_ADMIN)" : "");
		return -1;
	}
	return 0;
}

/*
 * A handed-over tunnel is ours even when the file lacks it (a write failed
 * in the previous process): it is taken into the record, or the adoption
 * would drop a live tunnel.  The previous process held its socket, which
 * we inherited.
 */
static void stale_add_kept(void)
{
	for (unsigned i = 0; i < l2tpd.n_kept_tunnel_ids; i++) {
		uint32_t id = l2tpd.kept_tunnel_ids[i];
		struct ktunnel *kt;

		if (id == 0 || ktunnel_find(id) != NULL || (kt = ktunnel_new(id, K_STALE)) == NULL)
			continue;
		kt->unrecorded = true;
		usl_hash_insert(&kdp.tunnels, &kt->by_id, usl_hash_u32(id));
	}
}

/*
 * Deletes the recorded tunnels the look found, except those handed over
 * (K_KEPT: adopted, or deleted after the adoption); forgets the rest.
 */
static unsigned stale_delete(unsigned *kept)
{
	struct usl_list walk;
	struct usl_hnode *n;
	unsigned deleted = 0;

	usl_list_init(&walk);
	for (n = usl_hash_first(&kdp.tunnels); n != NULL; n = usl_hash_next(&kdp.tunnels, n))
		usl_list_add_tail(&walk, &usl_hash_entry(n, struct ktunnel, by_id)->link);
	while (!usl_list_empty(&walk)) {
		struct ktunnel *kt = usl_list_first_entry(&walk, struct ktunnel, link);

		usl_list_del(&kt->link);
		if (kt->present && tunnel_id_kept(kt->id)) {
			kt->state = K_KEPT;
			(*kept)++;
			if (kt->unrecorded)
				log_info("kernel: tunnel %u was handed over but is not in %s: "
					 "recorded now", kt->id, kdp.rec.path);
		} else if (kt->present) {
			tunnel_send_delete(kt);
			deleted++;
		} else {
			usl_list_del(&kt->confirm);
			usl_hash_remove(&kdp.tunnels, &kt->by_id);
			free(kt);
		}
	}
	return deleted;
}

int stale_cleanup(char *err, size_t errlen)
{
	unsigned n, kept = 0;
	int rc;

	stale_add_kept();
	if ((rc = tunnels_look(K_STALE, "recorded", err, errlen)) < 0)
		return rc;
	n = stale_delete(&kept);
	if (nl_sync(SYNC_MS) < 0)
		log_warnx("kernel: tunnels left by a previous run: deletes unanswered");
	if (n > 0)
		log_info("kernel: deleted %u L2TP tunnels left by a previous run (%s)", n,
			 kdp.rec.path);
	if (kept > 0)
		log_info("kernel: kept %u L2TP tunnels handed over by the previous process", kept);
	if (rec_rewrite() < 0) {
		snprintf(err, errlen, "state file %s: %s", kdp.rec.path, kdp.rec.why);
		return DP_ERR_STATE;
	}
	return 0;
}
