/*
 * src/link.h - the pseudowire's network interface: MTU, up, bridge,
 * address, VLAN sub-interface (rtnetlink through libnl-route).
 *
 * Calls are synchronous on a socket of their own: they are local, take
 * well under a millisecond each, and are made once per session when its
 * kernel object has just been created (see link.c for why that is
 * acceptable in a daemon that otherwise never blocks).  Errors are
 * negative errno values, with a one-line reason in err.
 */
#ifndef L2TPD_LINK_H
#define L2TPD_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What to apply to an interface once it exists; zero/empty members are left alone. */
struct link_params {
	unsigned mtu;
	bool up;
	const char *bridge;		/* enslave to this bridge */
	const char *address;		/* "a.b.c.d/len" or "v6/len" */
	bool no_ipv6_ll;		/* no IPv6 link-local address (set before up) */
};

int link_init(char *err, size_t errlen);
void link_shutdown(void);

/* Index of the interface called name, 0 when there is none. */
unsigned link_index(const char *name);

/* Applies p to ifindex: MTU, master and up in one request, then the address. */
int link_configure(unsigned ifindex, const struct link_params *p, char *err, size_t errlen);

/* Creates VLAN vid on lower as name; its index in *ifindex. */
int link_vlan_add(unsigned lower, const char *name, uint16_t vid, unsigned *ifindex,
		  char *err, size_t errlen);

/* Deletes an interface (the VLAN sub-interface when its session fails). */
int link_delete(unsigned ifindex);

/* Administrative up/down (peer circuit status). */
int link_set_up(unsigned ifindex, bool up);

#endif
