/*
 * src/link.c - interface setup for pseudowires through rtnetlink
 * (libnl-route).
 *
 * Why synchronous: every call here is one rtnetlink request to the local
 * kernel on a socket of its own, answered in microseconds (no I/O, no
 * peer); it happens once per session, right after the kernel created the
 * interface.  Making it asynchronous would add a second request machine for
 * no measurable gain; the generic netlink requests, which come in storms of
 * 10,000 and which the protocol waits for, are the asynchronous ones
 * (dp_kernel_nl.c).
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/inet6.h>
#include <netlink/route/link/vlan.h>

#include "link.h"

static struct nl_sock *rt;

/* libnl's error codes back to errno, for the callers' messages and logic. */
static int nle_errno(int nle)
{
	switch (nle < 0 ? -nle : nle) {
	case NLE_EXIST:		return -EEXIST;
	case NLE_NODEV:
	case NLE_OBJ_NOTFOUND:	return -ENODEV;
	case NLE_PERM:		return -EPERM;
	case NLE_INVAL:		return -EINVAL;
	case NLE_NOMEM:		return -ENOMEM;
	case NLE_BUSY:		return -EBUSY;
	case NLE_RANGE:		return -ERANGE;
	case NLE_NOADDR:	return -EADDRNOTAVAIL;
	case NLE_OPNOTSUPP:	return -EOPNOTSUPP;
	default:		return -EIO;
	}
}

int link_init(char *err, size_t errlen)
{
	int rc;

	rt = nl_socket_alloc();
	if (rt == NULL) {
		snprintf(err, errlen, "rtnetlink: out of memory");
		return -ENOMEM;
	}
	rc = nl_connect(rt, NETLINK_ROUTE);
	if (rc < 0) {
		snprintf(err, errlen, "rtnetlink: %s", nl_geterror(rc));
		nl_socket_free(rt);
		rt = NULL;
		return nle_errno(rc);
	}
	return 0;
}

void link_shutdown(void)
{
	if (rt != NULL)
		nl_socket_free(rt);	/* closes it */
	rt = NULL;
}

/*
 * Not if_nametoindex(): its SIOCGIFINDEX on a name that does not exist makes
 * the kernel try to load a module "netdev-NAME" (dev_load), a modprobe per
 * probe - 0.3 s each under emulation, and we probe free names.  RTM_GETLINK
 * by name never loads anything.
 */
unsigned link_index(const char *name)
{
	struct rtnl_link *l = NULL;
	unsigned idx = 0;

	if (rt == NULL)
		return if_nametoindex(name);
	if (rtnl_link_get_kernel(rt, 0, name, &l) == 0) {
		idx = (unsigned)rtnl_link_get_ifindex(l);
		rtnl_link_put(l);
	}
	return idx;
}

/* MTU, master and IFF_UP in one RTM_NEWLINK: one round trip per session. */
static int link_change(unsigned ifindex, const struct link_params *p, char *err, size_t errlen)
{
	struct rtnl_link *orig = rtnl_link_alloc(), *chg = rtnl_link_alloc();
	unsigned master = 0;
	int rc = -ENOMEM;

	if (orig == NULL || chg == NULL)
		goto out;
	if (p->bridge != NULL && p->bridge[0]) {
		master = link_index(p->bridge);
		if (master == 0) {
			snprintf(err, errlen, "bridge %s: no such interface", p->bridge);
			rc = -ENODEV;
			goto out;
		}
		rtnl_link_set_master(chg, (int)master);
	}
	rtnl_link_set_ifindex(orig, (int)ifindex);
	if (p->mtu)
		rtnl_link_set_mtu(chg, p->mtu);
	if (p->up)
		rtnl_link_set_flags(chg, IFF_UP);
	rc = rtnl_link_change(rt, orig, chg, 0);
	if (rc < 0) {
		snprintf(err, errlen, "set mtu %u%s%s%s: %s", p->mtu, master ? ", master " : "",
			 master ? p->bridge : "", p->up ? ", up" : "", nl_geterror(rc));
		rc = nle_errno(rc);
	}
out:
	rtnl_link_put(orig);
	rtnl_link_put(chg);
	return rc;
}

static int link_add_address(unsigned ifindex, const char *address, char *err, size_t errlen)
{
	struct rtnl_addr *a = rtnl_addr_alloc();
	struct nl_addr *local = NULL;
	int rc;

	if (a == NULL)
		return -ENOMEM;
	rc = nl_addr_parse(address, AF_UNSPEC, &local);
	if (rc == 0) {
		rtnl_addr_set_ifindex(a, (int)ifindex);
		rtnl_addr_set_family(a, nl_addr_get_family(local));
		rc = rtnl_addr_set_local(a, local);
	}
	if (rc == 0)
		rc = rtnl_addr_add(rt, a, 0);
	if (rc < 0) {
		snprintf(err, errlen, "address %s: %s", address, nl_geterror(rc));
		rc = nle_errno(rc);
	}
	nl_addr_put(local);
	rtnl_addr_put(a);
	return rc;
}

/* IPv6 address generation off: no link-local, so no DAD, router or MLD chatter. */
static int link_no_ipv6_ll(unsigned ifindex, char *err, size_t errlen)
{
	struct rtnl_link *orig = rtnl_link_alloc(), *chg = rtnl_link_alloc();
	int rc = -ENOMEM;

	if (orig != NULL && chg != NULL) {
		rtnl_link_set_ifindex(orig, (int)ifindex);
		rc = rtnl_link_inet6_set_addr_gen_mode(chg, IN6_ADDR_GEN_MODE_NONE);
		if (rc == 0)
			rc = rtnl_link_change(rt, orig, chg, 0);
		if (rc < 0) {
			snprintf(err, errlen, "IPv6 address generation off: %s", nl_geterror(rc));
			rc = nle_errno(rc);
		}
	}
	rtnl_link_put(orig);
	rtnl_link_put(chg);
	return rc;
}

int link_configure(unsigned ifindex, const struct link_params *p, char *err, size_t errlen)
{
	int rc = 0;

	if (rt == NULL)
		return -ENOTCONN;
	if (p->no_ipv6_ll)
		rc = link_no_ipv6_ll(ifindex, err, errlen);
	if (rc == 0)
			rc = p->mtu || p->up || (p->bridge != NULL && p->bridge[0]) ?
		     link_change(ifindex, p, err, errlen) : 0;
	if (rc == 0 && p->address != NULL && p->address[0])
		rc = link_add_address(ifindex, p->address, err, errlen);
	return rc;
}

int link_vlan_add(unsigned lower, const char *name, uint16_t vid, unsigned *ifindex,
		  char *err, size_t errlen)
{
	struct rtnl_link *l = rtnl_link_vlan_alloc();
	int rc;

	if (l == NULL)
		return -ENOMEM;
	rtnl_link_set_name(l, name);
	rtnl_link_set_link(l, (int)lower);
	rc = rtnl_link_vlan_set_id(l, vid);
	if (rc == 0)
		rc = rtnl_link_add(rt, l, NLM_F_CREATE | NLM_F_EXCL);
	rtnl_link_put(l);
	if (rc < 0) {
		snprintf(err, errlen, "vlan %s (id %u): %s", name, vid, nl_geterror(rc));
		return nle_errno(rc);
	}
	*ifindex = link_index(name);
	return *ifindex ? 0 : -ENODEV;
}

int link_delete(unsigned ifindex)
{
	struct rtnl_link *l = rtnl_link_alloc();
	int rc;

	if (l == NULL)
		return -ENOMEM;
	rtnl_link_set_ifindex(l, (int)ifindex);
	rc = rtnl_link_delete(rt, l);
	rtnl_link_put(l);
	return rc < 0 ? nle_errno(rc) : 0;
}

int link_set_up(unsigned ifindex, bool up)
{
	struct rtnl_link *orig = rtnl_link_alloc(), *chg = rtnl_link_alloc();
	int rc = -ENOMEM;

	if (orig != NULL && chg != NULL) {
		rtnl_link_set_ifindex(orig, (int)ifindex);
		if (up)
			rtnl_link_set_flags(chg, IFF_UP);
		else
			rtnl_link_unset_flags(chg, IFF_UP);
		rc = rtnl_link_change(rt, orig, chg, 0);
		rc = rc < 0 ? nle_errno(rc) : 0;
	}
	rtnl_link_put(orig);
	rtnl_link_put(chg);
	return rc;
}
