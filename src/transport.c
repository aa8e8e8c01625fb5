/*
 * src/transport.c - control message sockets: UDP (port 1701) and L2TP over
 * IP (protocol 115), IPv4 and IPv6.
 *
 * One listening socket per configured local address takes new SCCRQs.
 * Every tunnel then gets its own socket, bound to the local address and
 * connected to the peer: that is the socket the kernel data plane takes
 * over (L2TP_ATTR_FD), and it keeps per-tunnel demultiplexing in the
 * kernel's socket hash instead of in our code.
 *
 * A tunnel we initiate from an ephemeral port stays unconnected until the
 * first reply: peers may answer from another port than 1701 (RFC 3931
 * 4.1.2.2) and we follow it.  Reads are batched with recvmmsg().
 *
 * Without the kernel's l2tp_ip/l2tp_ip6 (hosts without L2TP), the null data
 * plane still speaks L2TP over IP: control messages then travel on one raw
 * IP socket (protocol 115) per family and address.  The kernel adds the IP
 * header (and shows it on IPv4 input), we add and strip the zero Session
 * ID, and tunnels have no socket of their own: their messages are found by
 * CCID, like on the UDP listener, and sent from the raw socket.
 */
#include <netinet/in.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/l2tp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dp.h"
#include "l2tpv3d.h"
#include "usl/buf.h"
#include "usl/log.h"

#ifndef IPPROTO_L2TP
#define IPPROTO_L2TP	115	/* glibc does not name it */
#endif

#define RX_BATCH	16
/*
 * One byte more than any control message (a longer datagram shows as too
 * long), after an IPv4 header and the zero Session ID on a raw socket.
 */
#define RAW_OVERHEAD	(60 + 4)
#define RX_BUFSZ	(L2TP_MAX_MSG + 1 + RAW_OVERHEAD)

struct listener {
	int fd;
	struct usl_fd *ev;
	enum l2tp_encap encap;
	int family;
	bool raw;		/* L2TP/IP over a raw socket (no l2tp_ip) */
	bool replies_only;	/* opened for our own IP tunnels: no new SCCRQs */
	union saddr addr;	/* bound to (raw sockets: where replies come back) */
};

/*
 * Kernel memory one queued control datagram costs (skb truesize of a
 * message up to about 1 KB): a tunnel's receive buffer holds the whole
 * window we advertise, so a peer that fills it is not dropped by the
 * kernel; a listener's holds max_half_open SCCRQs, the burst of peers all
 * coming back at once after an outage.
 */
#define RCVBUF_PER_MSG	2304
#define LISTENER_RCVBUF_MAX	(16 << 20)

/*
 * Responder ports once the ephemeral ones ran out ("auto"): one address
 * has 28,000 to 64,000 of them.  Past that, a new responder socket shares
 * one of our own ports with other tunnels' sockets (SO_REUSEADDR, connected
 * at once: the kernel delivers by the exact addresses and ports).  The port
 * is drawn at random from the range, so the sockets spread evenly over it:
 * a kernel before 6.13 finds a datagram's socket by walking every socket
 * bound to its local port, and piling them all on the listener's 1701 made
 * each datagram and each bind cost O(tunnels).  One rule: no two sockets on
 * a port may be connected to the same peer address and port (ports.paths).
 */
#define EPHEMERAL_RETRY_MS	1000	/* exhausted: try for a port of its own again after this */
#define PORT_RANGE_FILE		"/proc/sys/net/ipv4/ip_local_port_range"	/* IPv6 too */

/*
 * Before the range runs out: the kernel's search for a free port scans
 * more of the range the fuller it is, and the last thousand binds of 64,512
 * took seconds (a 15 s dip in a 100,000-tunnel bring-up).  So a responder
 * shares once sockets of ours hold all but a sixteenth of the range on its
 * local address (struct addr_use), before the search gets long.  Other
 * sockets on the address only make the kernel's EADDRINUSE come sooner,
 * which switches as before.
 */
#define PORTS_RESERVE_DIV	16
#define PORT_RANGE_REREAD	1024	/* the range is read again each 1,024 ports taken */

struct addr_use {
	struct usl_hnode node;
	union saddr addr;		/* port 0 */
	unsigned own;			/* sockets of ours on an ephemeral port of their own */
};

static struct {
	struct usl_hash paths;		/* struct tunnel by_path: connected UDP tunnel sockets */
	struct usl_hash use;		/* struct addr_use by local address */
	usl_time exhausted_at;		/* the last failed bind for a port of its own, 0: none */
	unsigned lo, hi;		/* the namespace's ephemeral range, as last read */
} ports;

struct path_key {
	const struct sockaddr *local, *remote;
};

static uint32_t path_hash(const struct sockaddr *local, const struct sockaddr *remote)
{
	return usl_hash_u32(sockaddr_hash_addr(local) ^ (sockaddr_hash_addr(remote) * 0x9e3779b1u) ^
			    ((uint32_t)sockaddr_port(local) << 16 | sockaddr_port(remote)));
}

static bool path_eq(const struct usl_hnode *n, const void *key)
{
	const struct tunnel *t = usl_container_of(n, struct tunnel, by_path);
	const struct path_key *k = key;

	return sockaddr_eq_full(&t->local.sa, k->local) && sockaddr_eq_full(&t->remote.sa, k->remote);
}

static bool path_taken(const struct sockaddr *local, const struct sockaddr *remote)
{
	struct path_key k = { local, remote };

	return usl_hash_lookup(&ports.paths, &k, path_hash(local, remote)) != NULL;
}

struct tunnel *transport_path_holder(const struct sockaddr *local, const struct sockaddr *remote)
{
	struct path_key k = { local, remote };
	struct usl_hnode *n = usl_hash_lookup(&ports.paths, &k, path_hash(local, remote));

	return n ? usl_container_of(n, struct tunnel, by_path) : NULL;
}

static void path_index(struct tunnel *t)
{
	usl_hash_insert(&ports.paths, &t->by_path, path_hash(&t->local.sa, &t->remote.sa));
	t->path_indexed = true;
}

static void path_unindex(struct tunnel *t)
{
	if (t->path_indexed)
		usl_hash_remove(&ports.paths, &t->by_path);
	t->path_indexed = false;
}

static bool use_eq(const struct usl_hnode *n, const void *key)
{
	return sockaddr_eq_addr(&usl_container_of(n, struct addr_use, node)->addr.sa, key);
}

static struct addr_use *use_find(const struct sockaddr *local)
{
	struct usl_hnode *n = usl_hash_lookup(&ports.use, local, sockaddr_hash_addr(local));

	return n ? usl_container_of(n, struct addr_use, node) : NULL;
}

static void ports_read_range(void)
{
	FILE *f = fopen(PORT_RANGE_FILE, "re");

	if (f == NULL || fscanf(f, "%u %u", &ports.lo, &ports.hi) != 2 || ports.hi > 65535)
		ports.lo = 1, ports.hi = 0;	/* nothing to share */
	if (f != NULL)
		fclose(f);
}

static unsigned ports_range_size(void)
{
	return ports.lo <= ports.hi ? ports.hi - ports.lo + 1 : 0;
}

/*
 * t's socket took an ephemeral port of its own on its local address (kept
 * with the tunnel: a wildcard local address changes at connect).
 */
static void own_port_take(struct tunnel *t)
{
	struct addr_use *u;

	if (t->port_use != NULL)
		return;
	if ((u = use_find(&t->local.sa)) == NULL) {
		if ((u = calloc(1, sizeof(*u))) == NULL)
			return;		/* uncounted: the kernel's EADDRINUSE still switches */
		memcpy(&u->addr, &t->local, sizeof(u->addr));
		sockaddr_set_port(&u->addr.sa, 0);
		usl_hash_insert(&ports.use, &u->node, sockaddr_hash_addr(&u->addr.sa));
	}
	if (++u->own % PORT_RANGE_REREAD == 0)
		ports_read_range();
	t->port_use = u;
}

static void own_port_release(struct tunnel *t)
{
	struct addr_use *u = t->port_use;

	if (u == NULL)
		return;
	t->port_use = NULL;
	if (--u->own > 0)
		return;
	usl_hash_remove(&ports.use, &u->node);
	free(u);
}

/* Ours hold all but a sixteenth of the range on local: share, do not search. */
static bool ports_nearly_ours(const struct sockaddr *local, unsigned *own)
{
	const struct addr_use *u = use_find(local);
	unsigned n = ports_range_size(), reserve = n / PORTS_RESERVE_DIV;

	*own = u ? u->own : 0;
	return reserve > 0 && *own >= n - reserve;
}

static bool ports_exhausted(void)
{
	usl_time since = usl_time_sub(usl_timerset_now(l2tpd.timers), ports.exhausted_at);

	return ports.exhausted_at.ns != 0 && usl_time_cmp(since, usl_time_ms(EPHEMERAL_RETRY_MS)) < 0;
}

static void ports_mark_exhausted(void)
{
	ports.exhausted_at = usl_timerset_now(l2tpd.timers);
	ports_read_range();
}

/*
 * A port of ours for t, shared with tunnels to other peer endpoints: from a
 * random one on, the first that has no tunnel to t's peer address and port
 * and takes the bind (one held without SO_REUSEADDR is not ours to share).
 */
static int bind_shared_ephemeral(struct tunnel *t, int fd, struct sockaddr *a)
{
	unsigned n = ports_range_size();
	unsigned start = n ? random_u32_nonzero() % n : 0;
	int one = 1;

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	for (unsigned i = 0; i < n; i++) {
		sockaddr_set_port(a, (uint16_t)(ports.lo + (start + i) % n));
		if (path_taken(a, &t->remote.sa))
			continue;
		if (bind(fd, a, sockaddr_len(a)) == 0)
			return 0;
		if (errno != EADDRINUSE)
			return -1;
	}
	errno = EADDRINUSE;
	return -1;
}

/* ---- a tunnel profile's transport settings on a socket ------------------- */

/*
 * dscp, ttl, df and bind_device go on the socket itself: control messages
 * take them from it, and so do the kernel's data packets of a tunnel that
 * the data plane took over (l2tp_xmit_queue() sends through the tunnel's
 * socket; see doc/kernel-dataplane.md for which of them it honours).
 */

/* A new socket's settings: a profile with none of its own. */
static const struct tunnel_profile no_settings;

/* IP_MTU_DISCOVER of a new IPv4 socket in this namespace (what "system" restores). */
static int pmtudisc_system(void)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_no_pmtu_disc", "re");
	int v = 0;

	if (f != NULL) {
		if (fscanf(f, "%d", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v ? IP_PMTUDISC_DONT : IP_PMTUDISC_WANT;
}

static int set_int(int fd, int level, int name, int v)
{
	return setsockopt(fd, level, name, &v, sizeof(v));
}

static int apply_df(int fd, int family, enum cfg_df df)
{
	if (family == AF_INET6) {
		/* no DF bit in IPv6: "on" keeps the host from fragmenting */
		int pmtu = df == CFG_DF_ON ? IPV6_PMTUDISC_DO :
			   df == CFG_DF_OFF ? IPV6_PMTUDISC_DONT : IPV6_PMTUDISC_WANT;

		if (set_int(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, pmtu) < 0)
			return -1;
		return set_int(fd, IPPROTO_IPV6, IPV6_DONTFRAG, df == CFG_DF_ON);
	}
	return set_int(fd, IPPROTO_IP, IP_MTU_DISCOVER,
		       df == CFG_DF_ON ? IP_PMTUDISC_DO : df == CFG_DF_OFF ? IP_PMTUDISC_DONT :
		       df == CFG_DF_PMTU ? IP_PMTUDISC_WANT : pmtudisc_system());
}

/*
 * Sets p's dscp, ttl and df on fd where they differ from was's (was NULL:
 * all three, whatever the socket has), and its bind_device when
 * with_device.  -1 with err naming the setting that failed.
 */
static int sock_settings_apply(int fd, int family, const struct tunnel_profile *p,
			       const struct tunnel_profile *was, bool with_device,
			       char *err, size_t errlen)
{
	bool v6 = family == AF_INET6;
	int e;

	if (with_device && p->bind_device[0] != '\0' &&
	    setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, p->bind_device,
		       (socklen_t)strlen(p->bind_device)) < 0) {
		e = errno;
		snprintf(err, errlen, "bind_device \"%s\": %s%s", p->bind_device, strerror(e),
			 e == ENODEV ? " (no interface of that name in this network namespace)" :
			 e == EPERM ? " (needs CAP_NET_RAW)" : "");
		return -1;
	}
	if ((was == NULL || was->dscp != p->dscp) &&
	    set_int(fd, v6 ? IPPROTO_IPV6 : IPPROTO_IP, v6 ? IPV6_TCLASS : IP_TOS, p->dscp << 2) < 0) {
		snprintf(err, errlen, "dscp %u: %s", p->dscp, strerror(errno));
		return -1;
	}
	/* -1: the system's (net.ipv4.ip_default_ttl, the route's hop limit) */
	if ((was == NULL || was->ttl != p->ttl) &&
	    set_int(fd, v6 ? IPPROTO_IPV6 : IPPROTO_IP, v6 ? IPV6_UNICAST_HOPS : IP_TTL,
		    p->ttl ? p->ttl : -1) < 0) {
		snprintf(err, errlen, "ttl %u: %s", p->ttl, strerror(errno));
		return -1;
	}
	if ((was == NULL || was->df != p->df) && apply_df(fd, family, p->df) < 0) {
		snprintf(err, errlen, "df \"%s\": %s", config_df_name(p->df), strerror(errno));
		return -1;
	}
	return 0;
}

/* The profile whose dscp, ttl and df the listeners send with: the one for unknown peers. */
static const struct tunnel_profile *listener_profile(const struct l2tpd_config *c)
{
	return c != NULL ? config_tunnel_profile(c, c->peer_default.tunnel_profile) : NULL;
}

int transport_tunnel_reapply(struct tunnel *t, const struct tunnel_profile *p,
			     char *err, size_t errlen)
{
	if (t->fd < 0)
		return 0;	/* no socket of its own: the listener's settings */
	return sock_settings_apply(t->fd, t->remote.sa.sa_family, p, t->prof, false, err, errlen);
}

/* IP_MTU_DISCOVER and IPV6_MTU_DISCOVER share their values */
static const char *df_mode_name(int mode)
{
	switch (mode) {
	case IP_PMTUDISC_DO:
		return "on";
	case IP_PMTUDISC_DONT:
		return "off";
	case IP_PMTUDISC_WANT:
		return "pmtu";
	case IP_PMTUDISC_PROBE:
		return "probe";
	case IP_PMTUDISC_INTERFACE:
		return "interface";
	case IP_PMTUDISC_OMIT:
		return "omit";
	}
	return "unknown";
}

/* the configured ones, and a raw socket per family for IP tunnels we open */
/* twice: a reload opens the new ones beside the old before closing these */
static struct listener listeners[2 * (2 * CFG_MAX_LISTEN + 2)];
static bool ip_raw;		/* L2TP/IP control over raw sockets */
static unsigned n_listeners;

/* Receive buffers shared by every socket: one loop, one reader at a time. */
static uint8_t rx_buf[RX_BATCH][RX_BUFSZ];
static struct sockaddr_storage rx_from[RX_BATCH];
static uint8_t rx_cmsg[RX_BATCH][CMSG_SPACE(sizeof(struct in6_pktinfo))];
static struct mmsghdr rx_msgs[RX_BATCH];
static struct iovec rx_iov[RX_BATCH];
static const struct transport_rx *rx_to;	/* where they go (tunnel.c) */

static void rx_prepare(bool with_cmsg)
{
	for (int i = 0; i < RX_BATCH; i++) {
		rx_iov[i].iov_base = rx_buf[i];
		rx_iov[i].iov_len = RX_BUFSZ;
		memset(&rx_msgs[i].msg_hdr, 0, sizeof(rx_msgs[i].msg_hdr));
		rx_msgs[i].msg_hdr.msg_iov = &rx_iov[i];
		rx_msgs[i].msg_hdr.msg_iovlen = 1;
		rx_msgs[i].msg_hdr.msg_name = &rx_from[i];
		rx_msgs[i].msg_hdr.msg_namelen = sizeof(rx_from[i]);
		if (with_cmsg) {
			rx_msgs[i].msg_hdr.msg_control = rx_cmsg[i];
			rx_msgs[i].msg_hdr.msg_controllen = sizeof(rx_cmsg[i]);
		}
	}
}

/* The local address a datagram was sent to (wildcard listeners). */
static void rx_dest(struct msghdr *mh, int family, uint16_t port, struct sockaddr_storage *to)
{
	struct cmsghdr *c;

	memset(to, 0, sizeof(*to));
	to->ss_family = (sa_family_t)family;
	for (c = CMSG_FIRSTHDR(mh); c != NULL; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;
			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			((struct sockaddr_in *)to)->sin_addr = pi.ipi_addr;
		} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;
			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			((struct sockaddr_in6 *)to)->sin6_addr = pi.ipi6_addr;
		}
	}
	sockaddr_set_port((struct sockaddr *)to, port);
}

/*
 * A datagram that filled the buffer was longer than any control message
 * (and was truncated): it is counted and dropped, never parsed cut short.
 */
static bool rx_too_long(int i, size_t len)
{
	if (len <= L2TP_MAX_MSG && !(rx_msgs[i].msg_hdr.msg_flags & MSG_TRUNC))
		return false;
	l2tpd.stats.drops[L2TP_DROP_TOO_LONG]++;
	log_debug("dropped a datagram from %s: longer than %u octets",
		  sockaddr_ntop((struct sockaddr *)&rx_from[i]), (unsigned)L2TP_MAX_MSG);
	return true;
}

/*
 * A datagram from a raw IP socket: past the IPv4 header (IPv6 raw sockets
 * give none) and the Session ID, which is zero on control messages (data
 * messages, nonzero, are not ours to take: the null data plane drops them).
 */
static bool raw_strip(const struct listener *l, const uint8_t **p, size_t *len)
{
	size_t hl = 0;

	if (l->family == AF_INET) {
		if (*len < 20 || (hl = (size_t)((*p)[0] & 0x0f) * 4) < 20 || hl > *len)
			goto short_hdr;
	}
	if (*len - hl < 4)
		goto short_hdr;
	if (usl_get_be32(*p + hl) != 0) {
		l2tpd.stats.drops[L2TP_DROP_NOT_CONTROL]++;
		return false;
	}
	*p += hl + 4;
	*len -= hl + 4;
	return true;
short_hdr:
	l2tpd.stats.drops[L2TP_DROP_SHORT_HEADER]++;
	return false;
}

static bool rx_ccid_zero(const uint8_t *buf, size_t len);

static void listener_read(int fd, short what, void *arg)
{
	struct listener *l = arg;
	struct sockaddr_storage to;
	struct l2tp_rx rx;
	int n;

	(void)what;
	rx_prepare(true);
	n = recvmmsg(fd, rx_msgs, RX_BATCH, MSG_DONTWAIT, NULL);
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			log_warn("listener recvmmsg");
		return;
	}
	for (int i = 0; i < n; i++) {
		const uint8_t *p = rx_buf[i];
		size_t len = rx_msgs[i].msg_len;

		l2tpd.stats.rx_datagrams++;
		if (l->raw && !raw_strip(l, &p, &len))
			continue;
		if (rx_too_long(i, len))
			continue;
		rx_dest(&rx_msgs[i].msg_hdr, l->family, l->encap == L2TP_ENCAP_IP ? 0 :
			l2tpd.conf->udp_port, &to);
		rx = (struct l2tp_rx){ fd, p, len, (struct sockaddr *)&rx_from[i],
				       (struct sockaddr *)&to, l->encap };
		if (l->replies_only && rx_ccid_zero(p, len)) {
			l2tpd.stats.drops[L2TP_DROP_ZERO_CCID]++;
			continue;
		}
		rx_to->listener(&rx);
	}
}

static int set_nonblock_cloexec(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -1;
	return fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* An L2TP/IP socket's address: the CCID it takes control messages for. */
static socklen_t l2tpip_addr(const struct sockaddr *sa, uint32_t ccid,
			     struct sockaddr_storage *out)
{
	memset(out, 0, sizeof(*out));
	if (sa->sa_family == AF_INET6) {
		struct sockaddr_l2tpip6 *a = (void *)out;
		a->l2tp_family = AF_INET6;
		a->l2tp_addr = ((const struct sockaddr_in6 *)sa)->sin6_addr;
		a->l2tp_scope_id = ((const struct sockaddr_in6 *)sa)->sin6_scope_id;
		a->l2tp_conn_id = ccid;
		return sizeof(*a);
	}
	struct sockaddr_l2tpip *a = (void *)out;
	a->l2tp_family = AF_INET;
	a->l2tp_addr = ((const struct sockaddr_in *)sa)->sin_addr;
	a->l2tp_conn_id = ccid;
	return sizeof(*a);
}

static bool sockaddr_is_any(const struct sockaddr *sa)
{
	static const struct in6_addr any6 = IN6ADDR_ANY_INIT;

	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
	if (sa->sa_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr, &any6, sizeof(any6)) == 0;
	return true;
}

/* The errors socket() gives for IPPROTO_L2TP when l2tp_ip is not loaded. */
static bool no_l2tp_ip(int e)
{
	return e == EPROTONOSUPPORT || e == ESOCKTNOSUPPORT || e == EAFNOSUPPORT;
}

static const char *l2tp_ip_hint(int family)
{
	return family == AF_INET6 ?
		" (the kernel module l2tp_ip6 is not loaded: modprobe l2tp_ip6, or run with "
		"--dataplane null, which carries the control channel over a raw IP socket)" :
		" (the kernel module l2tp_ip is not loaded: modprobe l2tp_ip, or run with "
		"--dataplane null, which carries the control channel over a raw IP socket)";
}

/* l2tp_ip usable here?  Without it the null data plane goes raw. */
static void ip_mode_choose(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_L2TP);

	ip_raw = false;
	if (fd >= 0) {
		close(fd);
		return;
	}
	if (no_l2tp_ip(errno) && l2tpd.dp != NULL && strcmp(l2tpd.dp->name, "null") == 0)
		ip_raw = true;
}

static int open_listener(const struct cfg_addr *ca, enum l2tp_encap encap, uint16_t port,
			 int rcvbuf, const struct tunnel_profile *tp, char *err, size_t errlen);

/*
 * The raw socket an IP tunnel from local speaks through: one bound to that
 * address, else (local unspecified) any of the family; else a new one bound
 * to local, for replies only.  Raw sockets bound to an address receive only
 * what is sent to it, so replies come back where we send from.
 */
static const struct listener *raw_for(const struct sockaddr *local, int family,
				      char *err, size_t errlen)
{
	bool any = local->sa_family == AF_UNSPEC || sockaddr_is_any(local);
	struct cfg_addr ca;

	for (unsigned i = 0; i < n_listeners; i++) {
		const struct listener *l = &listeners[i];

		if (l->raw && l->family == family &&
		    (any || sockaddr_eq_addr(&l->addr.sa, local)))
			return l;
	}
	if (n_listeners >= sizeof(listeners) / sizeof(listeners[0])) {
		snprintf(err, errlen, "no room for another raw IP socket");
		return NULL;
	}
	memset(&ca, 0, sizeof(ca));
	if (any)
		ca.ss.ss_family = (sa_family_t)family;
	else
		memcpy(&ca.ss, local, sockaddr_len(local));
	if (open_listener(&ca, L2TP_ENCAP_IP, 0, RCVBUF_PER_MSG * 64, listener_profile(l2tpd.conf),
			  err, errlen) < 0)
		return NULL;
	listeners[n_listeners - 1].replies_only = true;
	return &listeners[n_listeners - 1];
}

static void set_rcvbuf(int fd, int want)
{
	/* FORCE passes net.core.rmem_max (CAP_NET_ADMIN, which the daemon has) */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof(want)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof(want));
}

static void size_rcvbuf(int fd, int want)
{
	int have = 0;
	socklen_t len = sizeof(have);

	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &have, &len) == 0 && have / 2 >= want)
		return;		/* the kernel reports twice what was set */
	set_rcvbuf(fd, want);
}

static int listener_rcvbuf(const struct l2tpd_config *c)
{
	uint64_t want = (uint64_t)c->max_half_open * RCVBUF_PER_MSG;

	return want > LISTENER_RCVBUF_MAX ? LISTENER_RCVBUF_MAX : (int)want;
}

static int open_listener(const struct cfg_addr *ca, enum l2tp_encap encap, uint16_t port,
			 int rcvbuf, const struct tunnel_profile *tp, char *err, size_t errlen)
{
	char why[160];
	struct listener *l = &listeners[n_listeners];
	int family = ca->ss.ss_family, one = 1, fd;
	struct sockaddr_storage a;
	socklen_t alen;

	bool raw = encap == L2TP_ENCAP_IP && ip_raw;

	fd = socket(family, raw ? SOCK_RAW : SOCK_DGRAM,
		    encap == L2TP_ENCAP_IP ? IPPROTO_L2TP : IPPROTO_UDP);
	if (fd < 0)
		goto fail;
	if (set_nonblock_cloexec(fd) < 0)
		goto fail;
	if (family == AF_INET6 && encap == L2TP_ENCAP_UDP &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0)
		goto fail;
	if (encap == L2TP_ENCAP_UDP) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (family == AF_INET)
			setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
		else
			setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one));
		memcpy(&a, &ca->ss, sizeof(a));
		sockaddr_set_port((struct sockaddr *)&a, port);
		alen = sockaddr_len((struct sockaddr *)&a);
	} else if (raw) {
		if (family == AF_INET)
			setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
		else
			setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one));
		memcpy(&a, &ca->ss, sizeof(a));
		sockaddr_set_port((struct sockaddr *)&a, 0);
		alen = sockaddr_len((struct sockaddr *)&a);
	} else {
		alen = l2tpip_addr((const struct sockaddr *)&ca->ss, 0, &a);
	}
	if (tp != NULL &&
	    sock_settings_apply(fd, family, tp, &no_settings, false, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "listen on %s (%s): tunnel profile %s: %s",
			 sockaddr_ntop((const void *)&ca->ss), encap == L2TP_ENCAP_IP ? "ip" : "udp",
			 tp->name, why);
		close(fd);
		return -1;
	}
	if (bind(fd, (struct sockaddr *)&a, alen) < 0)
		goto fail;
	size_rcvbuf(fd, rcvbuf);
	l->fd = fd;
	l->encap = encap;
	l->family = family;
	l->raw = raw;
	l->replies_only = false;
	if (raw)
		log_info("no l2tp_ip in this kernel: L2TP over IP control messages on %s use a raw "
			 "IP socket (null data plane)", sockaddr_ntop((const void *)&ca->ss));
	memcpy(&l->addr, &ca->ss, sockaddr_len((const struct sockaddr *)&ca->ss));
	l->ev = usl_fd_add(l2tpd.loop, fd, USL_READ, listener_read, l);
	if (l->ev == NULL)
		goto fail;
	n_listeners++;
	return 0;
fail:
	snprintf(err, errlen, "listen on %s (%s): %s%s", sockaddr_ntop((const void *)&ca->ss),
		 encap == L2TP_ENCAP_IP ? "ip" : "udp", strerror(errno),
		 encap == L2TP_ENCAP_IP && no_l2tp_ip(errno) ? l2tp_ip_hint(family) : "");
	if (fd >= 0)
		close(fd);
	return -1;
}

static void close_listeners(unsigned from, unsigned to)
{
	for (unsigned i = from; i < to; i++) {
		if (listeners[i].ev != NULL)
			usl_fd_del(listeners[i].ev);
		listeners[i].ev = NULL;
		close(listeners[i].fd);
	}
}

/* Opens c's listeners after those open now; on failure closes what it opened. */
static int open_listeners(const struct l2tpd_config *c, char *err, size_t errlen)
{
	const struct tunnel_profile *tp = listener_profile(c);
	unsigned first = n_listeners;

	for (unsigned i = 0; i < c->n_listen; i++) {
		if (open_listener(&c->listen[i], L2TP_ENCAP_UDP, c->udp_port, listener_rcvbuf(c),
				  tp, err, errlen) < 0 ||
		    (c->listen_ip &&
		     open_listener(&c->listen[i], L2TP_ENCAP_IP, 0, listener_rcvbuf(c), tp, err,
				   errlen) < 0)) {
			close_listeners(first, n_listeners);
			n_listeners = first;
			return -1;
		}
	}
	return 0;
}

/*
 * A reload's new listen addresses: the new sockets open beside the old
 * ones (SO_REUSEADDR lets an address that stays be bound twice), and only
 * when every one of them is open do the old ones close; if one fails, the
 * old ones stay and the reload is refused, so a typo never leaves the
 * daemon deaf, and asking again retries.
 */
int transport_replace(const struct l2tpd_config *c, char *err, size_t errlen)
{
	unsigned old = n_listeners;

	if (open_listeners(c, err, errlen) < 0)
		return -1;
	close_listeners(0, old);
	memmove(&listeners[0], &listeners[old], (n_listeners - old) * sizeof(listeners[0]));
	n_listeners -= old;
	/* the loop's callbacks name each listener by its slot */
	for (unsigned i = 0; i < n_listeners; i++) {
		usl_fd_del(listeners[i].ev);
		listeners[i].ev = usl_fd_add(l2tpd.loop, listeners[i].fd, USL_READ, listener_read,
					     &listeners[i]);
		if (listeners[i].ev == NULL)
			log_warnx("reload: listener %s: event registration failed",
				  sockaddr_ntop(&listeners[i].addr.sa));
	}
	return 0;
}

/* The listener that sends for a tunnel without a socket of its own, or NULL. */
static const struct listener *sender_for(const struct tunnel *t)
{
	int family = t->remote.sa.sa_family;

	if (t->encap == L2TP_ENCAP_UDP && !t->shared_port)
		return NULL;	/* had a port of its own: nothing sends for it */
	for (unsigned i = 0; i < n_listeners; i++) {
		const struct listener *l = &listeners[i];

		if (l->family != family || l->encap != t->encap ||
		    (t->encap == L2TP_ENCAP_IP && !l->raw))
			continue;
		if (sockaddr_is_any(&t->local.sa) || sockaddr_is_any(&l->addr.sa) ||
		    sockaddr_eq_addr(&l->addr.sa, &t->local.sa))
			return l;
	}
	return NULL;
}

int transport_tunnel_settings(const struct tunnel *t, struct transport_settings *out)
{
	bool v6 = t->remote.sa.sa_family == AF_INET6;
	const struct listener *l = NULL;
	socklen_t len;
	int v = 0, fd = t->fd;

	memset(out, 0, sizeof(*out));
	out->own_socket = fd >= 0;
	if (fd < 0) {
		if ((l = sender_for(t)) == NULL)
			return -1;
		fd = l->fd;
	}
	len = sizeof(v);
	if (getsockopt(fd, v6 ? IPPROTO_IPV6 : IPPROTO_IP, v6 ? IPV6_TCLASS : IP_TOS, &v, &len) < 0)
		return -1;
	out->dscp = (unsigned)(v & 0xff) >> 2;
	len = sizeof(v);
	if (getsockopt(fd, v6 ? IPPROTO_IPV6 : IPPROTO_IP, v6 ? IPV6_UNICAST_HOPS : IP_TTL,
		       &v, &len) < 0)
		return -1;
	out->ttl = (unsigned)v;
	len = sizeof(v);
	if (getsockopt(fd, v6 ? IPPROTO_IPV6 : IPPROTO_IP, v6 ? IPV6_MTU_DISCOVER : IP_MTU_DISCOVER,
		       &v, &len) < 0)
		return -1;
	snprintf(out->df, sizeof(out->df), "%s", df_mode_name(v));
	len = sizeof(out->bind_device);
	if (getsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, out->bind_device, &len) < 0)
		return -1;
	out->bind_device[sizeof(out->bind_device) - 1] = '\0';
	return 0;
}

void transport_listeners_configure(const struct l2tpd_config *c)
{
	const struct tunnel_profile *tp = listener_profile(c);
	char why[160];

	for (unsigned i = 0; tp != NULL && i < n_listeners; i++)
		if (sock_settings_apply(listeners[i].fd, listeners[i].family, tp, NULL, false, why,
					sizeof(why)) < 0)
			log_warnx("listener %s: tunnel profile %s: %s",
				  sockaddr_ntop(&listeners[i].addr.sa), tp->name, why);
}

void transport_set_rx(const struct transport_rx *rx)
{
	rx_to = rx;
}

int transport_init(const struct l2tpd_config *c, char *err, size_t errlen)
{
	ip_mode_choose();
	if (usl_hash_init(&ports.paths, 1024, path_eq) < 0 || usl_hash_init(&ports.use, 1, use_eq) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ports_read_range();
	return open_listeners(c, err, errlen);
}

void transport_shutdown(void)
{
	struct usl_hnode *n;

	close_listeners(0, n_listeners);
	n_listeners = 0;
	usl_hash_destroy(&ports.paths);
	while ((n = usl_hash_first(&ports.use)) != NULL) {
		usl_hash_remove(&ports.use, n);
		free(usl_container_of(n, struct addr_use, node));
	}
	usl_hash_destroy(&ports.use);
}

/* A control message with Control Connection ID 0: only an SCCRQ may be one. */
static bool rx_ccid_zero(const uint8_t *buf, size_t len)
{
	return len >= L2TP_CTRL_HDR_LEN && (buf[0] & 0x80) && usl_get_be32(buf + 4) == 0;
}

/*
 * A control message on a tunnel's socket that is not for that tunnel: an
 * SCCRQ (CCID 0: a simultaneous open from our port), or, on a socket that
 * shares the listener's port, what arrived between its bind and connect.
 * The listener's logic takes it (and checks where it came from).
 */
static bool rx_not_ours(const struct tunnel *t, const uint8_t *buf, size_t len)
{
	return len >= L2TP_CTRL_HDR_LEN && (buf[0] & 0x80) && usl_get_be32(buf + 4) != t->id;
}

static void tunnel_sock_read(int fd, short what, void *arg)
{
	struct tunnel *t = arg;
	uint32_t id = t->id;
	int n;

	(void)what;
	rx_prepare(false);
	n = recvmmsg(fd, rx_msgs, RX_BATCH, MSG_DONTWAIT, NULL);
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			log_debug("tunnel %u: recv: %s", id, strerror(errno));
		return;
	}
	for (int i = 0; i < n; i++) {
		l2tpd.stats.rx_datagrams++;
		/* the tunnel may go away while handling a message of the batch */
		if (i > 0 && rx_to->find(id) != t)
			return;
		if (rx_too_long(i, rx_msgs[i].msg_len))
			continue;
		if (rx_not_ours(t, rx_buf[i], rx_msgs[i].msg_len)) {
			/* copies: a tie break may free t inside the call */
			union saddr local = t->local;
			struct l2tp_rx rx = { -1, rx_buf[i], rx_msgs[i].msg_len,
					      (struct sockaddr *)&rx_from[i],
					      (struct sockaddr *)&local, t->encap };
			rx_to->listener(&rx);
			continue;
		}
		rx_to->tunnel(t, rx_buf[i], rx_msgs[i].msg_len, (struct sockaddr *)&rx_from[i]);
	}
}

static struct log_ratelimit port_rl = LOG_RATELIMIT_INIT(60, 1);

static int tunnel_bind(struct tunnel *t, int fd)
{
	struct sockaddr_storage a;
	socklen_t alen;
	int one = 1;

	if (t->encap == L2TP_ENCAP_IP) {
		alen = l2tpip_addr((struct sockaddr *)&t->local, t->id, &a);
		return bind(fd, (struct sockaddr *)&a, alen);
	}
	memcpy(&a, &t->local, sizeof(a));
	if (t->prof->udp_src_port != CFG_SPORT_1701) {
		/* auto, answering a peer: the port may be shared later, see ports */
		bool shareable = t->prof->udp_src_port == CFG_SPORT_AUTO && t->origin == ORIGIN_PEER;
		unsigned own;

		/*
		 * A port of its own; once none was free, not again for a second (a
		 * full scan each), nor while ours hold nearly all of them.
		 */
		if (shareable && ports_nearly_ours(&t->local.sa, &own)) {
			log_warnx_rl(&port_rl, usl_timerset_now(l2tpd.timers), "ephemeral ports on "
				     "%s nearly all ours (%u of net.ipv4.ip_local_port_range %u-%u): "
				     "new tunnels share our ports before the kernel's search for a "
				     "free one gets long", sockaddr_ntop((struct sockaddr *)&t->local),
				     own, ports.lo, ports.hi);
		} else if (!shareable || !ports_exhausted()) {
			if (bind(fd, (struct sockaddr *)&a, sockaddr_len((struct sockaddr *)&a)) == 0) {
				if (shareable)
					setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
				own_port_take(t);
				return 0;
			}
			if (t->prof->udp_src_port != CFG_SPORT_AUTO || errno != EADDRINUSE)
				return -1;
			if (shareable)
				ports_mark_exhausted();
		}
		if (shareable && bind_shared_ephemeral(t, fd, (struct sockaddr *)&a) == 0) {
			log_warnx_rl(&port_rl, usl_timerset_now(l2tpd.timers), "no free ephemeral "
				     "port on %s (net.ipv4.ip_local_port_range %u-%u): new tunnels "
				     "share our ports, one tunnel per peer address and port on each",
				     sockaddr_ntop((struct sockaddr *)&t->local), ports.lo, ports.hi);
			return 0;
		}
		/* auto: no ephemeral port is free, the listener's is */
		log_warnx_rl(&port_rl, usl_timerset_now(l2tpd.timers), "no free ephemeral port on "
			     "%s (net.ipv4.ip_local_port_range): answering new tunnels from port %u, "
			     "shared", sockaddr_ntop((struct sockaddr *)&t->local),
			     l2tpd.conf->udp_port);
		memcpy(&a, &t->local, sizeof(a));
	}
	sockaddr_set_port((struct sockaddr *)&a, l2tpd.conf->udp_port);
	/* an answer to a peer needs the 4-tuple to itself (we initiate: it follows the reply) */
	if (t->origin == ORIGIN_PEER && path_taken((struct sockaddr *)&a, &t->remote.sa)) {
		errno = EADDRINUSE;
		return -1;
	}
	/*
	 * Shares the listener's port: the connected socket wins the lookup
	 * (and must be connected at once, see rx_not_ours()).  Not the
	 * default: the kernel checks a bind against every socket on the port,
	 * so 10,000 tunnels on one port bind ~13x slower than on their own.
	 */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sockaddr_len((struct sockaddr *)&a)) < 0)
		return -1;
	t->shared_port = true;
	return 0;
}

/*
 * Every new socket starts with net.core.rmem_default: read it from one
 * socket every 10 s, not from each of the thousands a bring-up opens.
 */
#define RCVBUF_DEFAULT_TTL_S 10

static void tunnel_size_rcvbuf(struct tunnel *t, int fd)
{
	static int have = -1;
	static usl_time read_at;
	int want = (int)t->prof->rx_window * RCVBUF_PER_MSG;
	usl_time now = usl_timerset_now(l2tpd.timers);

	if (have < 0 || usl_time_cmp(usl_time_sub(now, read_at), usl_time_s(RCVBUF_DEFAULT_TTL_S)) >= 0) {
		socklen_t len = sizeof(have);

		if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &have, &len) < 0)
			have = 0;
		read_at = now;
	}
	if (have / 2 < want)	/* the kernel reports twice what was set */
		set_rcvbuf(fd, want);
}

/* The namespace's UDP receive-buffer drops (IPv4 and IPv6), from /proc/net. */
uint64_t transport_udp_rcvbuf_errors(void)
{
	char line[1024], names[1024];
	unsigned long long v, total = 0;
	FILE *f = fopen("/proc/net/snmp", "re");

	if (f != NULL) {
		names[0] = '\0';
		while (fgets(line, sizeof(line), f) != NULL) {
			if (strncmp(line, "Udp: ", 5) != 0)
				continue;
			if (names[0] == '\0') {
				snprintf(names, sizeof(names), "%s", line);
				continue;
			}
			/* the value line: find RcvbufErrors's column in the names line */
			char *np, *vp, *ns = NULL, *vs = NULL;
			np = strtok_r(names, " \n", &ns);
			vp = strtok_r(line, " \n", &vs);
			while (np != NULL && vp != NULL) {
				if (strcmp(np, "RcvbufErrors") == 0 && sscanf(vp, "%llu", &v) == 1)
					total += v;
				np = strtok_r(NULL, " \n", &ns);
				vp = strtok_r(NULL, " \n", &vs);
			}
			break;
		}
		fclose(f);
	}
	f = fopen("/proc/net/snmp6", "re");
	if (f != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			if (sscanf(line, "Udp6RcvbufErrors %llu", &v) == 1)
				total += v;
		fclose(f);
	}
	return total;
}

static void reply_pktinfo(struct msghdr *mh, uint8_t *cbuf, const struct sockaddr *from);


/* An IP tunnel without l2tp_ip: no socket of its own, the raw one speaks for it. */
static int raw_tunnel_open(struct tunnel *t, char *err, size_t errlen)
{
	int family = t->remote.sa.sa_family;

	if (t->prof->bind_device[0] != '\0') {
		snprintf(err, errlen, "bind_device \"%s\": an L2TP/IP tunnel without the kernel's "
			 "l2tp_ip has no socket of its own to bind (modprobe l2tp_ip%s)",
			 t->prof->bind_device, family == AF_INET6 ? "6" : "");
		return -1;
	}

	if (raw_for(&t->local.sa, family, err, errlen) == NULL)
		return -1;
	if (t->local.sa.sa_family == AF_UNSPEC) {
		memset(&t->local, 0, sizeof(t->local));
		t->local.sa.sa_family = (sa_family_t)family;
	}
	t->local_len = sockaddr_len(&t->local.sa);
	t->fd = -1;
	t->ev = NULL;
	return 0;
}

/* Sends from the raw socket: the zero Session ID, then the message. */
static ssize_t raw_send(const struct tunnel *t, const uint8_t *buf, size_t len)
{
	static const uint8_t session0[4];
	uint8_t cbuf[CMSG_SPACE(sizeof(struct in6_pktinfo))] = { 0 };
	struct iovec iov[2] = { { (void *)session0, 4 }, { (void *)buf, len } };
	struct msghdr mh = { 0 };
	struct sockaddr_storage dst;
	char err[64];
	const struct listener *l = raw_for(&t->local.sa, t->remote.sa.sa_family, err, sizeof(err));

	if (l == NULL) {
		errno = ENOTCONN;
		return -1;
	}
	memcpy(&dst, &t->remote, sockaddr_len(&t->remote.sa));
	sockaddr_set_port((struct sockaddr *)&dst, 0);
	mh.msg_name = &dst;
	mh.msg_namelen = sockaddr_len(&t->remote.sa);
	mh.msg_iov = iov;
	mh.msg_iovlen = 2;
	/* from the address replies must come back to */
	if (!sockaddr_is_any(&t->local.sa))
		reply_pktinfo(&mh, cbuf, &t->local.sa);
	else if (!sockaddr_is_any(&l->addr.sa))
		reply_pktinfo(&mh, cbuf, &l->addr.sa);
	return sendmsg(l->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* Why tunnel_bind() failed, and what would avoid it. */
static void bind_error(const struct tunnel *t, char *err, size_t errlen)
{
	int e = errno;
	const char *hint = "";

	if (e == EADDRINUSE && t->prof->udp_src_port == CFG_SPORT_EPHEMERAL)
		hint = " (no free ephemeral port: widen net.ipv4.ip_local_port_range, or set "
		       "udp_src_port = \"1701\" in the tunnel profile to share the listener's port)";
	else if (e == EADDRINUSE && t->origin == ORIGIN_PEER && t->prof->udp_src_port == CFG_SPORT_1701)
		hint = " (responder_port = \"listener\" answers each peer address and port with one "
		       "tunnel, and this one has it: the peer must send from another port, or use "
		       "responder_port = \"auto\")";
	else if (e == EADDRINUSE && t->origin == ORIGIN_PEER)
		hint = " (all our ports carry a tunnel to this peer port: widen "
		       "net.ipv4.ip_local_port_range)";
	char local[64], remote[64] = "a tunnel";

	sockaddr_str(&t->local.sa, local, sizeof(local));
	if (t->origin == ORIGIN_PEER)
		sockaddr_str(&t->remote.sa, remote, sizeof(remote));
	snprintf(err, errlen, "bind %s for %s: %s%s", local, remote, strerror(e), hint);
}

int transport_tunnel_open(struct tunnel *t, char *err, size_t errlen)
{
	int family = t->remote.sa.sa_family;
	int proto = t->encap == L2TP_ENCAP_IP ? IPPROTO_L2TP : IPPROTO_UDP;
	int fd;

	if (t->encap == L2TP_ENCAP_IP && ip_raw)
		return raw_tunnel_open(t, err, errlen);
	fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
	/* out of descriptors: tunnels in the StopCCN hold give theirs up first */
	while (fd < 0 && (errno == EMFILE || errno == ENFILE) && rx_to->reclaim_socket())
		fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
	if (fd < 0) {
		snprintf(err, errlen, "%s socket: %s%s", t->encap == L2TP_ENCAP_IP ? "l2tp/ip" : "udp",
			 strerror(errno), t->encap == L2TP_ENCAP_IP && no_l2tp_ip(errno) ?
			 l2tp_ip_hint(family) : "");
		return -1;
	}
	if (t->local.sa.sa_family == AF_UNSPEC) {
		memset(&t->local, 0, sizeof(t->local));
		t->local.sa.sa_family = (sa_family_t)family;
	}
	/* before bind and connect: the device decides the route and the lookups */
	if (sock_settings_apply(fd, family, t->prof, &no_settings, true, err, errlen) < 0) {
		close(fd);
		return -1;
	}
	if (tunnel_bind(t, fd) < 0) {
		bind_error(t, err, errlen);
		close(fd);
		return -1;
	}
	t->local_len = sizeof(t->local);
	getsockname(fd, (struct sockaddr *)&t->local, &t->local_len);
	tunnel_size_rcvbuf(t, fd);
	t->fd = fd;
	t->ev = usl_fd_add(l2tpd.loop, fd, USL_READ, tunnel_sock_read, t);
	if (t->ev == NULL) {
		snprintf(err, errlen, "event registration failed");
		own_port_release(t);
		close(fd);
		t->fd = -1;
		return -1;
	}
	return 0;
}

/*
 * Connects the tunnel socket to where the peer talks from, so the kernel
 * delivers only this peer's datagrams to it (and data-plane handover works).
 */
int transport_tunnel_connect(struct tunnel *t, const struct sockaddr *peer)
{
	struct sockaddr_storage a;
	socklen_t alen;

	if (t->fd < 0) {	/* raw IP: nothing to connect, the address is all */
		memcpy(&t->remote, peer, sockaddr_len(peer));
		t->remote_len = sockaddr_len(peer);
		t->connected = true;
		return 0;
	}
	if (t->encap == L2TP_ENCAP_IP) {
		alen = l2tpip_addr(peer, l2tp_cc_peer_ccid(t->cc), &a);
	} else {
		alen = sockaddr_len(peer);
		memcpy(&a, peer, alen);
	}
	if (connect(t->fd, (struct sockaddr *)&a, alen) < 0)
		return -1;
	path_unindex(t);
	memcpy(&t->remote, peer, sockaddr_len(peer));
	t->remote_len = sockaddr_len(peer);
	t->connected = true;
	/* a wildcard bind: the route chose the source address */
	if (sockaddr_is_any(&t->local.sa)) {
		t->local_len = sizeof(t->local);
		getsockname(t->fd, (struct sockaddr *)&t->local, &t->local_len);
	}
	if (t->encap == L2TP_ENCAP_UDP)
		path_index(t);
	return 0;
}

void transport_tunnel_close(struct tunnel *t)
{
	path_unindex(t);
	own_port_release(t);
	usl_fd_close(&t->ev, &t->fd);
}

/*
 * A UDP tunnel without a socket (closed in the StopCCN hold): it shared the
 * listener's port, so the listener sends for it, from the same address and
 * port.  One that had a port of its own has nothing left to send from.
 */
static ssize_t shared_port_send(const struct tunnel *t, const uint8_t *buf, size_t len)
{
	uint8_t cbuf[CMSG_SPACE(sizeof(struct in6_pktinfo))] = { 0 };
	struct iovec iov = { (void *)buf, len };
	struct msghdr mh = { 0 };
	struct sockaddr_storage dst;

	for (unsigned i = 0; t->shared_port && i < n_listeners; i++) {
		const struct listener *l = &listeners[i];

		if (l->raw || l->encap != L2TP_ENCAP_UDP || l->family != t->remote.sa.sa_family ||
		    (!sockaddr_is_any(&l->addr.sa) && !sockaddr_eq_addr(&l->addr.sa, &t->local.sa)))
			continue;
		memcpy(&dst, &t->remote, sockaddr_len(&t->remote.sa));
		mh.msg_name = &dst;
		mh.msg_namelen = sockaddr_len(&t->remote.sa);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		if (!sockaddr_is_any(&t->local.sa))
			reply_pktinfo(&mh, cbuf, &t->local.sa);
		return sendmsg(l->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	errno = ENOTCONN;
	return -1;
}

int transport_send(struct tunnel *t, const uint8_t *buf, size_t len)
{
	struct sockaddr_storage a;
	socklen_t alen;
	ssize_t n;

	if (t->fd < 0 && t->encap == L2TP_ENCAP_IP) {
		n = raw_send(t, buf, len);
	} else if (t->fd < 0) {
		n = shared_port_send(t, buf, len);
	} else if (t->connected) {
		n = send(t->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	} else {
		if (t->encap == L2TP_ENCAP_IP)
			alen = l2tpip_addr((struct sockaddr *)&t->remote, 0, &a);
		else
			memcpy(&a, &t->remote, alen = sockaddr_len((struct sockaddr *)&t->remote));
		n = sendto(t->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&a, alen);
	}
	if (n < 0) {
		/* the reliable layer retransmits; a lost datagram is not fatal */
		l2tpd.stats.tx_errors++;
		log_debug("tunnel %u: send: %s", t->id, strerror(errno));
		return -1;
	}
	l2tpd.stats.tx_datagrams++;
	return 0;
}

/* The listener that answers rx: its own, or one of its family and encapsulation. */
static const struct listener *reply_listener(const struct l2tp_rx *rx)
{
	for (unsigned i = 0; i < n_listeners; i++)
		if (rx->lfd >= 0 ? listeners[i].fd == rx->lfd
				 : (listeners[i].family == rx->from->sa_family &&
				    listeners[i].encap == rx->encap))
			return &listeners[i];
	return NULL;
}

/* Source address of a reply: the address the request was sent to. */
static void reply_pktinfo(struct msghdr *mh, uint8_t *cbuf, const struct sockaddr *from)
{
	struct cmsghdr *c;

	if (from->sa_family == AF_INET) {
		struct in_pktinfo pi = { .ipi_spec_dst = ((const struct sockaddr_in *)from)->sin_addr };
		mh->msg_control = cbuf;
		mh->msg_controllen = CMSG_SPACE(sizeof(pi));
		c = CMSG_FIRSTHDR(mh);
		c->cmsg_level = IPPROTO_IP;
		c->cmsg_type = IP_PKTINFO;
		c->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(c), &pi, sizeof(pi));
	} else if (from->sa_family == AF_INET6) {
		struct in6_pktinfo pi = { .ipi6_addr = ((const struct sockaddr_in6 *)from)->sin6_addr };
		mh->msg_control = cbuf;
		mh->msg_controllen = CMSG_SPACE(sizeof(pi));
		c = CMSG_FIRSTHDR(mh);
		c->cmsg_level = IPPROTO_IPV6;
		c->cmsg_type = IPV6_PKTINFO;
		c->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(c), &pi, sizeof(pi));
	}
}

int transport_listener_reply(const struct l2tp_rx *rx, const uint8_t *buf, size_t len)
{
	const struct listener *l = reply_listener(rx);
	static const uint8_t session0[4];
	uint8_t cbuf[CMSG_SPACE(sizeof(struct in6_pktinfo))] = { 0 };
	struct iovec iov[2] = { { (void *)session0, 4 }, { (void *)buf, len } };
	struct msghdr mh = { 0 };
	struct sockaddr_storage dst;

	if (l == NULL)
		return -1;
	/* a raw socket sends the zero Session ID; every other kind adds its own */
	mh.msg_iov = l->raw ? iov : iov + 1;
	mh.msg_iovlen = l->raw ? 2 : 1;
	if (l->raw) {
		memcpy(&dst, rx->from, sockaddr_len(rx->from));
		sockaddr_set_port((struct sockaddr *)&dst, 0);
		mh.msg_namelen = sockaddr_len(rx->from);
		if (rx->to != NULL && !sockaddr_is_any(rx->to))
			reply_pktinfo(&mh, cbuf, rx->to);
	} else if (l->encap == L2TP_ENCAP_IP) {
		/* the L2TP/IP socket adds the zero Session ID itself */
		mh.msg_namelen = l2tpip_addr(rx->from, 0, &dst);
	} else {
		memcpy(&dst, rx->from, sockaddr_len(rx->from));
		mh.msg_namelen = sockaddr_len(rx->from);
		if (rx->to != NULL)
			reply_pktinfo(&mh, cbuf, rx->to);
	}
	mh.msg_name = &dst;
	if (sendmsg(l->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		l2tpd.stats.tx_errors++;
		return -1;
	}
	l2tpd.stats.tx_datagrams++;
	return 0;
}

/* ---- restart handover ---------------------------------------------------- */

int transport_tunnel_adopt(struct tunnel *t, int fd, char *err, size_t errlen)
{
	if (fd < 0) {
		if (t->encap == L2TP_ENCAP_IP && ip_raw)
			return raw_tunnel_open(t, err, errlen);
		snprintf(err, errlen, "no socket handed over");
		return -1;
	}
	if (set_nonblock_cloexec(fd) < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	/* the profile may have changed across the restart: the socket takes it now */
	if (sock_settings_apply(fd, t->remote.sa.sa_family, t->prof, NULL, false, err, errlen) < 0)
		return -1;
	t->fd = fd;
	t->local_len = sizeof(t->local);
	getsockname(fd, (struct sockaddr *)&t->local, &t->local_len);
	t->ev = usl_fd_add(l2tpd.loop, fd, USL_READ, tunnel_sock_read, t);
	if (t->ev == NULL) {
		snprintf(err, errlen, "event registration failed");
		t->fd = -1;
		return -1;
	}
	if (t->encap == L2TP_ENCAP_UDP && t->connected)
		path_index(t);
	/* a port in the ephemeral range not shared with the listener: counted as its own */
	if (t->encap == L2TP_ENCAP_UDP && !t->shared_port &&
	    sockaddr_port(&t->local.sa) >= ports.lo && sockaddr_port(&t->local.sa) <= ports.hi)
		own_port_take(t);
	return 0;
}

/*
 * RFC 4951 after a crash: the socket a tunnel had is gone with the process;
 * a new one takes its exact address and port (the peer knows the tunnel by
 * them), connected to where the peer talks from.
 */
int transport_tunnel_reopen(struct tunnel *t, char *err, size_t errlen)
{
	int family = t->remote.sa.sa_family, one = 1, fd;
	int proto = t->encap == L2TP_ENCAP_IP ? IPPROTO_L2TP : IPPROTO_UDP;

	if (t->encap == L2TP_ENCAP_IP && ip_raw)
		return raw_tunnel_open(t, err, errlen);
	fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	/* the listener's port, shared as it was: the connected socket wins the lookup */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (sock_settings_apply(fd, family, t->prof, &no_settings, true, err, errlen) < 0 ||
	    bind(fd, &t->local.sa, sockaddr_len(&t->local.sa)) < 0 ||
	    (t->encap == L2TP_ENCAP_UDP &&
	     connect(fd, &t->remote.sa, sockaddr_len(&t->remote.sa)) < 0)) {
		if (err[0] == '\0' || errno != 0)
			snprintf(err, errlen, "%s: %s", sockaddr_ntop(&t->local.sa), strerror(errno));
		close(fd);
		return -1;
	}
	tunnel_size_rcvbuf(t, fd);
	return transport_tunnel_adopt(t, fd, err, errlen);
}

void transport_listeners_read(bool on)
{
	/* raw L2TP/IP listeners carry established tunnels' messages too: they keep reading */
	for (unsigned i = 0; i < n_listeners; i++)
		if (!listeners[i].raw && listeners[i].ev != NULL)
			usl_fd_set_events(listeners[i].ev, on ? USL_READ : 0);
}
