/*
 * src/dp_watch.c - kernel objects removed behind the daemon's back (see
 * dp_watch.h): two netlink sockets that hear deletions only.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>
#include <linux/filter.h>
#include <linux/genetlink.h>
#include <linux/l2tp.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "dp_watch.h"
#include "l2tpv3d.h"
#include "usl/log.h"

#define WATCH_RCVBUF	(4 << 20)	/* a mass deletion by hand is seen in full */
#define WATCH_BUFSZ	(32 * 1024)	/* RTM_DELLINK carries the whole link */

struct watch {
	int fd;
	struct usl_fd *ev;
	bool l2tp;			/* else rtnetlink */
};

static struct {
	struct watch genl, rtnl;
	uint16_t family;
	const struct dpw_ops *ops;
} dpw = { .genl = { .fd = -1, .l2tp = true }, .rtnl = { .fd = -1 } };

static uint8_t buf[WATCH_BUFSZ] __attribute__((aligned(4)));

/* ---- parsing ---------------------------------------------------------------- */

static int l2tp_attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;

	if (mnl_attr_get_type(a) <= L2TP_ATTR_MAX)
		tb[mnl_attr_get_type(a)] = a;
	return MNL_CB_OK;
}

static uint32_t attr_u32(const struct nlattr *a)
{
	return a && mnl_attr_validate(a, MNL_TYPE_U32) == 0 ? mnl_attr_get_u32(a) : 0;
}

static void l2tp_input(const struct nlmsghdr *nlh)
{
	const struct nlattr *tb[L2TP_ATTR_MAX + 1] = { 0 };
	const struct genlmsghdr *g;
	uint32_t tid, sid, peer;

	if (nlh->nlmsg_type != dpw.family || mnl_nlmsg_get_payload_len(nlh) < sizeof(*g))
		return;
	g = mnl_nlmsg_get_payload(nlh);
	mnl_attr_parse(nlh, sizeof(*g), l2tp_attr_cb, tb);
	tid = attr_u32(tb[L2TP_ATTR_CONN_ID]);
	sid = attr_u32(tb[L2TP_ATTR_SESSION_ID]);
	if (tid == 0)
		return;
	if (g->cmd == L2TP_CMD_TUNNEL_DELETE) {
		peer = attr_u32(tb[L2TP_ATTR_PEER_CONN_ID]);
		dpw.ops->tunnel_gone(tid, peer);
	} else if (g->cmd == L2TP_CMD_SESSION_DELETE && sid != 0) {
		peer = attr_u32(tb[L2TP_ATTR_PEER_SESSION_ID]);
		dpw.ops->session_gone(tid, sid, peer);
	}
}

static void link_input(const struct nlmsghdr *nlh)
{
	const struct ifinfomsg *ifi;

	if (nlh->nlmsg_type != RTM_DELLINK || mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifi))
		return;
	ifi = mnl_nlmsg_get_payload(nlh);
	if (ifi->ifi_index > 0)
		dpw.ops->link_gone((unsigned)ifi->ifi_index);
}

static void watch_read(struct watch *w)
{
	bool lost = false;
	ssize_t n;

	for (;;) {
		n = recv(w->fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0 && errno == ENOBUFS) {
			lost = true;
			continue;
		}
		if (n < 0)
			break;
		if ((size_t)n > sizeof(buf)) {
			lost = true;
			continue;
		}
		int rem = (int)n;

		for (const struct nlmsghdr *nlh = (void *)buf; mnl_nlmsg_ok(nlh, rem);
		     nlh = mnl_nlmsg_next(nlh, &rem)) {
			if (w->l2tp)
				l2tp_input(nlh);
			else
				link_input(nlh);
		}
	}
	if (n < 0 && errno != EAGAIN && errno != EINTR)
		log_warnx("kernel watch (%s): recv: %s", w->l2tp ? "l2tp" : "links", strerror(errno));
	if (lost) {
		log_warnx("kernel watch (%s): notifications lost: re-checking every kernel object",
			  w->l2tp ? "l2tp" : "links");
		dpw.ops->overrun(w->l2tp, !w->l2tp);
	}
}

static void on_watch_readable(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	watch_read(arg);
}

/* ---- sockets ------------------------------------------------------------------ */

/*
 * Deletions only, decided in the kernel: generic netlink's command byte
 * follows the 16-byte nlmsghdr; rtnetlink's type is the nlmsghdr's (host
 * order, read by BPF as big-endian: compared with htons).
 */
static int attach_filter(int fd, bool l2tp)
{
	struct sock_filter genl_prog[] = {
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, NLMSG_HDRLEN),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, L2TP_CMD_TUNNEL_DELETE, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, L2TP_CMD_SESSION_DELETE, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0xffff),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_filter rtnl_prog[] = {
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, offsetof(struct nlmsghdr, nlmsg_type)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htons(RTM_DELLINK), 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0xffff),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog prog = l2tp
		? (struct sock_fprog){ sizeof(genl_prog) / sizeof(genl_prog[0]), genl_prog }
		: (struct sock_fprog){ sizeof(rtnl_prog) / sizeof(rtnl_prog[0]), rtnl_prog };

	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

static int watch_open(struct watch *w, int proto, unsigned group, char *err, size_t errlen)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int sz = WATCH_RCVBUF;

	w->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
	if (w->fd < 0 || bind(w->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    attach_filter(w->fd, w->l2tp) < 0 ||
	    setsockopt(w->fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) < 0) {
		snprintf(err, errlen, "kernel watch (%s): %s", w->l2tp ? "l2tp multicast" : "links",
			 strerror(errno));
		return -1;
	}
	if (setsockopt(w->fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(w->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (getenv("L2TPV3D_WATCH_RCVBUF") != NULL) {	/* tests: provoke lost notices */
		sz = atoi(getenv("L2TPV3D_WATCH_RCVBUF"));
		setsockopt(w->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
	w->ev = usl_fd_add(l2tpd.loop, w->fd, USL_READ, on_watch_readable, w);
	if (w->ev == NULL) {
		snprintf(err, errlen, "kernel watch: event registration failed");
		return -1;
	}
	return 0;
}

int dpw_open(uint16_t family, uint32_t mcgrp, const struct dpw_ops *ops, char *err,
	     size_t errlen)
{
	dpw.family = family;
	dpw.ops = ops;
	if (mcgrp == 0)
		log_info("kernel watch: this kernel's l2tp family has no multicast group: "
			 "tunnels and sessions deleted by hand are noticed by their interfaces "
			 "and statistics reads only");
	else if (watch_open(&dpw.genl, NETLINK_GENERIC, mcgrp, err, errlen) < 0)
		goto fail;
	if (watch_open(&dpw.rtnl, NETLINK_ROUTE, RTNLGRP_LINK, err, errlen) < 0)
		goto fail;
	return 0;
fail:
	dpw_close();
	return -1;
}

void dpw_close(void)
{
	usl_fd_close(&dpw.genl.ev, &dpw.genl.fd);
	usl_fd_close(&dpw.rtnl.ev, &dpw.rtnl.fd);
}
