/*
 * src/peer.c - remote LCCEs, indexed by address.
 *
 * A peer exists while it has tunnels.  It owns the list of its tunnels
 * (for crossed-SCCRQ detection) and, when snmp_config_id is on, the
 * allocator of its tunnels' config_id (lowest free, O(log n)).
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

struct peer *peer_get(const struct sockaddr *addr)
{
	uint32_t h = sockaddr_hash_addr(addr);
	struct usl_hnode *n = usl_hash_lookup(&l2tpd.peers, addr, h);
	struct peer *p;

	if (n != NULL)
		return usl_hash_entry(n, struct peer, hnode);
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	memcpy(&p->addr, addr, sockaddr_len(addr));
	sockaddr_set_port((struct sockaddr *)&p->addr, 0);
	usl_list_init(&p->tunnels);
	usl_list_init(&p->connecting);
	if (l2tpd.conf->snmp_config_id && idalloc_init(&p->config_ids, PEER_CONFIG_ID_MAX) < 0) {
		free(p);
		return NULL;
	}
	usl_hash_insert(&l2tpd.peers, &p->hnode, h);
	return p;
}

void peer_put(struct peer *p)
{
	if (p->n_tunnels > 0)
		return;
	usl_hash_remove(&l2tpd.peers, &p->hnode);
	idalloc_destroy(&p->config_ids);
	free(p);
}
