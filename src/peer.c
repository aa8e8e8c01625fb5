/*
 * src/peer.c - remote LCCEs, indexed by address.
 *
 * A peer exists exactly while tunnels reference it: each tunnel takes one
 * reference (peer_get) and drops it when it goes (peer_put).  Code that only
 * looks at a peer (crossed-SCCRQ detection) uses peer_find and must not use
 * the pointer after anything that may free a tunnel.  A peer owns the list
 * of its tunnels and, when snmp_config_id is on, the allocator of its
 * tunnels' config_id (lowest free, O(log n)).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "l2tpv3d.h"
#include "usl/log.h"

/* config_id values per peer: the SNMP table index, bounded like tunnels. */
#define PEER_CONFIG_ID_MAX	0x7fffffffu

static bool peer_eq(const struct usl_hnode *n, const void *key)
{
	const struct peer *p = usl_hash_entry(n, struct peer, hnode);

	return sockaddr_eq_addr((const struct sockaddr *)&p->addr, key);
}

int peer_init(void)
{
	return usl_hash_init(&l2tpd.peers, 256, peer_eq);
}

struct peer *peer_find(const struct sockaddr *addr)
{
	struct usl_hnode *n = usl_hash_lookup(&l2tpd.peers, addr, sockaddr_hash_addr(addr));

	return n ? usl_hash_entry(n, struct peer, hnode) : NULL;
}

struct peer *peer_get(const struct sockaddr *addr)
{
	struct peer *p = peer_find(addr);

	if (p != NULL) {
		p->n_tunnels++;
		return p;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	memcpy(&p->addr, addr, sockaddr_len(addr));
	sockaddr_set_port((struct sockaddr *)&p->addr, 0);
	usl_list_init(&p->tunnels);
	usl_list_init(&p->connecting);
	usl_timer_init(&p->probe_timer, tunnel_probe_due);
	if (l2tpd.conf->snmp_config_id && idalloc_init(&p->config_ids, PEER_CONFIG_ID_MAX) < 0) {
		free(p);
		return NULL;
	}
	p->n_tunnels = 1;
	usl_hash_insert(&l2tpd.peers, &p->hnode, sockaddr_hash_addr(addr));
	return p;
}

void peer_put(struct peer *p)
{
	if (--p->n_tunnels > 0)
		return;
	usl_hash_remove(&l2tpd.peers, &p->hnode);
	usl_timer_cancel(&p->probe_timer);
	idalloc_destroy(&p->config_ids);
	free(p);
}
