/*
 * src/state.c - the daemon's one global state (struct l2tpd, l2tpv3d.h),
 * in a file of its own: every module reads it, so it belongs to none of
 * them (main.c sets it up).
 */
#include <stdlib.h>

#include "l2tpv3d.h"

struct l2tpd l2tpd;

static int id_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

bool tunnel_id_kept(uint32_t id)
{
	return l2tpd.kept_tunnel_ids != NULL &&
	       bsearch(&id, l2tpd.kept_tunnel_ids, l2tpd.n_kept_tunnel_ids,
		       sizeof(*l2tpd.kept_tunnel_ids), id_cmp) != NULL;
}
