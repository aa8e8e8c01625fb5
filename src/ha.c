/*
 * src/ha.c - an active/standby LNS pair (doc/failover.md, "A keepalived
 * pair").
 *
 * The boxes share a service address that keepalived (VRRP) moves; this
 * module moves the rest.  The active box sends every failover record it
 * writes (failover.c: the identities of its failover tunnels and sessions,
 * not their sequence numbers) to its peer box (`ha_peer`); the standby
 * takes it (`ha_listen`) into state_dir/failover.peer.state.  When
 * keepalived makes the standby the master, its notify script runs
 * `l2tpv3ctl failover takeover`: the standby restores those tunnels on the
 * service address it now holds and recovers each with its LAC through RFC
 * 4951, as after a crash of its own.
 *
 * One TCP connection per record, authenticated whole:
 *   "l2tpha" 0x00 0x01 | u64 generation | u64 length | record |
 *   HMAC-SHA256(ha_secret, all before)
 * (little-endian).  The receiver reads at most HA_MAX_RECORD, for at most
 * HA_DEADLINE_MS, one connection at a time, and keeps a record only when
 * its MAC verifies and its generation is newer than the last it kept (a
 * replayed old record changes nothing).  A record is written to disk only
 * whole (rename).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "l2tpv3d.h"
#include "usl/log.h"

#define HA_MAGIC	"l2tpha\x00\x01"
#define HA_HDR_LEN	24
#define HA_MAC_LEN	32
#define HA_MAX_RECORD	(256u << 20)
#define HA_DEADLINE_MS	30000
#define HA_FILE		"failover.peer.state"

struct ha_xfer {
	int fd;
	struct usl_fd *ev;
	uint8_t *buf;
	size_t len, done, cap;
	struct usl_timer deadline;
};

static struct {
	bool on;
	/* sending */
	union saddr peer;
	socklen_t peer_len;
	struct ha_xfer out;
	uint8_t *next;			/* the newest record not sent yet */
	size_t next_len;
	uint64_t generation;
	uint64_t sent, send_failed;
	/* receiving */
	int lfd;
	struct usl_fd *lev;
	struct ha_xfer in;
	uint64_t kept_generation;
	uint64_t received, rejected;
	uint32_t record_tunnels;		/* in the record kept */
	time_t received_at;
	char path[PATH_MAX];
	char last_error[160];
} ha = { .out.fd = -1, .in.fd = -1, .lfd = -1 };

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void mac(const uint8_t *p, size_t len, uint8_t out[HA_MAC_LEN])
{
	const char *k = l2tpd.conf->ha_secret;
	unsigned n = HA_MAC_LEN;

	HMAC(EVP_sha256(), k, (int)strlen(k), p, len, out, &n);
}

static void xfer_end(struct ha_xfer *x)
{
	usl_timer_cancel(&x->deadline);
	if (x->ev != NULL)
		usl_fd_del(x->ev);
	x->ev = NULL;
	if (x->fd >= 0)
		close(x->fd);
	x->fd = -1;
	free(x->buf);
	x->buf = NULL;
	x->len = x->done = x->cap = 0;
}

/* ---- the active box: sending --------------------------------------------- */

static void send_next(void);

static void send_failed(const char *what)
{
	ha.send_failed++;
	snprintf(ha.last_error, sizeof(ha.last_error), "sending to %s: %s: %s",
		 l2tpd.conf->ha_peer, what, strerror(errno));
	log_warnx("ha: %s (the standby's record is older now)", ha.last_error);
	xfer_end(&ha.out);
}

static void on_writable(int fd, short what, void *arg)
{
	ssize_t n;
	int err = 0;
	socklen_t el = sizeof(err);

	(void)what;
	(void)arg;
	if (ha.out.done == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err != 0) {
		errno = err;
		send_failed("connect");
		send_next();
		return;
	}
	n = send(fd, ha.out.buf + ha.out.done, ha.out.len - ha.out.done, MSG_NOSIGNAL);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		send_failed("send");
		send_next();
		return;
	}
	ha.out.done += (size_t)n;
	if (ha.out.done < ha.out.len)
		return;
	ha.sent++;
	xfer_end(&ha.out);
	send_next();
}

static void out_expired(struct usl_timer *tm)
{
	(void)tm;
	errno = ETIMEDOUT;
	send_failed("deadline");
	send_next();
}

/* Starts sending the newest record waiting, if no send is under way. */
static void send_next(void)
{
	struct ha_xfer *x = &ha.out;

	if (x->fd >= 0 || ha.next == NULL)
		return;
	x->buf = ha.next;
	x->len = ha.next_len;
	ha.next = NULL;
	x->fd = socket(ha.peer.sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (x->fd < 0 || (connect(x->fd, &ha.peer.sa, ha.peer_len) < 0 && errno != EINPROGRESS)) {
		send_failed("connect");
		return;
	}
	x->ev = usl_fd_add(l2tpd.loop, x->fd, USL_WRITE, on_writable, NULL);
	if (x->ev == NULL) {
		send_failed("event");
		return;
	}
	usl_timer_arm(l2tpd.timers, &x->deadline, usl_time_ms(HA_DEADLINE_MS));
}

void ha_publish(const uint8_t *rec, size_t len)
{
	uint8_t *b;

	if (!ha.on || ha.peer_len == 0 || len > HA_MAX_RECORD)
		return;
	b = malloc(HA_HDR_LEN + len + HA_MAC_LEN);
	if (b == NULL)
		return;
	memcpy(b, HA_MAGIC, 8);
	/* wall-clock nanoseconds: newer after a restart of ours too */
	{
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ha.generation = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	put_le64(b + 8, ha.generation);
	put_le64(b + 16, len);
	memcpy(b + HA_HDR_LEN, rec, len);
	mac(b, HA_HDR_LEN + len, b + HA_HDR_LEN + len);
	free(ha.next);		/* only the newest matters */
	ha.next = b;
	ha.next_len = HA_HDR_LEN + len + HA_MAC_LEN;
	send_next();
}

/* ---- the standby box: receiving ------------------------------------------ */

static void reject(const char *why)
{
	ha.rejected++;
	snprintf(ha.last_error, sizeof(ha.last_error), "record refused: %s", why);
	log_warnx("ha: %s", ha.last_error);
}

/* A whole transfer: verified, then written (a partial file is never left). */
static void in_complete(void)
{
	struct ha_xfer *x = &ha.in;
	uint8_t m[HA_MAC_LEN];
	uint64_t gen, len;

	if (x->done < HA_HDR_LEN + HA_MAC_LEN || memcmp(x->buf, HA_MAGIC, 8) != 0)
		return reject("not a record");
	gen = get_le64(x->buf + 8);
	len = get_le64(x->buf + 16);
	if (len != x->done - HA_HDR_LEN - HA_MAC_LEN)
		return reject("length mismatch");
	mac(x->buf, HA_HDR_LEN + len, m);
	if (CRYPTO_memcmp(m, x->buf + HA_HDR_LEN + len, HA_MAC_LEN) != 0)
		return reject("bad MAC (not our peer, or another ha_secret)");
	if (gen <= ha.kept_generation)
		return reject("not newer than the record kept");
	if (file_write_whole(ha.path, x->buf + HA_HDR_LEN, len) < 0) {
		log_warn("ha: cannot keep the peer's record in %s", ha.path);
		return;
	}
	ha.kept_generation = gen;
	/* the failover record's tunnel count: "l2tpv3d" 0x02 | u32 version | u32 tunnels */
	ha.record_tunnels = len >= 16 ? (uint32_t)x->buf[HA_HDR_LEN + 12] |
			    (uint32_t)x->buf[HA_HDR_LEN + 13] << 8 |
			    (uint32_t)x->buf[HA_HDR_LEN + 14] << 16 |
			    (uint32_t)x->buf[HA_HDR_LEN + 15] << 24 : 0;
	ha.received++;
	ha.received_at = time(NULL);
}

static void on_readable(int fd, short what, void *arg)
{
	struct ha_xfer *x = &ha.in;
	ssize_t n;

	(void)what;
	(void)arg;
	for (;;) {
		if (x->done == x->cap) {
			size_t cap = x->cap ? x->cap * 2 : 65536;
			uint8_t *b;

			if (cap > HA_HDR_LEN + HA_MAX_RECORD + HA_MAC_LEN) {
				reject("too long");
				xfer_end(x);
				return;
			}
			b = realloc(x->buf, cap);
			if (b == NULL) {
				xfer_end(x);
				return;
			}
			x->buf = b;
			x->cap = cap;
		}
		n = recv(fd, x->buf + x->done, x->cap - x->done, 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0)
			break;
		x->done += (size_t)n;
	}
	if (n == 0)
		in_complete();
	xfer_end(x);
}

static void in_expired(struct usl_timer *tm)
{
	(void)tm;
	reject("not complete within the deadline");
	xfer_end(&ha.in);
}

static void on_accept(int lfd, short what, void *arg)
{
	int fd;

	(void)what;
	(void)arg;
	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	if (ha.in.fd >= 0) {	/* one at a time: the sender sends again later */
		close(fd);
		return;
	}
	ha.in.fd = fd;
	ha.in.ev = usl_fd_add(l2tpd.loop, fd, USL_READ, on_readable, NULL);
	if (ha.in.ev == NULL) {
		xfer_end(&ha.in);
		return;
	}
	usl_timer_arm(l2tpd.timers, &ha.in.deadline, usl_time_ms(HA_DEADLINE_MS));
}

int ha_init(char *err, size_t errlen)
{
	const struct l2tpd_config *c = l2tpd.conf;
	union saddr sa;
	socklen_t salen;
	int one = 1;

	usl_timer_init(&ha.out.deadline, out_expired);
	usl_timer_init(&ha.in.deadline, in_expired);
	if (!c->ha_listen[0] && !c->ha_peer[0])
		return 0;
	snprintf(ha.path, sizeof(ha.path), "%s/%s", c->state_dir, HA_FILE);
	if (c->ha_peer[0] && sockaddr_parse_host_port(c->ha_peer, &ha.peer, &ha.peer_len) < 0) {
		snprintf(err, errlen, "ha_peer '%s': not ADDRESS:PORT", c->ha_peer);
		return -1;
	}
	if (c->ha_listen[0]) {
		if (sockaddr_parse_host_port(c->ha_listen, &sa, &salen) < 0) {
			snprintf(err, errlen, "ha_listen '%s': not ADDRESS:PORT", c->ha_listen);
			return -1;
		}
		ha.lfd = socket(sa.sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		setsockopt(ha.lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		/* the service address may be the peer's now: bind what is ours, or will be */
		setsockopt(ha.lfd, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one));
		if (ha.lfd < 0 || bind(ha.lfd, &sa.sa, salen) < 0 || listen(ha.lfd, 4) < 0 ||
		    (ha.lev = usl_fd_add(l2tpd.loop, ha.lfd, USL_READ, on_accept, NULL)) == NULL) {
			snprintf(err, errlen, "ha_listen %s: %s", c->ha_listen, strerror(errno));
			if (ha.lfd >= 0)
				close(ha.lfd);
			ha.lfd = -1;
			return -1;
		}
	}
	ha.on = true;
	return 0;
}

void ha_shutdown(void)
{
	xfer_end(&ha.out);
	xfer_end(&ha.in);
	free(ha.next);
	ha.next = NULL;
	if (ha.lev != NULL)
		usl_fd_del(ha.lev);
	ha.lev = NULL;
	if (ha.lfd >= 0)
		close(ha.lfd);
	ha.lfd = -1;
	ha.on = false;
}

const char *ha_peer_record_path(void)
{
	return ha.on && l2tpd.conf->ha_listen[0] ? ha.path : NULL;
}

json_object *ha_json(void)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "enabled", json_object_new_boolean(ha.on));
	if (!ha.on)
		return o;
	json_add_str(o, "peer", l2tpd.conf->ha_peer);
	json_add_str(o, "listen", l2tpd.conf->ha_listen);
	json_add_int(o, "records_sent", (int64_t)ha.sent);
	json_add_int(o, "records_send_failed", (int64_t)ha.send_failed);
	json_add_int(o, "records_received", (int64_t)ha.received);
	json_add_int(o, "records_refused", (int64_t)ha.rejected);
	json_add_int(o, "record_received_at", (int64_t)ha.received_at);
	json_add_int(o, "record_tunnels", ha.record_tunnels);
	if (ha.last_error[0])
		json_add_str(o, "last_error", ha.last_error);
	return o;
}
