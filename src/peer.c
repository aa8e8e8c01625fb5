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

/*
 * What each peers entry holds now (its max_tunnels, max_sessions): counts
 * found by the entry's name in O(1), kept by name so that they outlive a
 * reload that changes the entry, and freed when all are zero.
 */
struct entry_load {
	struct usl_hnode hnode;
	unsigned n[ENTRY__COUNT];
	char name[];
};

static struct usl_hash entry_loads;

static bool entry_load_eq(const struct usl_hnode *n, const void *key)
{
	return strcmp(usl_hash_entry(n, struct entry_load, hnode)->name, key) == 0;
}

static struct entry_load *entry_load_find(const char *name)
{
	struct usl_hnode *n = usl_hash_lookup(&entry_loads, name,
					      usl_hash_bytes(name, strlen(name), 0));

	return n ? usl_hash_entry(n, struct entry_load, hnode) : NULL;
}

unsigned entry_count(const char *entry, enum entry_count k)
{
	const struct entry_load *e = entry_load_find(entry);

	return e ? e->n[k] : 0;
}

bool entry_count_add(const char *entry, enum entry_count k)
{
	struct entry_load *e = entry_load_find(entry);
	size_t len = strlen(entry);

	if (e == NULL) {
		e = calloc(1, sizeof(*e) + len + 1);
		if (e == NULL)
			return false;
		memcpy(e->name, entry, len + 1);
		usl_hash_insert(&entry_loads, &e->hnode, usl_hash_bytes(e->name, len, 0));
	}
	e->n[k]++;
	return true;
}

void entry_count_del(const char *entry, enum entry_count k)
{
	struct entry_load *e = entry ? entry_load_find(entry) : NULL;

	if (e == NULL || e->n[k] == 0 || --e->n[k] > 0)
		return;
	for (int i = 0; i < ENTRY__COUNT; i++)
		if (e->n[i] > 0)
			return;
	usl_hash_remove(&entry_loads, &e->hnode);
	free(e);
}

int peer_init(void)
{
	if (usl_hash_init(&entry_loads, 16, entry_load_eq) < 0)
		return -1;
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
