/*
 * src/failover.c - RFC 4951 recovery after a crash.
 *
 * A planned restart hands everything over (handover.c); a crash hands over
 * nothing, and the peers hold connections whose sequence numbers died with
 * us.  For the tunnels that negotiated failover, this module keeps a
 * snapshot of what a new process needs to take them back: the same records
 * a restart hands over (tunnel_save: identities, addresses and ports,
 * sessions, nonces), in state_dir/failover.state, rewritten at most every
 * FO_WRITE_MS while tunnels or sessions come and go.  At the next start,
 * when nothing was handed over, each recorded tunnel is restored with its
 * old socket address, made again in the data plane, marked "resync" (it
 * sends nothing, drops what it receives) and recovered through a recovery
 * connection (tunnel_recover): the peer suggests new sequence numbers,
 * both sides reset, and FSQ/FSR clear the sessions one side lost.  What
 * cannot be recovered is cleared silently, as RFC 4951 asks.
 *
 * File format, little-endian (usl/pack.h):
 *   "l2tpv3d" 0x02 | u32 version | u32 tunnels | per tunnel: blob record |
 *   u32 CRC-32 of all before it
 * A file of another version or with a bad checksum is ignored (and said).
 * A clean stop removes it: the peers were told (StopCCN).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "event.h"
#include "l2tpv3d.h"
#include "usl/log.h"
#include "usl/pack.h"

#define FO_MAGIC	"l2tpv3d\x02"
#define FO_VERSION	1
#define FO_FILE		"failover.state"
#define FO_WRITE_MS	1000
/* how long a restored tunnel waits for its recovery, beyond its setup deadline */
#define FO_RESYNC_SLACK_MS	30000
/*
 * Recovery connections under way at once: each is a socket beside the
 * restored tunnel's, and 10,000 of each at once outrun the descriptors (and
 * the peer's listener queue); the next starts as one ends.
 */
#define FO_RECOVER_WINDOW	512

static struct {
	char path[PATH_MAX];
	bool dirty, enabled, warned;
	struct usl_timer timer;
	unsigned last_tunnels;		/* in the file now */
	unsigned restored, restore_failed;
	/* restored tunnels waiting for their recovery connection, and those under way */
	uint32_t *queue;
	size_t queued, next;
	unsigned running;
} fo;

static bool tunnel_wants_snapshot(const struct tunnel *t)
{
	return t->cc != NULL && t->recovery_of == 0 && l2tp_cc_failover_ok(t->cc) &&
	       tunnel_can_handover(t);
}

/* The snapshot now: every failover-capable tunnel that could be handed over. */
static void snapshot_write(void)
{
	struct usl_pack w;
	struct usl_rb_node *node;
	size_t count_at, off;
	uint32_t n = 0;

	fo.dirty = false;
	usl_pack_init(&w);
	usl_pack_bytes(&w, FO_MAGIC, 8);
	usl_pack_u32(&w, FO_VERSION);
	count_at = usl_pack_reserve(&w, 4);
	for (node = usl_rb_first(&l2tpd.tunnel_order); node != NULL; node = usl_rb_next(node)) {
		struct tunnel *t = usl_rb_entry(node, struct tunnel, by_order);

		if (!tunnel_wants_snapshot(t))
			continue;
		off = usl_pack_reserve(&w, 4);
		tunnel_save(t, &w);
		usl_pack_patch_u32(&w, off, (uint32_t)(w.len - off - 4));
		n++;
	}
	usl_pack_patch_u32(&w, count_at, n);
	usl_pack_u32(&w, w.failed ? 0 : (uint32_t)crc32(0L, w.p, (uInt)w.len));
	if (n == 0 && fo.last_tunnels == 0) {
		usl_pack_free(&w);
		return;
	}
	if (!w.failed)
		ha_publish(w.p, w.len);	/* the standby of a pair keeps it too */
	if (w.failed || (n == 0 ? unlink(fo.path) < 0 && errno != ENOENT : file_write_whole(fo.path, w.p, w.len) < 0)) {
		if (!fo.warned)
			log_warn("failover: cannot write %s (a crash would lose %u tunnels)",
				 fo.path, n);
		fo.warned = true;
	} else {
		fo.warned = false;
		fo.last_tunnels = n;
	}
	usl_pack_free(&w);
}

static void on_timer(struct usl_timer *tm)
{
	(void)tm;
	if (fo.dirty)
		snapshot_write();
}

static void recovery_ended(void);

static void on_event(const struct l2tpd_event *ev, void *arg)
{
	(void)arg;
	if (ev->kind == EV_RECOVERY_ENDED) {
		recovery_ended();
		return;
	}
	if (!event_is_up_down(ev->kind) || ev->t == NULL || !ev->t->prof->failover)
		return;
	fo.dirty = true;
	if (!usl_timer_armed(&fo.timer))
		usl_timer_arm(l2tpd.timers, &fo.timer, usl_time_ms(FO_WRITE_MS));
}

int failover_init(void)
{
	const char *dir = l2tpd.conf->state_dir;

	usl_timer_init(&fo.timer, on_timer);
	if (snprintf(fo.path, sizeof(fo.path), "%s/%s", dir, FO_FILE) >= (int)sizeof(fo.path))
		return -1;
	if (mkdir(dir, 0750) < 0 && errno != EEXIST)
		log_warn("failover: state_dir %s", dir);
	fo.enabled = true;
	return event_subscribe(on_event, NULL);
}

/*
 * One recorded tunnel: restored on its old address and port, marked
 * resync.  Its recovery starts once all are restored: a recovery
 * connection's ephemeral port must not take one a restored tunnel needs.
 */
static struct tunnel *restore_one(const uint8_t *rec, size_t len)
{
	struct usl_unpack r;
	struct tunnel *t;
	unsigned ns;
	char err[256];
	usl_time deadline;

	usl_unpack_init(&r, rec, len);
	t = tunnel_restore(&r, -1, true, &ns, err, sizeof(err));
	if (t == NULL) {
		log_warnx("failover: a tunnel was not restored: %s", err);
		fo.restore_failed++;
		return NULL;
	}
	deadline = usl_time_add(usl_time_ms(t->prof->setup_timeout_ms ? t->prof->setup_timeout_ms
								      : 60000),
				usl_time_ms(FO_RESYNC_SLACK_MS));
	l2tp_cc_set_resync(t->cc, deadline);
	log_info("tunnel %u (peer %s, %u sessions): restored after a crash", t->id,
		 sockaddr_ntop(&t->remote.sa), ns);
	return t;
}

static void recover_one(uint32_t id)
{
	struct tunnel *t = tunnel_find(id);
	char err[256];

	if (t == NULL || t->cc == NULL || l2tp_cc_failover_state(t->cc) != L2TP_FO_RESYNC)
		return;
	if (tunnel_recover(t, err, sizeof(err)) == NULL) {
		log_warnx("tunnel %u: recovery not started (%s): cleared silently", t->id, err);
		l2tp_cc_discard(t->cc, L2TP_STOPCCN_GENERAL_ERROR, "recovery not started");
		fo.restore_failed++;
		return;
	}
	fo.restored++;
}

/* Starts recovery connections while fewer than FO_RECOVER_WINDOW run. */
static void recover_more(void)
{
	while (fo.running < FO_RECOVER_WINDOW && fo.next < fo.queued) {
		unsigned before = fo.restored;

		recover_one(fo.queue[fo.next++]);
		fo.running += fo.restored != before;
	}
	if (fo.next == fo.queued) {
		free(fo.queue);
		fo.queue = NULL;
		fo.queued = fo.next = 0;
	}
}

/* ids (ours now) join the queue of tunnels waiting for their recovery. */
static void queue_recoveries(uint32_t *ids, uint32_t n)
{
	uint32_t *q;

	if (ids == NULL || n == 0) {
		free(ids);
		return;
	}
	q = realloc(fo.queue, (fo.queued + n) * sizeof(*q));
	if (q == NULL) {	/* no room to wait: all at once, as many as the descriptors allow */
		for (uint32_t i = 0; i < n; i++)
			recover_one(ids[i]);
		free(ids);
		return;
	}
	memcpy(q + fo.queued, ids, n * sizeof(*ids));
	fo.queue = q;
	fo.queued += n;
	free(ids);
	recover_more();
}

static void recovery_ended(void)
{
	if (fo.running > 0)
		fo.running--;
	recover_more();
}

static int read_file(const char *path, uint8_t **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -1;
	rc = fd_read_whole(fd, 20, SIZE_MAX, out, len);
	close(fd);
	return rc;
}

/*
 * Every tunnel recorded in path, restored and recovered; -1 when the file
 * cannot be read or is not a record this version reads (said in err).
 */
static int recover_from(const char *path, char *err, size_t errlen)
{
	struct usl_unpack r;
	uint8_t *buf = NULL;
	size_t len = 0, blen;
	uint32_t n, got = 0, *ids;
	unsigned before = fo.restored;

	if (read_file(path, &buf, &len) < 0) {
		snprintf(err, errlen, "%s: %s", path, errno ? strerror(errno) : "too short");
		return -1;
	}
	usl_unpack_init(&r, buf + len - 4, 4);
	if (memcmp(buf, FO_MAGIC, 8) != 0 ||
	    (uint32_t)crc32(0L, buf, (uInt)(len - 4)) != usl_unpack_u32(&r)) {
		snprintf(err, errlen, "%s is not a record this version reads (or is damaged)", path);
		free(buf);
		return -1;
	}
	usl_unpack_init(&r, buf + 8, len - 12);
	if (usl_unpack_u32(&r) != FO_VERSION) {
		snprintf(err, errlen, "%s is of another version", path);
		free(buf);
		return -1;
	}
	n = usl_unpack_u32(&r);
	log_info("failover: %u tunnels recorded in %s: recovering them", n, path);
	ids = calloc(n ? n : 1, sizeof(*ids));
	for (uint32_t i = 0; ids != NULL && i < n && !r.bad; i++) {
		const uint8_t *rec = usl_unpack_blob(&r, &blen);
		struct tunnel *t = rec != NULL && !r.bad ? restore_one(rec, blen) : NULL;

		if (t != NULL)
			ids[got++] = t->id;
	}
	if (r.bad)
		log_warnx("failover: %s is malformed past %u tunnels", fo.path, got);
	queue_recoveries(ids, got);
	free(buf);
	/* what we hold now: our own record says so from now on */
	fo.dirty = true;
	usl_timer_arm(l2tpd.timers, &fo.timer, usl_time_ms(FO_WRITE_MS));
	return (int)(fo.restored - before);
}

void failover_recover(bool handed_over)
{
	char err[PATH_MAX + 64];

	if (!fo.enabled)
		return;
	if (handed_over) {
		/* what was handed over is what we hold: the file says so from now on */
		fo.dirty = true;
		usl_timer_arm(l2tpd.timers, &fo.timer, usl_time_ms(FO_WRITE_MS));
		return;
	}
	if (access(fo.path, F_OK) == 0 && recover_from(fo.path, err, sizeof(err)) < 0)
		log_warnx("failover: %s: nothing to recover", err);
	else
		fo.last_tunnels = fo.restored + fo.restore_failed;
}

int failover_takeover(json_object **out, char *err, size_t errlen)
{
	const char *path = ha_peer_record_path();
	unsigned failed = fo.restore_failed;
	int n;

	if (path == NULL) {
		snprintf(err, errlen, "no active/standby pair configured (ha_listen)");
		return -1;
	}
	/* no record yet (the peer box never had a failover tunnel): nothing to take */
	n = access(path, F_OK) < 0 && errno == ENOENT ? 0 : recover_from(path, err, errlen);
	if (n < 0)
		return -1;
	log_info("failover: takeover: %d tunnels of the peer box restored, recovering", n);
	*out = json_object_new_object();
	json_add_int(*out, "tunnels_restored", n);
	json_add_int(*out, "tunnels_not_restored", (int64_t)(fo.restore_failed - failed));
	return 0;
}

void failover_stop(bool restarting)
{
	if (!fo.enabled)
		return;
	usl_timer_cancel(&fo.timer);
	event_unsubscribe(on_event, NULL);
	free(fo.queue);
	fo.queue = NULL;
	fo.queued = fo.next = 0;
	/* a clean stop told the peers: there is nothing to recover */
	if (!restarting && unlink(fo.path) < 0 && errno != ENOENT)
		log_warn("failover: %s", fo.path);
	fo.enabled = false;
}

json_object *failover_json(void)
{
	json_object *o = json_object_new_object();

	json_add_str(o, "file", fo.path);
	json_add_int(o, "recorded_tunnels", fo.last_tunnels);
	json_object_object_add(o, "write_pending", json_object_new_boolean(fo.dirty));
	json_add_int(o, "restored_after_crash", fo.restored);
	json_add_int(o, "not_restored", fo.restore_failed);
	return o;
}
