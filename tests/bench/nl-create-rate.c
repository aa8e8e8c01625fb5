/*
 * tests/bench/nl-create-rate.c - the kernel's own limit for L2TPv3
 * pseudowires: create N managed UDP tunnels (on UDP sockets this program
 * opens, as the daemon hands over its own) with one Ethernet session each,
 * then delete them, through the "l2tp" generic netlink family, with no
 * control protocol at all.  What l2tpv3d adds on top of this is its
 * overhead; tests/kernel/scale.sh prints both.
 *
 *   nl-create-rate [-n N] [-l] [-6] [-S]
 *     -n N   pseudowires (default 1000)
 *     -l     also set each interface up as the daemon does once its
 *            session exists (rtnetlink: no IPv6 link-local, up; the MTU
 *            stays the kernel's, as the daemon's request for it is a no-op)
 *     -6     IPv6 sockets (::1) instead of IPv4 (127.0.0.1)
 *     -S     stop (SIGSTOP) between creating and deleting, so that several
 *            runs side by side start their deletes together (SIGCONT)
 *
 * Requests go in batches of BATCH messages, each batch's ACKs read before
 * the next is sent.  "Deleted" means the kernel's own dump is empty again
 * (the kernel tears tunnels down in a work queue after the ACK).  Prints
 * one human line and one "RATE create=X delete=Y" line (pseudowires/s).
 * Needs CAP_NET_ADMIN and the l2tp_eth module; run it in a scratch netns.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/l2tp.h>
#include <linux/rtnetlink.h>

#define BATCH	256
#define ID_BASE	100000

static struct mnl_socket *gnl, *rtnl;
static uint16_t family;
static uint32_t seq;
static unsigned errors;
static char txbuf[BATCH * 256] __attribute__((aligned(4)));
static char rxbuf[1 << 16] __attribute__((aligned(4)));

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void die(const char *what)
{
	fprintf(stderr, "nl-create-rate: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Counts failed requests; every message answered ends with an ACK or error. */
static int on_error(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	unsigned *answered = data;

	(*answered)++;
	if (e->error != 0 && errors++ < 5)
		fprintf(stderr, "nl-create-rate: seq %u: %s\n", nlh->nlmsg_seq, strerror(-e->error));
	return MNL_CB_OK;
}

static int on_done(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	return MNL_CB_STOP;
}

/* Sends the batch and waits for one answer per message. */
static void batch_run(struct mnl_socket *nl, struct mnl_nlmsg_batch *b, unsigned n)
{
	static mnl_cb_t ctl[NLMSG_MIN_TYPE] = { [NLMSG_ERROR] = on_error };
	unsigned answered = 0;
	ssize_t len;

	if (n == 0)
		return;
	if (mnl_socket_sendto(nl, mnl_nlmsg_batch_head(b), mnl_nlmsg_batch_size(b)) < 0)
		die("sendto");
	while (answered < n) {
		len = mnl_socket_recvfrom(nl, rxbuf, sizeof(rxbuf));
		if (len < 0)
			die("recvfrom");
		mnl_cb_run2(rxbuf, (size_t)len, 0, 0, NULL, &answered, ctl, NLMSG_MIN_TYPE);
	}
	mnl_nlmsg_batch_reset(b);
}

/* A request header at the end of the batch, with the next sequence number. */
static struct nlmsghdr *msg_put(struct mnl_nlmsg_batch *b, uint16_t type, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(mnl_nlmsg_batch_current(b));

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++seq;
	return nlh;
}

static struct nlmsghdr *genl_put(struct mnl_nlmsg_batch *b, uint16_t type, uint8_t cmd,
				 uint8_t version, uint16_t flags)
{
	struct nlmsghdr *nlh = msg_put(b, type, flags);
	struct genlmsghdr *g;

	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = version;
	return nlh;
}

static int family_cb(const struct nlattr *a, void *data)
{
	if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID)
		*(uint16_t *)data = mnl_attr_get_u16(a);
	return MNL_CB_OK;
}

static int family_data(const struct nlmsghdr *nlh, void *data)
{
	return mnl_attr_parse(nlh, sizeof(struct genlmsghdr), family_cb, data);
}

static void resolve_family(void)
{
	struct mnl_nlmsg_batch *b = mnl_nlmsg_batch_start(txbuf, sizeof(txbuf));
	struct nlmsghdr *nlh = genl_put(b, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, 0);
	ssize_t len;

	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, L2TP_GENL_NAME);
	if (mnl_socket_sendto(gnl, nlh, nlh->nlmsg_len) < 0)
		die("sendto");
	len = mnl_socket_recvfrom(gnl, rxbuf, sizeof(rxbuf));
	if (len < 0 || mnl_cb_run(rxbuf, (size_t)len, 0, 0, family_data, &family) < 0 ||
	    family == 0) {
		fprintf(stderr, "nl-create-rate: no \"l2tp\" generic netlink family\n");
		exit(77);
	}
	mnl_nlmsg_batch_stop(b);
}

/* Room for a descriptor per tunnel. */
static int *alloc_fds(unsigned n)
{
	int *fds = calloc(n, sizeof(*fds));
	struct rlimit rl;

	if (fds == NULL)
		die("calloc");
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < n + 64) {
		rl.rlim_cur = rl.rlim_max = n + 64 > rl.rlim_max ? n + 64 : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	return fds;
}

/* A tunnel's connected UDP socket (distinct source ports: one 5-tuple each). */
static int udp_socket(bool v6)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(1701),
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(1701),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, v6 ? (struct sockaddr *)&a6 : (struct sockaddr *)&a4,
			      v6 ? sizeof(a6) : sizeof(a4)) < 0)
		die("udp socket");
	return fd;
}

static void put_create(struct mnl_nlmsg_batch *b, unsigned i, int fd)
{
	struct nlmsghdr *nlh = genl_put(b, family, L2TP_CMD_TUNNEL_CREATE, L2TP_GENL_VERSION, NLM_F_ACK);
	char name[IFNAMSIZ];

	mnl_attr_put_u32(nlh, L2TP_ATTR_CONN_ID, ID_BASE + i);
	mnl_attr_put_u32(nlh, L2TP_ATTR_PEER_CONN_ID, ID_BASE + i);
	mnl_attr_put_u8(nlh, L2TP_ATTR_PROTO_VERSION, 3);
	mnl_attr_put_u16(nlh, L2TP_ATTR_ENCAP_TYPE, L2TP_ENCAPTYPE_UDP);
	mnl_attr_put_u32(nlh, L2TP_ATTR_FD, (uint32_t)fd);
	mnl_nlmsg_batch_next(b);
	nlh = genl_put(b, family, L2TP_CMD_SESSION_CREATE, L2TP_GENL_VERSION, NLM_F_ACK);
	mnl_attr_put_u32(nlh, L2TP_ATTR_CONN_ID, ID_BASE + i);
	mnl_attr_put_u32(nlh, L2TP_ATTR_SESSION_ID, ID_BASE + i);
	mnl_attr_put_u32(nlh, L2TP_ATTR_PEER_SESSION_ID, ID_BASE + i);
	mnl_attr_put_u16(nlh, L2TP_ATTR_PW_TYPE, L2TP_PWTYPE_ETH);
	mnl_attr_put_u8(nlh, L2TP_ATTR_L2SPEC_TYPE, L2TP_L2SPECTYPE_NONE);
	snprintf(name, sizeof(name), "nlb%u", i);
	mnl_attr_put_strz(nlh, L2TP_ATTR_IFNAME, name);
	mnl_nlmsg_batch_next(b);
}

/*
 * Each interface as the daemon sets it up (dp_kernel.c), in batches: by
 * name with IPv6 address generation off in one RTM_NEWLINK, IFF_UP in a
 * second.  No IFLA_MTU: the daemon's equals what the kernel gave the
 * interface (a no-op), while a different one here would make the kernel
 * walk every IPv6 route (rt6_mtu_change_route) for each interface, work
 * the daemon does not do.
 */
static void put_link(struct mnl_nlmsg_batch *b, const char *name, bool up)
{
	struct nlmsghdr *nlh = msg_put(b, RTM_NEWLINK, NLM_F_ACK);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	struct nlattr *spec, *in6;

	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	if (up) {
		ifi->ifi_flags = ifi->ifi_change = IFF_UP;
	} else {
		spec = mnl_attr_nest_start(nlh, IFLA_AF_SPEC);
		in6 = mnl_attr_nest_start(nlh, AF_INET6);
		mnl_attr_put_u8(nlh, IFLA_INET6_ADDR_GEN_MODE, IN6_ADDR_GEN_MODE_NONE);
		mnl_attr_nest_end(nlh, in6);
		mnl_attr_nest_end(nlh, spec);
	}
	mnl_nlmsg_batch_next(b);
}

/*
 * In rounds of BATCH / 2 pseudowires, as the daemon's request window
 * interleaves them: their UDP sockets (a daemon opens one per tunnel as it
 * makes the tunnel, so they are part of the work timed), their tunnels and
 * sessions in one generic netlink batch, then (links) their interfaces in
 * one rtnetlink batch.  Each interface thus comes up while the earlier ones
 * are up, as the daemon's do, not all created first and brought up after.
 */
static void create_all(unsigned n, int *fds, bool links, bool v6)
{
	struct mnl_nlmsg_batch *b = mnl_nlmsg_batch_start(txbuf, sizeof(txbuf));
	char name[IFNAMSIZ];

	for (unsigned first = 0; first < n; first += BATCH / 2) {
		unsigned last = first + BATCH / 2 < n ? first + BATCH / 2 : n;

		for (unsigned i = first; i < last; i++) {
			fds[i] = udp_socket(v6);
			put_create(b, i, fds[i]);
		}
		batch_run(gnl, b, 2 * (last - first));
		if (!links)
			continue;
		for (unsigned i = first; i < last; i++) {
			snprintf(name, sizeof(name), "nlb%u", i);
			put_link(b, name, false);
			put_link(b, name, true);
		}
		batch_run(rtnl, b, 2 * (last - first));
	}
	mnl_nlmsg_batch_stop(b);
}

static void delete_all(unsigned n)
{
	struct mnl_nlmsg_batch *b = mnl_nlmsg_batch_start(txbuf, sizeof(txbuf));
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++) {
		struct nlmsghdr *nlh = genl_put(b, family, L2TP_CMD_TUNNEL_DELETE,
						L2TP_GENL_VERSION, NLM_F_ACK);

		mnl_attr_put_u32(nlh, L2TP_ATTR_CONN_ID, ID_BASE + i);
		mnl_nlmsg_batch_next(b);
		if (++k == BATCH || i + 1 == n) {
			batch_run(gnl, b, k);
			k = 0;
		}
	}
	mnl_nlmsg_batch_stop(b);
}

static int count_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(*(unsigned *)data)++;
	return MNL_CB_OK;
}

/* Tunnels the kernel still lists (a dump). */
static unsigned kernel_tunnels(void)
{
	static mnl_cb_t ctl[NLMSG_MIN_TYPE] = { [NLMSG_DONE] = on_done };
	struct mnl_nlmsg_batch *b = mnl_nlmsg_batch_start(txbuf, sizeof(txbuf));
	struct nlmsghdr *nlh = genl_put(b, family, L2TP_CMD_TUNNEL_GET, L2TP_GENL_VERSION, NLM_F_DUMP);
	unsigned count = 0;
	ssize_t len;
	int rc;

	if (mnl_socket_sendto(gnl, nlh, nlh->nlmsg_len) < 0)
		die("sendto");
	do {
		len = mnl_socket_recvfrom(gnl, rxbuf, sizeof(rxbuf));
		if (len < 0)
			die("recvfrom");
		rc = mnl_cb_run2(rxbuf, (size_t)len, 0, 0, count_cb, &count, ctl, NLMSG_MIN_TYPE);
	} while (rc > MNL_CB_STOP);
	mnl_nlmsg_batch_stop(b);
	return count;
}

static struct mnl_socket *nl_open(int bus)
{
	struct mnl_socket *nl = mnl_socket_open(bus);
	int sz = 8 << 20, one = 1;

	if (nl == NULL || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
		die("netlink socket");
	setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz));
	mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one));
	return nl;
}

int main(int argc, char **argv)
{
	unsigned n = 1000;
	bool links = false, v6 = false, stop = false;
	double t0, t1, t1d, t2;
	int *fds, c;

	while ((c = getopt(argc, argv, "n:l6S")) != -1) {
		switch (c) {
		case 'n': n = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'l': links = true; break;
		case '6': v6 = true; break;
		case 'S': stop = true; break;
		default:
			fprintf(stderr, "usage: nl-create-rate [-n N] [-l] [-6] [-S]\n");
			return 2;
		}
	}
	gnl = nl_open(NETLINK_GENERIC);
	rtnl = nl_open(NETLINK_ROUTE);
	resolve_family();
	fds = alloc_fds(n);
	t0 = now_ms();
	create_all(n, fds, links, v6);
	t1 = now_ms();
	if (stop)
		raise(SIGSTOP);
	t1d = now_ms();
	delete_all(n);
	for (unsigned i = 0; i < n; i++)
		close(fds[i]);
	/*
	 * A dump walks from the first tunnel for each tunnel (l2tp_tunnel_get_nth)
	 * and holds the lock the teardown needs: wait 100 ms, or four times what
	 * the last dump took, whichever is longer.
	 */
	for (;;) {
		double d0 = now_ms();
		double took;

		if (kernel_tunnels() == 0)
			break;
		took = now_ms() - d0;
		usleep((useconds_t)(took * 4 > 100 ? took * 4 : 100) * 1000);
	}
	t2 = now_ms();
	printf("nl-create-rate: %u tunnels+sessions%s: created in %.0f ms (%.0f/s), deleted in %.0f ms "
	       "(%.0f/s), %u errors\n", n, links ? " + link setup" : "", t1 - t0, n * 1e3 / (t1 - t0),
	       t2 - t1d, n * 1e3 / (t2 - t1d), errors);
	printf("RATE create=%.0f delete=%.0f\n", n * 1e3 / (t1 - t0), n * 1e3 / (t2 - t1d));
	free(fds);
	mnl_socket_close(gnl);
	mnl_socket_close(rtnl);
	return errors ? 1 : 0;
}
