/*
 * src/dp_watch.h - kernel objects removed behind the daemon's back.
 *
 * Someone runs `ip l2tp del tunnel`, `ip l2tp del session` or
 * `ip link del l2tpeth0`: the kernel says so on the l2tp generic netlink
 * multicast group and on rtnetlink's link group.  Two sockets listen, each
 * with a socket filter that lets only deletions through (TUNNEL_DELETE,
 * SESSION_DELETE, RTM_DELLINK), so the notifications of our own creates,
 * thousands a second at bring-up, cost nothing here.
 *
 * The kernel sends l2tp notices to every network namespace, and ids are
 * reused: the owner (dp_kernel_lost.c) matches the peer's ids too, and checks
 * with the kernel where the kernel can say (sessions are deleted at once,
 * tunnels by a work queue).  A lost notice (the socket overflowed) is
 * reported as an overrun: re-check everything.
 */
#ifndef L2TPD_DP_WATCH_H
#define L2TPD_DP_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dpw_ops {
	/* with the peer's ids: the kernel announces deletions to every namespace */
	void (*tunnel_gone)(uint32_t tid, uint32_t peer_tid);
	void (*session_gone)(uint32_t tid, uint32_t sid, uint32_t peer_sid);
	void (*link_gone)(unsigned ifindex);
	/* notifications were lost: l2tp ones, link ones */
	void (*overrun)(bool l2tp, bool link);
};

/*
 * Listens on the l2tp family's multicast group mcgrp (0: the kernel has
 * none, links only) and on link deletions.  0, or -1 with err set.
 */
int dpw_open(uint16_t family, uint32_t mcgrp, const struct dpw_ops *ops, char *err,
	     size_t errlen);
void dpw_close(void);

#endif
