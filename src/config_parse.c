/*
 * src/config_parse.c - the file's structure: its sections, the lists of groups
 * in them (names, duplicates, references between them) and the groups of
 * settings, each setting read by its table entry; then the checks that
 * involve several settings.
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "usl/suggest.h"

/* Sections in the order they are read and printed. */
enum { SEC_GROUP, SEC_LIST };
static const struct section {
	const char *name;
	int type;
	const struct opt *opts;
} sections[] = {
	{ "global", SEC_GROUP, global_opts },
	{ "tunnel_profiles", SEC_LIST, tunnel_profile_opts },
	{ "session_profiles", SEC_LIST, session_profile_opts },
	{ "peers", SEC_LIST, peer_opts },
	{ "peer_default", SEC_GROUP, peer_default_opts },
	{ "lns_pools", SEC_LIST, pool_opts },
	{ "tunnels", SEC_LIST, tunnel_opts },
	{ "hooks", SEC_GROUP, hook_opts },
	{ "snmp", SEC_GROUP, snmp_opts },
	{ NULL, 0, NULL }
};

/* ---- groups and lists ---- */

static const char *opt_names(const struct opt *opts, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (; opts->name && n < len; opts++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", opts->name);
	return buf;
}

static bool unknown_setting(struct pctx *p, const config_setting_t *s, const char *sec,
			    const struct opt *opts)
{
	const char *name = config_setting_name(s), *sugg = NULL, *home = NULL;
	char path[SETTING_PATH_MAX], valid[WHY_MAX * 2];
	unsigned best = UINT_MAX;
	const struct section *x;
	const struct opt *o;

	snprintf(path, sizeof(path), "%s.%s", sec, name);
	for (o = opts; o->name; o++)
		if (usl_suggest_close(name, o->name, &best))
			sugg = o->name;
	if (sugg)
		return fail(p, s, path, "unknown setting (did you mean '%s'?)", sugg);
	for (x = sections; x->name && !home; x++)
		if (opt_find(x->opts, name))
			home = x->name;
	if (home)
		return fail(p, s, path, "unknown setting here (it belongs in '%s'; valid here: %s)",
			    home, opt_names(opts, valid, sizeof(valid)));
	return fail(p, s, path, "unknown setting (valid: %s)", opt_names(opts, valid, sizeof(valid)));
}

/* Applies group g onto obj, setting by setting in file order. */
static bool parse_group(struct pctx *p, const config_setting_t *g, const char *sec,
			const struct opt *opts, void *obj)
{
	char path[SETTING_PATH_MAX];
	const struct opt *o;
	int i;

	for (i = 0; i < config_setting_length(g); i++) {
		const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);

		o = opt_find(opts, config_setting_name(s));
		if (!o)
			return unknown_setting(p, s, sec, opts);
		snprintf(path, sizeof(path), "%s.%s", sec, o->name);
		if (!(o->parse ? o->parse : parse_opt)(p, s, obj, path, o))
			return false;
	}
	for (o = opts; o->name; o++) {
		if (o->required && !config_setting_get_member(g, o->name)) {
			snprintf(path, sizeof(path), "%s.%s", sec, o->name);
			return fail(p, g, path, "missing (this setting is required)");
		}
	}
	return true;
}

struct list_spec {
	const char *sec;		/* "tunnel_profiles", "tunnels.sessions" */
	const char *what;		/* "tunnel profile": for messages */
	const struct opt *opts;
	size_t size;
	bool inherit;			/* [0] is "default", the others start as a copy of it */
	/* checks after element i is read; g is NULL for a built-in default */
	bool (*post)(struct pctx *p, void *arr, unsigned i, const config_setting_t *g);
	bool unnamed;			/* elements have no "name" (a key of their own) */
};

struct dup_key {
	const char *key;
	unsigned idx;
	const config_setting_t *s;
};

static int dup_key_cmp(const void *a, const void *b)
{
	const struct dup_key *x = a, *y = b;
	int r = strcmp(x->key, y->key);

	return r ? r : (x->idx > y->idx) - (x->idx < y->idx);
}

/* Sorts keys and fails at the first repeat in file order, naming the line of the first one. */
static bool dup_check(struct pctx *p, struct dup_key *k, unsigned n, const char *path,
		      const char *what)
{
	const struct dup_key *dup = NULL, *first = NULL;
	char buf[CFG_PATH_MAX * 2];
	const char *f1, *f2;
	unsigned i, j;

	qsort(k, n, sizeof(*k), dup_key_cmp);
	for (i = 0; i < n; i = j) {
		/* a run of equal keys, in file order: the second one is the repeat */
		for (j = i + 1; j < n && strcmp(k[j].key, k[i].key) == 0; j++)
			;
		if (j - i > 1 && (!dup || k[i + 1].idx < dup->idx)) {
			dup = &k[i + 1];
			first = &k[i];
		}
	}
	if (!dup)
		return true;
	f1 = config_setting_source_file(first->s);
	f2 = config_setting_source_file(dup->s);
	if (f1 && f2 && strcmp(f1, f2) != 0)	/* two files of include_dir, or one and the main */
		return fail(p, dup->s, path, "duplicate %s '%s' (first at %s:%u)", what, dup->key,
			    src_name(p, f1, buf, sizeof(buf)), config_setting_source_line(first->s));
	return fail(p, dup->s, path, "duplicate %s '%s' (first at line %u)", what, dup->key,
		    config_setting_source_line(first->s));
}

/*
 * Reads lists (n_lists of them, NULL: absent; the main file's, then those of
 * include_dir's files) into one new array *arr of *n elements, each
 * starting as tmpl (inherit: "default" starts as tmpl, the others as
 * "default").  *arr and *n are set before parsing, so config_free() cleans
 * up after a failure.  groups (optional) receives each element's group.
 */
static bool parse_list(struct pctx *p, const config_setting_t *const *lists, unsigned n_lists,
		       const struct list_spec *ls, const void *tmpl, void **arr, unsigned *n,
		       const config_setting_t ***groups)
{
	const config_setting_t *at = NULL, **el = NULL, **g = NULL;
	unsigned len = 0, count, i, k, def = UINT_MAX;
	char path[SETTING_PATH_MAX], why[WHY_MAX];
	struct dup_key *keys = NULL;
	bool ok = false;
	char *a;

	for (i = 0; i < n_lists; i++) {
		const config_setting_t *list = lists[i];

		if (!list)
			continue;
		if (!at)
			at = list;
		if (config_setting_type(list) != CONFIG_TYPE_LIST &&
		    !(config_setting_type(list) == CONFIG_TYPE_ARRAY &&
		      config_setting_length(list) == 0))
			return fail(p, list, ls->sec, "expected a list ( ) of groups { }, got %s",
				    type_name(list));
		len += (unsigned)config_setting_length(list);
	}
	el = calloc(len ? len : 1, sizeof(*el));
	keys = calloc(len ? len : 1, sizeof(*keys));
	if (!el || !keys) {
		fail(p, at, ls->sec, "out of memory");
		goto out;
	}
	for (i = 0, k = 0; i < n_lists; i++)
		for (int j = 0; lists[i] && j < config_setting_length(lists[i]); j++)
			el[k++] = config_setting_get_elem(lists[i], (unsigned)j);

	/* names first: every element needs one, unique, so references can be checked */
	snprintf(path, sizeof(path), "%s.name", ls->sec);
	for (i = 0; i < len; i++) {
		const config_setting_t *e = el[i], *ns;
		const char *name;

		if (config_setting_type(e) != CONFIG_TYPE_GROUP) {
			fail(p, e, ls->sec, "expected a group { } for each %s, got %s", ls->what,
			     type_name(e));
			goto out;
		}
		if (ls->unnamed)
			continue;
		ns = config_setting_get_member(e, "name");
		if (!ns) {
			fail(p, e, path, "missing (every %s needs a name)", ls->what);
			goto out;
		}
		if (!parse_string(p, ns, path, "letters, digits and - _ . : @ /", &name))
			goto out;
		if (strlen(name) >= CFG_NAME_MAX) {
			fail(p, ns, path, "too long: %zu characters (valid: at most %d)",
			     strlen(name), CFG_NAME_MAX - 1);
			goto out;
		}
		if (!check_name(name, why, sizeof(why))) {
			fail(p, ns, path, "%s", why);
			goto out;
		}
		keys[i] = (struct dup_key){ name, i, ns };
		if (ls->inherit && strcmp(name, "default") == 0)
			def = i;
	}
	if (!ls->unnamed && !dup_check(p, keys, len, path, "name"))
		goto out;

	count = len + (ls->inherit && def == UINT_MAX);
	a = calloc(count ? count : 1, ls->size);
	g = calloc(count ? count : 1, sizeof(*g));
	if (!a || !g) {
		free(a);
		fail(p, at, ls->sec, "out of memory");
		goto out;
	}
	*arr = a;
	*n = count;

	k = 0;
	if (ls->inherit) {
		memcpy(a, tmpl, ls->size);
		g[0] = def == UINT_MAX ? NULL : el[def];
		if (g[0] && !parse_group(p, g[0], ls->sec, ls->opts, a))
			goto out;
		if (ls->post && !ls->post(p, a, 0, g[0]))
			goto out;
		tmpl = a;
		k = 1;
	}
	for (i = 0; i < len; i++) {
		char *obj = a + (size_t)k * ls->size;

		if (i == def)
			continue;
		g[k] = el[i];
		memcpy(obj, tmpl, ls->size);
		if (!parse_group(p, g[k], ls->sec, ls->opts, obj))
			goto out;
		if (ls->post && !ls->post(p, a, k, g[k]))
			goto out;
		k++;
	}
	ok = true;
out:
	if (groups && g) {
		*groups = g;
		g = NULL;
	}
	free(g);
	free(keys);
	free(el);
	return ok;
}

/* A profile reference: must name an existing one. */
static bool check_ref(struct pctx *p, const config_setting_t *g, const char *sec, const char *key,
		      const char *name, bool tunnel)
{
	const struct l2tpd_config *c = p->c;
	unsigned n = tunnel ? c->n_tunnel_profiles : c->n_session_profiles, i, best = UINT_MAX;
	const char *sugg = NULL, *cand;
	char path[SETTING_PATH_MAX], valid[WHY_MAX];
	size_t l = 0;

	if (tunnel ? config_tunnel_profile(c, name) != NULL : config_session_profile(c, name) != NULL)
		return true;
	valid[0] = '\0';
	for (i = 0; i < n; i++) {
		cand = tunnel ? c->tunnel_profiles[i].name : c->session_profiles[i].name;
		if (l < sizeof(valid))
			l += (size_t)snprintf(valid + l, sizeof(valid) - l, "%s%s", i ? ", " : "", cand);
		if (usl_suggest_close(name, cand, &best))
			sugg = cand;
	}
	snprintf(path, sizeof(path), "%s.%s", sec, key);
	if (sugg)
		return fail(p, where(g, key), path, "unknown %s profile '%s' (did you mean '%s'? "
			    "valid: %s)", tunnel ? "tunnel" : "session", name, sugg, valid);
	return fail(p, where(g, key), path, "unknown %s profile '%s' (valid: %s)",
		    tunnel ? "tunnel" : "session", name, valid);
}

static bool tunnel_profile_post(struct pctx *p, void *arr, unsigned i, const config_setting_t *g)
{
	struct tunnel_profile *tp = (struct tunnel_profile *)arr + i;
	char a[32], b[32];

	if (i > 0 && !has(g, "description"))	/* describes "default" alone */
		tp->description[0] = '\0';
	/* sccrq_max_retries follows max_retries unless this profile or "default" sets it */
	if (!has(g, "sccrq_max_retries")) {
		if (i == 0 || !p->sccrq_in_default)
			tp->sccrq_max_retries = tp->max_retries;
	} else if (i == 0) {
		p->sccrq_in_default = true;
	}
	if (tp->retransmit_cap_ms < tp->retransmit_initial_ms)
		return fail(p, where2(g, "retransmit_cap", "retransmit_initial"),
			    "tunnel_profiles.retransmit_cap", "%s seconds is less than "
			    "retransmit_initial %s (valid: retransmit_cap >= retransmit_initial)",
			    secs_fmt(tp->retransmit_cap_ms, a, sizeof(a)),
			    secs_fmt(tp->retransmit_initial_ms, b, sizeof(b)));
	if (tp->hide_avps && tp->digest == CFG_DIGEST_NONE)
		return fail(p, where2(g, "hide_avps", "digest"), "tunnel_profiles.hide_avps",
			    "hiding AVPs needs a digest (valid: digest \"md5\" or \"sha1\" with a "
			    "secret, or hide_avps = false)");
	return true;
}

static bool session_profile_post(struct pctx *p, void *arr, unsigned i, const config_setting_t *g)
{
	struct session_profile *sp = (struct session_profile *)arr + i;

	if (i > 0 && !has(g, "description"))	/* describes "default" alone */
		sp->description[0] = '\0';
	if (sp->data_seq != 0 && sp->l2spec == 0)
		return fail(p, where2(g, "data_seq", "l2spec"), "session_profiles.data_seq",
			    "'%s' needs the L2-Specific Sublayer, which carries the sequence "
			    "numbers (valid: l2spec = \"default\", or data_seq = \"none\")",
			    config_data_seq_name(sp->data_seq));
	if (sp->vlan_id && sp->pw_type != L2TP_PW_ETH_VLAN)
		return fail(p, where2(g, "vlan_id", "pw_type"), "session_profiles.vlan_id",
			    "%u given for pw_type '%s' (valid: 0 unless pw_type is \"eth_vlan\")",
			    sp->vlan_id, config_pw_type_name(sp->pw_type));
	if (sp->pppd_options[0] && sp->pw_type != L2TP_PW_PPP)
		return fail(p, where2(g, "pppd_options", "pw_type"), "session_profiles.pppd_options",
			    "set for pw_type '%s' (valid: \"\" unless pw_type is \"ppp\")",
			    config_pw_type_name(sp->pw_type));
	return true;
}

static bool peer_post(struct pctx *p, void *arr, unsigned i, const config_setting_t *g)
{
	struct peer_profile *pp = (struct peer_profile *)arr + i;

	return check_ref(p, g, "peers", "tunnel_profile", pp->tunnel_profile, true) &&
	       check_ref(p, g, "peers", "session_profile", pp->session_profile, false);
}

/* A pool reference: must name an lns_pools entry. */
static bool check_pool_ref(struct pctx *p, const config_setting_t *g, const char *name)
{
	const struct l2tpd_config *c = p->c;
	char valid[WHY_MAX];
	const char *sugg = NULL;
	unsigned i, best = UINT_MAX;
	size_t l = 0;

	if (config_lns_pool(c, name) != NULL)
		return true;
	valid[0] = '\0';
	for (i = 0; i < c->n_lns_pools; i++) {
		if (l < sizeof(valid))
			l += (size_t)snprintf(valid + l, sizeof(valid) - l, "%s%s", i ? ", " : "",
					      c->lns_pools[i].name);
		if (usl_suggest_close(name, c->lns_pools[i].name, &best))
			sugg = c->lns_pools[i].name;
	}
	if (sugg)
		return fail(p, where(g, "pool"), "tunnels.pool", "unknown pool '%s' (did you mean "
			    "'%s'? valid: %s)", name, sugg, valid);
	return fail(p, where(g, "pool"), "tunnels.pool", "unknown pool '%s' (valid: %s)", name,
		    c->n_lns_pools ? valid : "the name of an lns_pools entry; there is none");
}

/* 'local' against the peer's family, or every member's of its pool. */
static bool check_local_family(struct pctx *p, const config_setting_t *g,
			       const struct static_tunnel *t)
{
	const struct lns_pool *lp = t->pool[0] ? config_lns_pool(p->c, t->pool) : NULL;
	int lf = t->local.ss.ss_family;
	unsigned n = lp ? lp->n_members : 1;

	for (unsigned i = 0; lf != AF_UNSPEC && i < n; i++) {
		int pf = lp ? lp->members[i].address.ss.ss_family : t->peer.ss.ss_family;

		if (pf != lf)
			return fail(p, where(g, "local"), "tunnels.local", "an IPv%c address for an "
				    "IPv%c %s (valid: the same address family as %s, or \"\")",
				    lf == AF_INET ? '4' : '6', pf == AF_INET ? '4' : '6',
				    lp ? "pool member" : "peer",
				    lp ? "every member of the pool" : "'peer'");
	}
	return true;
}

static bool tunnel_post(struct pctx *p, void *arr, unsigned i, const config_setting_t *g)
{
	struct static_tunnel *t = (struct static_tunnel *)arr + i;
	const struct tunnel_profile *tp;
	bool has_peer = t->peer.ss.ss_family != AF_UNSPEC;

	if (!check_ref(p, g, "tunnels", "profile", t->profile, true))
		return false;
	tp = config_tunnel_profile(p->c, t->profile);
	if (has_peer && t->pool[0])
		return fail(p, where(g, "pool"), "tunnels.pool", "'pool' and 'peer' both set "
			    "(valid: one of them: 'peer' for one LNS, 'pool' for an lns_pools entry)");
	if (!has_peer && !t->pool[0])
		return fail(p, where2(g, "peer", "name"), "tunnels.peer", "missing (valid: 'peer', "
			    "an address, or 'pool', the name of an lns_pools entry)");
	if (t->pool[0] && !check_pool_ref(p, g, t->pool))
		return false;
	if (!check_local_family(p, g, t))
		return false;
	if (has_peer && addr_port(&t->peer) == 0)
		addr_set_port(&t->peer, tp->udp_port);
	return true;
}

static bool session_post(struct pctx *p, void *arr, unsigned i, const config_setting_t *g)
{
	struct static_session *ss = (struct static_session *)arr + i;

	if (!has(g, "remote_end_id"))
		snprintf(ss->remote_end_id, sizeof(ss->remote_end_id), "%s", ss->name);
	return check_ref(p, g, "tunnels.sessions", "profile", ss->profile, false);
}

static const struct list_spec tunnel_profile_list = {
	"tunnel_profiles", "tunnel profile", tunnel_profile_opts, sizeof(struct tunnel_profile),
	true, tunnel_profile_post, false
};
static const struct list_spec session_profile_list = {
	"session_profiles", "session profile", session_profile_opts,
	sizeof(struct session_profile), true, session_profile_post, false
};
static const struct list_spec peer_list = {
	"peers", "peer", peer_opts, sizeof(struct peer_profile), false, peer_post, false
};
static const struct list_spec tunnel_list = {
	"tunnels", "tunnel", tunnel_opts, sizeof(struct static_tunnel), false, tunnel_post, false
};
static bool match_post(struct pctx *p, void *arr, unsigned i, const config_setting_t *g)
{
	struct session_match *m = (struct session_match *)arr + i;

	return !m->profile[0] || check_ref(p, g, "peers.sessions", "profile", m->profile, false);
}

static const struct list_spec match_list = {
	"peers.sessions", "session", match_opts, sizeof(struct session_match), false, match_post,
	true
};
static const struct list_spec session_list = {
	"tunnels.sessions", "session", session_opts, sizeof(struct static_session), false,
	session_post, false
};

/* Two members that could be one LNS: the same address, and a port that does not tell them apart. */
static bool members_clash(const struct lns_pool_member *a, const struct lns_pool_member *b)
{
	return config_pool_member_is(a, (const struct sockaddr *)&b->address.ss) ||
	       config_pool_member_is(b, (const struct sockaddr *)&a->address.ss);
}

static bool pool_post(struct pctx *p, void *arr, unsigned i, const config_setting_t *g)
{
	struct lns_pool *lp = (struct lns_pool *)arr + i;
	const config_setting_t *ms = where(g, "members");
	char buf[CFG_ADDR_STRLEN];

	if (lp->n_members == 0)
		return fail(p, ms, "lns_pools.members", "pool '%s' has no members (valid: at least "
			    "one { address = \"192.0.2.2\"; weight = 1; })", lp->name);
	for (unsigned j = 1; j < lp->n_members; j++) {
		for (unsigned k = 0; k < j; k++) {
			const config_setting_t *e;

			if (!members_clash(&lp->members[j], &lp->members[k]))
				continue;
			e = ms ? config_setting_get_elem(ms, j) : NULL;
			return fail(p, e ? where(e, "address") : ms, "lns_pools.members.address",
				    "'%s' is listed twice in pool '%s' (first as member %u; valid: "
				    "each LNS once)", addr_fmt(&lp->members[j].address, 0, buf,
				    sizeof(buf)), lp->name, k + 1);
		}
	}
	return true;
}

static const struct list_spec pool_list = {
	"lns_pools", "pool", pool_opts, sizeof(struct lns_pool), false, pool_post, false
};
static const struct list_spec member_list = {
	"lns_pools.members", "member", member_opts, sizeof(struct lns_pool_member), false, NULL,
	true
};

/*
 * A list of groups in which one string member must be unique: sessions,
 * which the peer tells apart by Remote End ID.  *arr is set even on failure
 * (the caller's to free).
 */
static bool parse_unique_list(struct pctx *p, const config_setting_t *s,
			      const struct list_spec *ls, const void *tmpl, void **arr, unsigned *n,
			      size_t key_off, const char *key)
{
	const config_setting_t **g = NULL;
	char path[SETTING_PATH_MAX];
	struct dup_key *keys;
	bool ok;

	ok = parse_list(p, &s, 1, ls, tmpl, arr, n, &g);
	if (ok && *n) {
		keys = calloc(*n, sizeof(*keys));
		if (!keys) {
			free(g);
			return fail(p, s, ls->sec, "out of memory");
		}
		for (unsigned i = 0; i < *n; i++)
			keys[i] = (struct dup_key){ (const char *)*arr + i * ls->size + key_off, i,
						    where(g[i], key) };
		snprintf(path, sizeof(path), "%s.%s", ls->sec, key);
		ok = dup_check(p, keys, *n, path, key);
		free(keys);
	}
	free(g);
	return ok;
}

bool parse_sessions(struct pctx *p, const config_setting_t *s, void *obj,
		    const char *path, const struct opt *o)
{
	struct static_tunnel *t = obj;
	struct static_session tmpl;
	void *arr = NULL;
	bool ok;

	(void)path;
	(void)o;
	memset(&tmpl, 0, sizeof(tmpl));
	snprintf(tmpl.profile, sizeof(tmpl.profile), "default");
	tmpl.revert = true;
	tmpl.revert_delay_ms = 30000;
	ok = parse_unique_list(p, s, &session_list, &tmpl, &arr, &t->n_sessions,
			       offsetof(struct static_session, remote_end_id), "remote_end_id");
	t->sessions = arr;
	return ok;
}

bool parse_pool_members(struct pctx *p, const config_setting_t *s, void *obj,
			const char *path, const struct opt *o)
{
	struct lns_pool *lp = obj;
	struct lns_pool_member tmpl;
	void *arr = NULL;
	bool ok;

	(void)path;
	(void)o;
	memset(&tmpl, 0, sizeof(tmpl));
	tmpl.weight = 1;
	free(lp->members);	/* a repeated setting */
	lp->members = NULL;
	ok = parse_list(p, &s, 1, &member_list, &tmpl, &arr, &lp->n_members, NULL);
	lp->members = arr;
	return ok;
}

bool parse_peer_sessions(struct pctx *p, const config_setting_t *s, void *obj,
			 const char *path, const struct opt *o)
{
	struct peer_profile *pp = obj;
	struct session_match tmpl;
	void *arr = NULL;
	bool ok;

	(void)path;
	(void)o;
	memset(&tmpl, 0, sizeof(tmpl));
	free(pp->sessions);	/* a copy of the template's (NULL), or a repeated setting */
	pp->sessions = NULL;
	ok = parse_unique_list(p, s, &match_list, &tmpl, &arr, &pp->n_sessions,
			       offsetof(struct session_match, remote_end_id), "remote_end_id");
	pp->sessions = arr;
	return ok;
}

/* Every backup tunnel a static session names is another static tunnel, named once. */
static bool check_backups(struct pctx *p)
{
	const struct l2tpd_config *c = p->c;

	for (unsigned i = 0; i < c->n_tunnels; i++) {
		const struct static_tunnel *t = &c->tunnels[i];
		const config_setting_t *list = where(p->tun_groups ? p->tun_groups[i] : NULL,
						     "sessions");

		for (unsigned j = 0; j < t->n_sessions; j++) {
			const struct static_session *ss = &t->sessions[j];
			const config_setting_t *g = list ? config_setting_get_elem(list, j) : NULL;
			const config_setting_t *at = where(g, "backup");

			for (unsigned k = 0; k < ss->n_backup; k++) {
				const char *b = ss->backup[k];

				if (strcmp(b, t->name) == 0)
					return fail(p, at, "tunnels.sessions.backup", "'%s' is the "
						    "session's own tunnel (valid: another static "
						    "tunnel)", b);
				if (config_static_tunnel(c, b) == NULL)
					return fail(p, at, "tunnels.sessions.backup", "no static "
						    "tunnel named '%s' (valid: the name of one in "
						    "'tunnels')", b);
				for (unsigned m = 0; m < k; m++)
					if (strcmp(ss->backup[m], b) == 0)
						return fail(p, at, "tunnels.sessions.backup", "'%s' "
							    "is listed twice", b);
			}
		}
	}
	return true;
}

/* ---- whole file ---- */

static bool parse_global(struct pctx *p, const config_setting_t *g)
{
	struct l2tpd_config *c = p->c;
	unsigned i, j;

	if (g && !parse_group(p, g, "global", global_opts, c))
		return false;
	if (!p->listen_setting) {
		listen_defaults(c);
	} else {
		for (i = 0; i < c->n_listen; i++)
			if (addr_port(&c->listen[i]) == 0)
				addr_set_port(&c->listen[i], c->udp_port);
		for (i = 0; i < c->n_listen; i++)
			for (j = 0; j < i; j++)
				if (addr_equal(&c->listen[i], &c->listen[j])) {
					char buf[CFG_ADDR_STRLEN];

					return fail(p, p->listen_setting, "global.listen",
						    "'%s' is listed twice (with udp_port %u)",
						    config_addr_str(&c->listen[i], buf, sizeof(buf)),
						    c->udp_port);
				}
	}
	if (!c->hostname[0])
		hostname_default(c);
	if ((c->ha_listen[0] || c->ha_peer[0]) && !c->ha_secret[0])
		return fail(p, g ? config_setting_get_member(g, c->ha_listen[0] ? "ha_listen" : "ha_peer")
			    : NULL, "global.ha_secret",
			    "an active/standby pair needs ha_secret (the records' key), the same on both boxes");
	return true;
}

static bool needs_secret(const struct tunnel_profile *tp)
{
	return tp->digest != CFG_DIGEST_NONE || tp->hide_avps;
}

/* A peer that accepts tunnels with this profile, with a secret of its own. */
static bool peer_brings_secret(const struct l2tpd_config *c, const struct tunnel_profile *tp)
{
	unsigned i;

	for (i = 0; i < c->n_peers; i++)
		if (c->peers[i].accept && c->peers[i].secret[0] &&
		    !strcmp(c->peers[i].tunnel_profile, tp->name))
			return true;
	return c->peer_default.accept && c->peer_default.secret[0] &&
	       !strcmp(c->peer_default.tunnel_profile, tp->name);
}

/*
 * A digest (or hidden AVPs) needs a secret from the profile, the global
 * section, or the peer entry that accepted the tunnel.
 */
static bool check_secrets(struct pctx *p)
{
	const struct l2tpd_config *c = p->c;
	unsigned i;

	for (i = 0; i < c->n_tunnel_profiles; i++) {
		const struct tunnel_profile *tp = &c->tunnel_profiles[i];
		const config_setting_t *g = p->tp_groups[i];

		if (!needs_secret(tp) || tp->secret[0] || c->secret[0] || peer_brings_secret(c, tp))
			continue;
		if (!has(g, "digest") && !has(g, "hide_avps"))
			g = p->tp_groups[0];	/* inherited from "default" */
		return fail(p, where2(g, "digest", "hide_avps"), "tunnel_profiles.digest",
			    "'%s' needs a secret and none is set (valid: 'secret' in tunnel "
			    "profile '%s', in 'global', or in the peers using it)",
			    config_digest_name(tp->digest), tp->name);
	}
	for (i = 0; i <= c->n_peers; i++) {
		const struct peer_profile *pp = i < c->n_peers ? &c->peers[i] : &c->peer_default;
		const config_setting_t *g = i < c->n_peers ? p->peer_groups[i] : p->peer_default_group;
		const char *sec = i < c->n_peers ? "peers.secret" : "peer_default.secret";
		const struct tunnel_profile *tp = config_tunnel_profile(c, pp->tunnel_profile);

		if (!pp->accept || !needs_secret(tp) || config_secret(c, tp, pp)[0])
			continue;
		return fail(p, where2(g, "tunnel_profile", "accept"), sec, "tunnel profile '%s' uses "
			    "digest '%s' and no secret is set (valid: 'secret' here, in the "
			    "profile, or in 'global')", tp->name, config_digest_name(tp->digest));
	}
	for (i = 0; i < c->n_tunnels; i++) {
		const struct static_tunnel *t = &c->tunnels[i];
		const struct tunnel_profile *tp = config_tunnel_profile(c, t->profile);

		if (!needs_secret(tp) || config_secret(c, tp, NULL)[0])
			continue;
		return fail(p, where(p->tun_groups[i], "profile"), "tunnels.profile", "tunnel "
			    "profile '%s' uses digest '%s' and neither it nor 'global' has a "
			    "secret (valid: set 'secret' in one of them)", tp->name,
			    config_digest_name(tp->digest));
	}
	return true;
}

#define N_SECTIONS	(sizeof(sections) / sizeof(sections[0]) - 1)

/*
 * The sections of one file: roots[0] is the main file, the others are
 * include_dir's, which may only add to the lists.  lists[i * n + r] is
 * section i of root r (NULL: not there).
 */
static bool sort_sections(struct pctx *p, const config_setting_t *const *roots, unsigned n,
			  unsigned r, const config_setting_t **lists)
{
	const config_setting_t *root = roots[r];
	char valid[WHY_MAX];
	unsigned i, best = UINT_MAX;
	int k;

	for (k = 0; k < config_setting_length(root); k++) {
		const config_setting_t *s = config_setting_get_elem(root, (unsigned)k);
		const char *name = config_setting_name(s), *sugg = NULL;
		size_t l = 0;

		for (i = 0; sections[i].name; i++)
			if (!strcmp(sections[i].name, name))
				break;
		if (sections[i].name && r > 0 && sections[i].type != SEC_LIST)
			return fail(p, s, name, "not allowed in a file of global.include_dir "
				    "(valid there: tunnel_profiles, session_profiles, peers, "
				    "lns_pools, tunnels)");
		if (sections[i].name) {
			lists[i * n + r] = s;
			if (sections[i].type == SEC_GROUP &&
			    config_setting_type(s) != CONFIG_TYPE_GROUP)
				return fail(p, s, name, "expected a group { }, got %s",
					    type_name(s));
			continue;
		}
		valid[0] = '\0';
		for (i = 0; sections[i].name; i++) {
			if (l < sizeof(valid))
				l += (size_t)snprintf(valid + l, sizeof(valid) - l, "%s%s",
						      i ? ", " : "", sections[i].name);
			if (usl_suggest_close(name, sections[i].name, &best))
				sugg = sections[i].name;
		}
		if (sugg)
			return fail(p, s, name, "unknown section (did you mean '%s'?)", sugg);
		return fail(p, s, name, "unknown section (valid: %s)", valid);
	}
	return true;
}

static bool parse_sections(struct pctx *p, const config_setting_t *const *sec,
			   const config_setting_t *const *lists, unsigned nr);

bool parse_root(struct pctx *p, const config_setting_t *const *roots, unsigned nr)
{
	const config_setting_t *sec[N_SECTIONS], **lists;
	unsigned i, r;
	bool ok = true;

	lists = calloc(N_SECTIONS * nr, sizeof(*lists));
	if (!lists)
		return fail(p, NULL, "global", "out of memory");
	for (r = 0; ok && r < nr; r++)
		ok = sort_sections(p, roots, nr, r, lists);
	for (i = 0; i < N_SECTIONS; i++)
		sec[i] = lists[i * nr];
	ok = ok && parse_sections(p, sec, lists, nr);
	free(lists);
	return ok;
}

/* sec: the main file's sections; lists: every file's, as sort_sections() left them. */
static bool parse_sections(struct pctx *p, const config_setting_t *const *sec,
			   const config_setting_t *const *lists, unsigned nr)
{
	struct l2tpd_config *c = p->c;
	struct tunnel_profile tp0;
	struct session_profile sp0;
	struct peer_profile peer0;
	struct static_tunnel t0;
	struct lns_pool lp0;
	struct dup_key *keys;
	char (*prefixes)[INET6_ADDRSTRLEN + 8];
	void *arr = NULL;
	unsigned i;
	bool ok;

	if (!parse_global(p, sec[0]))
		return false;

	tunnel_profile_defaults(&tp0);
	free(c->tunnel_profiles);
	c->tunnel_profiles = NULL;
	c->n_tunnel_profiles = 0;
	if (!parse_list(p, &lists[1 * nr], nr, &tunnel_profile_list, &tp0, &arr,
			&c->n_tunnel_profiles,
			&p->tp_groups)) {
		c->tunnel_profiles = arr;
		return false;
	}
	c->tunnel_profiles = arr;

	session_profile_defaults(&sp0);
	free(c->session_profiles);
	c->session_profiles = NULL;
	c->n_session_profiles = 0;
	arr = NULL;
	if (!parse_list(p, &lists[2 * nr], nr, &session_profile_list, &sp0, &arr,
			&c->n_session_profiles,
			&p->sp_groups)) {
		c->session_profiles = arr;
		return false;
	}
	c->session_profiles = arr;

	peer_defaults(&peer0, true);
	arr = NULL;
	if (!parse_list(p, &lists[3 * nr], nr, &peer_list, &peer0, &arr, &c->n_peers,
			&p->peer_groups)) {
		c->peers = arr;
		return false;
	}
	c->peers = arr;
	/* two entries for one prefix: which one applies would be a matter of order */
	keys = calloc(c->n_peers ? c->n_peers : 1, sizeof(*keys));
	prefixes = calloc(c->n_peers ? c->n_peers : 1, sizeof(*prefixes));
	ok = keys && prefixes;
	for (i = 0; ok && i < c->n_peers; i++) {
		config_prefix_str(&c->peers[i].match, prefixes[i], sizeof(prefixes[i]));
		keys[i] = (struct dup_key){ prefixes[i], i, where(p->peer_groups[i], "match") };
	}
	ok = ok ? dup_check(p, keys, c->n_peers, "peers.match", "match")
		: fail(p, sec[3], "peers", "out of memory");
	free(keys);
	free(prefixes);
	if (!ok)
		return false;

	p->peer_default_group = sec[4];
	if (sec[4] && !parse_group(p, sec[4], "peer_default", peer_default_opts, &c->peer_default))
		return false;
	if (!check_ref(p, sec[4], "peer_default", "tunnel_profile", c->peer_default.tunnel_profile,
		       true) ||
	    !check_ref(p, sec[4], "peer_default", "session_profile",
		       c->peer_default.session_profile, false))
		return false;

	memset(&lp0, 0, sizeof(lp0));
	lp0.hold_down_ms = 60000;
	arr = NULL;
	if (!parse_list(p, &lists[5 * nr], nr, &pool_list, &lp0, &arr, &c->n_lns_pools,
			&p->pool_groups)) {
		c->lns_pools = arr;
		return false;
	}
	c->lns_pools = arr;

	memset(&t0, 0, sizeof(t0));
	snprintf(t0.profile, sizeof(t0.profile), "default");
	arr = NULL;
	if (!parse_list(p, &lists[6 * nr], nr, &tunnel_list, &t0, &arr, &c->n_tunnels,
			&p->tun_groups)) {
		c->tunnels = arr;
		return false;
	}
	c->tunnels = arr;
	if (c->n_tunnels > c->max_tunnels)
		return fail(p, sec[6], "tunnels", "%u static tunnels but global.max_tunnels is %u "
			    "(valid: at most max_tunnels)", c->n_tunnels, c->max_tunnels);
	if (c->reserved_tunnels >= c->max_tunnels)
		return fail(p, sec[0] ? config_setting_get_member(sec[0], "reserved_tunnels") : NULL,
			    "global.reserved_tunnels", "%u reserved of global.max_tunnels "
			    "%u (valid: fewer than max_tunnels)", c->reserved_tunnels, c->max_tunnels);

	if (!check_backups(p))
		return false;
	if (sec[7] && !parse_group(p, sec[7], "hooks", hook_opts, &c->hooks))
		return false;
	if (sec[8] && !parse_group(p, sec[8], "snmp", snmp_opts, &c->snmp))
		return false;
#ifndef HAVE_SNMP
	/* Accepted, it would promise a subagent that this binary cannot start. */
	if (c->snmp.enabled)
		return fail(p, config_setting_get_member(sec[8], "enabled"), "snmp.enabled",
			    "this l2tpv3d is built without SNMP support (valid: false; the "
			    "AgentX subagent needs a build with configure --with-snmp)");
#endif
	return check_secrets(p);
}
