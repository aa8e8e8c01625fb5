/*
 * src/pool.c - LNS pools on the LAC: which member a new tunnel goes to, and
 * which members are held down after a failure (doc/failover.md).
 *
 * The configuration says what a pool is (struct lns_pool); this module
 * keeps what happened to it: per member, the tunnels of ours that went to
 * it through the pool and are not down yet, and until when it is skipped.
 * A reload rebuilds the table from the new configuration: the hold-downs
 * and last failures of members that stay are kept, the tunnel counts are
 * taken again from the live tunnels, so they cannot drift.
 *
 * A tunnel made through a pool carries the pool's name (t->pool) and
 * counts once (t->pool_counted) until it stops: tunnel.c calls
 * pool_tunnel_down() on its way down, which decides whether the member is
 * to blame, and pool_tunnel_release() when it is freed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "l2tpv3d.h"
#include "usl/log.h"

struct pool_member {
	struct lns_pool_member cfg;	/* address and weight, copied from the configuration */
	unsigned tunnels;		/* ours through the pool, not down yet */
	usl_time held_until;		/* the monotonic clock; ns 0: never held */
	int64_t held_until_unix;	/* the same, for people (Unix seconds) */
	char last_failure[192];		/* "" until a tunnel to it fails */
	int64_t last_failure_at;	/* Unix seconds; 0: none */
};

struct pool {
	char name[CFG_NAME_MAX];
	uint32_t hold_down_ms;
	struct pool_member *members;
	unsigned n_members;
};

/* A handful of pools of a few members each: arrays, walked. */
static struct pool *pools;
static unsigned n_pools;

static struct pool *pool_find(const char *name)
{
	for (unsigned i = 0; name != NULL && i < n_pools; i++)
		if (strcmp(pools[i].name, name) == 0)
			return &pools[i];
	return NULL;
}

/* The member of p that a tunnel's destination is, or NULL. */
static struct pool_member *member_find(struct pool *p, const struct sockaddr *dest)
{
	for (unsigned i = 0; p != NULL && i < p->n_members; i++)
		if (config_pool_member_is(&p->members[i].cfg, dest))
			return &p->members[i];
	return NULL;
}

static bool member_held(const struct pool_member *m, usl_time now)
{
	return m->held_until.ns != 0 && usl_time_cmp(m->held_until, now) > 0;
}

static bool same_member(const struct lns_pool_member *a, const struct lns_pool_member *b)
{
	return a->address.ss.ss_family == b->address.ss.ss_family &&
	       config_pool_member_is(a, (const struct sockaddr *)&b->address.ss) &&
	       config_pool_member_is(b, (const struct sockaddr *)&a->address.ss);
}

static void pools_free(struct pool *ps, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		free(ps[i].members);
	free(ps);
}

bool pool_apply(const struct l2tpd_config *c)
{
	struct pool *np = calloc(c->n_lns_pools ? c->n_lns_pools : 1, sizeof(*np));
	struct usl_rb_node *node;

	if (np == NULL)
		return false;
	for (unsigned i = 0; i < c->n_lns_pools; i++) {
		const struct lns_pool *lp = &c->lns_pools[i];
		struct pool *old = pool_find(lp->name);

		snprintf(np[i].name, sizeof(np[i].name), "%s", lp->name);
		np[i].hold_down_ms = lp->hold_down_ms;
		np[i].members = calloc(lp->n_members ? lp->n_members : 1, sizeof(*np[i].members));
		if (np[i].members == NULL) {
			pools_free(np, i);
			return false;
		}
		np[i].n_members = lp->n_members;
		for (unsigned j = 0; j < lp->n_members; j++) {
			struct pool_member *m = &np[i].members[j];

			for (unsigned k = 0; old != NULL && k < old->n_members; k++) {
				if (same_member(&old->members[k].cfg, &lp->members[j])) {
					*m = old->members[k];
					m->tunnels = 0;
					break;
				}
			}
			m->cfg = lp->members[j];
		}
	}
	pools_free(pools, n_pools);
	pools = np;
	n_pools = c->n_lns_pools;
	for (node = usl_rb_first(&l2tpd.tunnel_order); node != NULL; node = usl_rb_next(node)) {
		const struct tunnel *t = usl_rb_entry(node, struct tunnel, by_order);
		struct pool_member *m;

		if (t->pool_counted && (m = member_find(pool_find(t->pool), &t->dest_cfg.sa)) != NULL)
			m->tunnels++;
	}
	return true;
}

void pool_shutdown(void)
{
	pools_free(pools, n_pools);
	pools = NULL;
	n_pools = 0;
}

/*
 * Smooth weighted least-connections: the member with the smallest
 * (tunnels + 1) / weight, compared as cross products so that no rounding
 * decides; the first in the list on a tie.  Weights 2:1:1 so give a cycle
 * of four tunnels (the first member twice), and any count a spread that
 * is exact to one tunnel.
 */
static struct pool_member *member_pick(struct pool *p, usl_time now)
{
	struct pool_member *best = NULL;

	for (unsigned i = 0; i < p->n_members; i++) {
		struct pool_member *m = &p->members[i];

		if (member_held(m, now))
			continue;
		if (best == NULL || ((uint64_t)m->tunnels + 1) * best->cfg.weight <
				    ((uint64_t)best->tunnels + 1) * m->cfg.weight)
			best = m;
	}
	if (best != NULL)
		return best;
	/* every member held down: the one that comes back first */
	for (unsigned i = 0; i < p->n_members; i++)
		if (best == NULL || usl_time_cmp(p->members[i].held_until, best->held_until) < 0)
			best = &p->members[i];
	return best;
}

struct tunnel *pool_connect(const char *name, const struct cfg_addr *local,
			    const struct tunnel_profile *prof, const char *tname,
			    const char *description, const char *secret, enum origin origin,
			    enum ctl_status *st, char *err, size_t errlen)
{
	struct pool *p = pool_find(name);
	struct pool_member *m;
	struct cfg_addr dest;
	struct tunnel *t;

	if (p == NULL || p->n_members == 0) {
		snprintf(err, errlen, "no LNS pool named '%s'", name);
		*st = CTL_E_NOT_FOUND;
		return NULL;
	}
	m = member_pick(p, usl_timerset_now(l2tpd.timers));
	dest = m->cfg.address;
	if (sockaddr_port((const struct sockaddr *)&dest.ss) == 0)
		sockaddr_set_port((struct sockaddr *)&dest.ss, prof->udp_port);
	t = tunnel_connect(&dest, local, prof, tname, description, secret, origin, st, err,
			   errlen);
	if (t == NULL)
		return NULL;
	t->pool = strdup(name);
	if (t->pool != NULL) {
		t->pool_counted = true;
		m->tunnels++;
	}
	return t;
}

/* Why the tunnel failed, in the words of its log line. */
static void failure_text(const struct tunnel *t, const struct l2tp_result *why, char *buf,
			 size_t len)
{
	const char *what = t->up ? "tunnel down" : "tunnel setup failed";

	if (why == NULL) {
		snprintf(buf, len, "%s", what);
		return;
	}
	/* the message was escaped when it was stored (l2tp_reason_from_msg) */
	snprintf(buf, len, "%s: result %u (%s)%s%.*s", what, why->result,
		 l2tp_stopccn_result_name(why->result), why->message.len ? ": " : "",
		 (int)why->message.len, why->message.p ? (const char *)why->message.p : "");
}

void pool_tunnel_down(struct tunnel *t, const struct l2tp_result *why)
{
	struct pool_member *m;
	struct pool *p;
	usl_time now;
	char label[CFG_NAME_MAX + 16], a[CFG_ADDR_STRLEN];

	if (!t->pool_counted)
		return;
	t->pool_counted = false;
	p = pool_find(t->pool);
	if ((m = member_find(p, &t->dest_cfg.sa)) == NULL)
		return;
	if (m->tunnels > 0)
		m->tunnels--;
	/*
	 * Ours: the operator's delete, a reload, a shutdown, a restart; and a
	 * tie break, where the peer only refused a second connection.
	 */
	if (t->closing || l2tpd.shutting_down || l2tpd.restarting ||
	    (why != NULL && why->result == L2TP_STOPCCN_ALREADY_EXISTS))
		return;
	failure_text(t, why, m->last_failure, sizeof(m->last_failure));
	m->last_failure_at = (int64_t)time(NULL);
	now = usl_timerset_now(l2tpd.timers);
	if (p->hold_down_ms == 0 || member_held(m, now))
		return;		/* logged once per hold-down */
	m->held_until = usl_time_add(now, usl_time_ms(p->hold_down_ms));
	m->held_until_unix = m->last_failure_at + (p->hold_down_ms + 999) / 1000;
	log_warnx("pool %s: member %s held down for %u s: tunnel %s: %s", p->name,
		  config_addr_str(&m->cfg.address, a, sizeof(a)), (p->hold_down_ms + 999) / 1000,
		  tunnel_label(t, label, sizeof(label)), m->last_failure);
}

void pool_tunnel_release(struct tunnel *t)
{
	struct pool_member *m;

	if (!t->pool_counted)
		return;
	t->pool_counted = false;
	m = member_find(pool_find(t->pool), &t->dest_cfg.sa);
	if (m != NULL && m->tunnels > 0)
		m->tunnels--;
}

unsigned pool_size(const char *name)
{
	const struct pool *p = pool_find(name);

	return p ? p->n_members : 0;
}

bool pool_available(const char *name)
{
	const struct pool *p = pool_find(name);
	usl_time now = usl_timerset_now(l2tpd.timers);

	for (unsigned i = 0; p != NULL && i < p->n_members; i++)
		if (!member_held(&p->members[i], now))
			return true;
	return false;
}

bool pool_lists(const struct l2tpd_config *c, const char *name, const struct sockaddr *dest)
{
	const struct lns_pool *lp = config_lns_pool(c, name);

	for (unsigned i = 0; lp != NULL && i < lp->n_members; i++)
		if (config_pool_member_is(&lp->members[i], dest))
			return true;
	return false;
}

json_object *pools_json(void)
{
	json_object *arr = json_object_new_array();
	usl_time now = usl_timerset_now(l2tpd.timers);
	char a[CFG_ADDR_STRLEN];

	for (unsigned i = 0; i < n_pools; i++) {
		const struct pool *p = &pools[i];
		json_object *o = json_object_new_object(), *ms = json_object_new_array();

		json_add_str(o, "name", p->name);
		/* seconds, as the configuration writes them: 60, or 2.5 */
		json_object_object_add(o, "hold_down", p->hold_down_ms % 1000 == 0 ?
				       json_object_new_int64(p->hold_down_ms / 1000) :
				       json_object_new_double(p->hold_down_ms / 1000.0));
		for (unsigned j = 0; j < p->n_members; j++) {
			const struct pool_member *m = &p->members[j];
			json_object *mo = json_object_new_object();

			json_add_str(mo, "address", config_addr_str(&m->cfg.address, a, sizeof(a)));
			json_add_int(mo, "weight", m->cfg.weight);
			json_add_int(mo, "tunnels", m->tunnels);
			json_object_object_add(mo, "up", json_object_new_boolean(!member_held(m, now)));
			json_object_object_add(mo, "held_down_until", member_held(m, now) ?
					       json_object_new_int64(m->held_until_unix) : NULL);
			json_object_object_add(mo, "last_failure", m->last_failure[0] ?
					       json_object_new_string(m->last_failure) : NULL);
			json_object_object_add(mo, "last_failure_at", m->last_failure_at ?
					       json_object_new_int64(m->last_failure_at) : NULL);
			json_object_array_add(ms, mo);
		}
		json_object_object_add(o, "members", ms);
		json_object_array_add(arr, o);
	}
	return arr;
}

void pool_foreach_member(void (*fn)(const char *pool, const char *member, unsigned tunnels,
				    bool up, void *arg), void *arg)
{
	usl_time now = usl_timerset_now(l2tpd.timers);
	char a[CFG_ADDR_STRLEN];

	for (unsigned i = 0; i < n_pools; i++)
		for (unsigned j = 0; j < pools[i].n_members; j++) {
			const struct pool_member *m = &pools[i].members[j];

			fn(pools[i].name, config_addr_str(&m->cfg.address, a, sizeof(a)), m->tunnels,
			   !member_held(m, now), arg);
		}
}
