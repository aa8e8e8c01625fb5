/*
 * src/config.c - the l2tpv3d configuration file: parse, check, print.
 *
 * libconfig does the syntax.  Everything after that is driven by one table
 * per section (struct opt: setting name, kind, field, range), walked once
 * to parse a group and once to print it, so what is accepted and what is
 * printed cannot drift apart.  Parsing fills a fresh struct l2tpd_config;
 * the first problem stops it and is reported as
 *
 *	FILE:LINE: setting 'section.setting': what is wrong (valid: ...)
 *
 * Checks that involve several settings (a profile named by a peer, a digest
 * and the secrets that could serve it) run after every section is read.
 *
 * This file loads (config_load(): the main file and include_dir's), holds
 * the built-in defaults and the parse state with its errors, and answers
 * lookups in a loaded configuration.  The rest of the parser:
 *
 *	config_value.c	addresses; integers and times as written; a setting
 *			read by its table entry
 *	config_table.c	the tables, the words and checks of their values, the
 *			settings with a parse and print of their own
 *	config_parse.c	sections, lists of groups, groups; the checks across
 *			settings
 *	config_print.c	the configuration printed back
 *	config_int.h	what they share (only they include it)
 */
#include <errno.h>
#include <fnmatch.h>
#include <libconfig.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_int.h"

#ifndef RUNSTATEDIR
#define RUNSTATEDIR "/run"
#endif

/* ---- lookups in a loaded configuration ---- */

static bool prefix_match(const struct cfg_prefix *p, int family, const uint8_t *addr)
{
	unsigned full = p->plen / 8, rest = p->plen % 8;

	if (p->family != family)
		return false;
	if (memcmp(p->addr, addr, full) != 0)
		return false;
	if (rest) {
		uint8_t mask = (uint8_t)(0xff << (8 - rest));

		if ((p->addr[full] & mask) != (addr[full] & mask))
			return false;
	}
	return true;
}

static bool is_pattern(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/*
 * The Remote End ID is the peer's bytes: an exact entry matches them all,
 * a pattern only an ID without NUL (fnmatch sees a C string).  Entries are
 * few per peer: a scan.
 */
const struct session_match *config_match_session(const struct peer_profile *pp,
						 const uint8_t *reid, size_t len)
{
	char id[CFG_NAME_MAX];
	unsigned i;

	if (reid == NULL)	/* no Remote End ID AVP: the empty ID ("*" matches it) */
		reid = (const uint8_t *)"", len = 0;
	for (i = 0; i < pp->n_sessions; i++) {
		const struct session_match *m = &pp->sessions[i];

		if (!is_pattern(m->remote_end_id) && strlen(m->remote_end_id) == len &&
		    memcmp(m->remote_end_id, reid, len) == 0)
			return m;
	}
	if (len >= sizeof(id) || memchr(reid, '\0', len) != NULL)
		return NULL;
	memcpy(id, reid, len);
	id[len] = '\0';
	for (i = 0; i < pp->n_sessions; i++) {
		const struct session_match *m = &pp->sessions[i];

		if (is_pattern(m->remote_end_id) && fnmatch(m->remote_end_id, id, FNM_NOESCAPE) == 0)
			return m;
	}
	return NULL;
}

const struct peer_profile *config_peer_by_name(const struct l2tpd_config *c, const char *name)
{
	unsigned i;

	if (name == NULL || strcmp(name, c->peer_default.name) == 0)
		return &c->peer_default;
	for (i = 0; i < c->n_peers; i++)
		if (strcmp(c->peers[i].name, name) == 0)
			return &c->peers[i];
	return NULL;
}

/*
 * Longest prefix wins; "any" ranks below a /0 of either family.  An IPv4
 * peer seen through a dual-stack socket (::ffff:a.b.c.d) matches as IPv4.
 * Peers are few, so a scan is enough.
 */
const struct peer_profile *config_match_peer(const struct l2tpd_config *c,
					     const struct sockaddr *addr)
{
	const struct peer_profile *best = NULL;
	int family, best_score = -1;
	uint8_t a[16];
	unsigned i;

	if (!addr)
		return &c->peer_default;
	if (addr->sa_family == AF_INET) {
		struct sockaddr_in sin;

		memcpy(&sin, addr, sizeof(sin));
		memcpy(a, &sin.sin_addr, 4);
		family = AF_INET;
	} else if (addr->sa_family == AF_INET6) {
		struct sockaddr_in6 sin6;

		memcpy(&sin6, addr, sizeof(sin6));
		if (IN6_IS_ADDR_V4MAPPED(&sin6.sin6_addr)) {
			memcpy(a, &sin6.sin6_addr.s6_addr[12], 4);
			family = AF_INET;
		} else {
			memcpy(a, &sin6.sin6_addr, 16);
			family = AF_INET6;
		}
	} else {
		return &c->peer_default;
	}
	for (i = 0; i < c->n_peers; i++) {
		const struct peer_profile *pp = &c->peers[i];
		int score;

		if (pp->match.family == AF_UNSPEC)
			score = 0;
		else if (prefix_match(&pp->match, family, a))
			score = pp->match.plen + 1;
		else
			continue;
		if (score > best_score) {
			best = pp;
			best_score = score;
		}
	}
	return best ? best : &c->peer_default;
}

const struct static_tunnel *config_static_tunnel(const struct l2tpd_config *c, const char *name)
{
	for (unsigned i = 0; i < c->n_tunnels; i++)
		if (strcmp(c->tunnels[i].name, name) == 0)
			return &c->tunnels[i];
	return NULL;
}

const struct static_session *config_static_session(const struct static_tunnel *st,
						   const char *name)
{
	for (unsigned i = 0; i < st->n_sessions; i++)
		if (strcmp(st->sessions[i].name, name) == 0)
			return &st->sessions[i];
	return NULL;
}

const struct tunnel_profile *config_tunnel_profile(const struct l2tpd_config *c, const char *name)
{
	unsigned i;

	if (!name || !*name)
		return &c->tunnel_profiles[0];
	for (i = 0; i < c->n_tunnel_profiles; i++)
		if (strcmp(c->tunnel_profiles[i].name, name) == 0)
			return &c->tunnel_profiles[i];
	return NULL;
}

const struct session_profile *config_session_profile(const struct l2tpd_config *c, const char *name)
{
	unsigned i;

	if (!name || !*name)
		return &c->session_profiles[0];
	for (i = 0; i < c->n_session_profiles; i++)
		if (strcmp(c->session_profiles[i].name, name) == 0)
			return &c->session_profiles[i];
	return NULL;
}

const struct lns_pool *config_lns_pool(const struct l2tpd_config *c, const char *name)
{
	for (unsigned i = 0; name != NULL && i < c->n_lns_pools; i++)
		if (strcmp(c->lns_pools[i].name, name) == 0)
			return &c->lns_pools[i];
	return NULL;
}

bool config_pool_member_is(const struct lns_pool_member *m, const struct sockaddr *a)
{
	const struct cfg_addr *ma = &m->address;
	uint16_t port = addr_port(ma);

	if (a->sa_family != ma->ss.ss_family)
		return false;
	if (a->sa_family == AF_INET) {
		const struct sockaddr_in *x = (const struct sockaddr_in *)a;
		const struct sockaddr_in *y = (const struct sockaddr_in *)&ma->ss;

		return x->sin_addr.s_addr == y->sin_addr.s_addr &&
		       (port == 0 || x->sin_port == y->sin_port);
	}
	if (a->sa_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const struct sockaddr_in6 *)a;
		const struct sockaddr_in6 *y = (const struct sockaddr_in6 *)&ma->ss;

		return memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) == 0 &&
		       (port == 0 || x->sin6_port == y->sin6_port);
	}
	return false;
}

const char *config_secret(const struct l2tpd_config *c, const struct tunnel_profile *tp,
			  const struct peer_profile *peer)
{
	if (peer && peer->secret[0])
		return peer->secret;
	if (tp && tp->secret[0])
		return tp->secret;
	return c->secret;
}

/* ---- built-in defaults ---- */

void tunnel_profile_defaults(struct tunnel_profile *tp)
{
	memset(tp, 0, sizeof(*tp));
	snprintf(tp->name, sizeof(tp->name), "default");
	tp->encap = L2TP_ENCAP_UDP;
	tp->udp_src_port = CFG_SPORT_EPHEMERAL;
	tp->udp_port = 1701;
	tp->hello_interval_ms = 60000;
	tp->setup_timeout_ms = 60000;
	tp->session_setup_timeout_ms = 60000;
	tp->retransmit_initial_ms = 1000;
	tp->retransmit_cap_ms = 8000;
	tp->max_retries = 10;
	tp->sccrq_max_retries = 10;
	tp->sccrp_max_retries = 4;
	tp->delayed_ack_ms = 100;
	tp->rx_window = 16;
	tp->digest = CFG_DIGEST_NONE;
	tp->recovery_time_ms = 30000;
}

void session_profile_defaults(struct session_profile *sp)
{
	memset(sp, 0, sizeof(*sp));
	snprintf(sp->name, sizeof(sp->name), "default");
	sp->pw_type = L2TP_PW_ETH;
	/*
	 * 8 random octets: where l2tp_ip is loaded the kernel finds sessions
	 * by ID alone, even those of UDP tunnels, and the cookie is what RFC
	 * 3931 8.2 gives against blind insertion; every implementation must
	 * support 8.  0 stays available for peers that need it.
	 */
	sp->cookie_len = 8;
	snprintf(sp->ifname, sizeof(sp->ifname), "l2tpeth%%d");
}

void peer_defaults(struct peer_profile *pp, bool accept)
{
	memset(pp, 0, sizeof(*pp));
	pp->match.family = AF_UNSPEC;
	pp->accept = accept;
	snprintf(pp->tunnel_profile, sizeof(pp->tunnel_profile), "default");
	snprintf(pp->session_profile, sizeof(pp->session_profile), "default");
}

void listen_defaults(struct l2tpd_config *c)
{
	config_parse_addr("0.0.0.0", c->udp_port, &c->listen[0]);
	config_parse_addr("::", c->udp_port, &c->listen[1]);
	c->n_listen = 2;
}

void hostname_default(struct l2tpd_config *c)
{
	if (gethostname(c->hostname, sizeof(c->hostname)) != 0 || !c->hostname[0])
		snprintf(c->hostname, sizeof(c->hostname), "l2tpv3d");
	c->hostname[sizeof(c->hostname) - 1] = '\0';
}

struct l2tpd_config *config_defaults(void)
{
	struct l2tpd_config *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->tunnel_profiles = calloc(1, sizeof(*c->tunnel_profiles));
	c->session_profiles = calloc(1, sizeof(*c->session_profiles));
	if (!c->tunnel_profiles || !c->session_profiles) {
		config_free(c);
		return NULL;
	}
	c->udp_port = 1701;
	c->responder_port = CFG_SPORT_AUTO;
	listen_defaults(c);
	snprintf(c->event_loop, sizeof(c->event_loop), "epoll");
	hostname_default(c);
	c->max_tunnels = 100000;
	c->max_sessions = 200000;
	c->max_sessions_per_tunnel = 16384;	/* one peer cannot take every slot */
	c->max_half_open = 1000;
	snprintf(c->ctl_socket, sizeof(c->ctl_socket), "%s/l2tpv3d/l2tpv3d.ctl", RUNSTATEDIR);
	c->ctl_max_clients = 64;
	c->ctl_max_output = 16u << 20;
	c->ctl_idle_timeout = 300;
	snprintf(c->log_level, sizeof(c->log_level), "info");
	snprintf(c->dataplane, sizeof(c->dataplane), "kernel");
	snprintf(c->state_dir, sizeof(c->state_dir), "%s/l2tpv3d", RUNSTATEDIR);
	c->metrics_session_counters = true;

	tunnel_profile_defaults(&c->tunnel_profiles[0]);
	c->n_tunnel_profiles = 1;
	session_profile_defaults(&c->session_profiles[0]);
	c->n_session_profiles = 1;
	peer_defaults(&c->peer_default, false);
	snprintf(c->peer_default.name, sizeof(c->peer_default.name), "default");

	c->hooks.max_concurrent = 8;
	c->hooks.timeout_ms = 30000;
	snprintf(c->snmp.agentx_socket, sizeof(c->snmp.agentx_socket), "/var/agentx/master");
	return c;
}

void config_free(struct l2tpd_config *c)
{
	unsigned i;

	if (!c)
		return;
	for (i = 0; i < c->n_tunnels; i++)
		free(c->tunnels[i].sessions);
	free(c->tunnels);
	for (i = 0; i < c->n_lns_pools; i++)
		free(c->lns_pools[i].members);
	free(c->lns_pools);
	for (i = 0; i < c->n_peers; i++)
		free(c->peers[i].sessions);
	free(c->peers);
	free(c->peer_default.sessions);
	free(c->session_profiles);
	free(c->tunnel_profiles);
	free(c->reserved_ifnames);
	free(c->included);
	free(c);
}

/* ---- parse state and errors ---- */

static config_trust_fn trust_check;

void config_set_trust_check(config_trust_fn fn)
{
	trust_check = fn;
}

/* v as the configuration gives it, made a path that opens from here: relative to the main file. */
const char *rel_path(const char *incdir, const char *v, char *buf, size_t len)
{
	if (v[0] == '/' || !incdir)
		return v;
	snprintf(buf, len, "%s%s%s", incdir, incdir[strlen(incdir) - 1] == '/' ? "" : "/", v);
	return buf;
}

/* One of the files read whole: the main one, or one of include_dir (named as opened). */
static bool is_top(const struct pctx *p, const char *file)
{
	if (strcmp(file, p->file) == 0)
		return true;
	for (unsigned i = 0; p->c && i < p->c->n_included; i++)
		if (strcmp(file, p->c->included[i]) == 0)
			return true;
	return false;
}

/*
 * libconfig names an @include'd file as the directive wrote it, relative to
 * the main file's directory: make it a path that opens from here.
 */
const char *src_name(const struct pctx *p, const char *file, char *buf, size_t len)
{
	if (!file)
		return p->file;
	if (is_top(p, file))
		return file;
	return rel_path(p->incdir, file, buf, len);
}

bool fail(struct pctx *p, const config_setting_t *s, const char *path, const char *fmt, ...)
{
	char buf[CFG_PATH_MAX * 2];
	const char *file = src_name(p, s ? config_setting_source_file(s) : NULL, buf, sizeof(buf));
	unsigned line = s ? config_setting_source_line(s) : 0;
	va_list ap;
	int n;

	if (!p->err || !p->errlen)
		return false;
	if (line)
		n = snprintf(p->err, p->errlen, "%s:%u: setting '%s': ", file, line, path);
	else
		n = snprintf(p->err, p->errlen, "%s: setting '%s': ", file, path);
	if (n < 0 || (size_t)n >= p->errlen)
		return false;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return false;
}

const char *type_name(const config_setting_t *s)
{
	switch (config_setting_type(s)) {
	case CONFIG_TYPE_GROUP:		return "a group { }";
	case CONFIG_TYPE_ARRAY:		return "an array [ ]";
	case CONFIG_TYPE_LIST:		return "a list ( )";
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:		return "an integer";
	case CONFIG_TYPE_FLOAT:		return "a decimal number";
	case CONFIG_TYPE_STRING:	return "a string";
	case CONFIG_TYPE_BOOL:		return "true/false";
	default:			return "nothing";
	}
}

/* g (NULL for a built-in default) sets key itself. */
bool has(const config_setting_t *g, const char *key)
{
	return g && config_setting_get_member(g, key) != NULL;
}

/* The setting key of group g, or g itself (for line numbers of checks across settings). */
const config_setting_t *where(const config_setting_t *g, const char *key)
{
	const config_setting_t *s = g ? config_setting_get_member(g, key) : NULL;

	return s ? s : g;
}

/* The first of the keys g sets, or g. */
const config_setting_t *where2(const config_setting_t *g, const char *k1, const char *k2)
{
	const config_setting_t *s = g ? config_setting_get_member(g, k1) : NULL;

	return s ? s : where(g, k2);
}

/* ---- interface names the file gives: reserved (config_ifname_reserved) ---- */

static void reserve_ifname(struct l2tpd_config *c, const char *name)
{
	if (name[0] != '\0' && strchr(name, '%') == NULL)
		snprintf(c->reserved_ifnames[c->n_reserved_ifnames++], CFG_NAME_MAX, "%s", name);
}

static int ifname_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void reserve_peer_ifnames(struct l2tpd_config *c, const struct peer_profile *pp)
{
	for (unsigned j = 0; j < pp->n_sessions; j++)
		reserve_ifname(c, pp->sessions[j].ifname);
}

static int index_reserved_ifnames(struct l2tpd_config *c)
{
	size_t n = c->n_session_profiles + c->peer_default.n_sessions;
	unsigned i, j;

	for (i = 0; i < c->n_peers; i++)
		n += c->peers[i].n_sessions;
	for (i = 0; i < c->n_tunnels; i++)
		n += c->tunnels[i].n_sessions;
	if (n == 0)
		return 0;
	c->reserved_ifnames = calloc(n, sizeof(*c->reserved_ifnames));
	if (c->reserved_ifnames == NULL)
		return -1;
	for (i = 0; i < c->n_session_profiles; i++)
		reserve_ifname(c, c->session_profiles[i].ifname);
	reserve_peer_ifnames(c, &c->peer_default);
	for (i = 0; i < c->n_peers; i++)
		reserve_peer_ifnames(c, &c->peers[i]);
	for (i = 0; i < c->n_tunnels; i++)
		for (j = 0; j < c->tunnels[i].n_sessions; j++)
			reserve_ifname(c, c->tunnels[i].sessions[j].ifname);
	qsort(c->reserved_ifnames, c->n_reserved_ifnames, sizeof(*c->reserved_ifnames), ifname_cmp);
	return 0;
}

bool config_ifname_reserved(const struct l2tpd_config *c, const char *name)
{
	return c->n_reserved_ifnames > 0 &&
	       bsearch(name, c->reserved_ifnames, c->n_reserved_ifnames,
		       sizeof(*c->reserved_ifnames), ifname_cmp) != NULL;
}

/* ---- loading: the main file and include_dir's (config_load) ---- */

/* Reads one file's syntax into lc (its @include relative to the main file); false with err set. */
static bool read_syntax(struct pctx *p, config_t *lc, const char *file)
{
	char buf[CFG_PATH_MAX * 2];
	const char *efile;

	config_init(lc);
	if (p->incdir)
		config_set_include_dir(lc, p->incdir);
	if (config_read_file(lc, file))
		return true;
	efile = config_error_file(lc) ? src_name(p, config_error_file(lc), buf, sizeof(buf)) : file;
	if (!p->err || !p->errlen) {
		/* nowhere to say why */
	} else if (config_error_type(lc) == CONFIG_ERR_FILE_IO) {
		snprintf(p->err, p->errlen, "%s: cannot read: %s", efile, config_error_text(lc));
	} else if (!strcmp(config_error_text(lc), "syntax error")) {
		snprintf(p->err, p->errlen, "%s:%d: syntax error: libconfig cannot parse this "
			 "(look for a missing ';', quote or bracket here or on the line before)",
			 efile, config_error_line(lc));
	} else {
		snprintf(p->err, p->errlen, "%s:%d: syntax error: %s", efile, config_error_line(lc),
			 config_error_text(lc));
	}
	return false;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.conf names in dir (no hidden ones), sorted; NULL with errno. */
static char **conf_names(const char *dir, unsigned *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL, **nv;
	unsigned cap = 0;
	int saved;

	*n = 0;
	if (!d)
		return NULL;
	while ((errno = 0, de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);

		if (de->d_name[0] == '.' || l <= 5 || strcmp(de->d_name + l - 5, ".conf") != 0)
			continue;
		if (*n + 1 >= cap) {
			cap = cap ? cap * 2 : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				goto fail;
			v = nv;
		}
		if ((v[*n] = strdup(de->d_name)) == NULL)
			goto fail;
		(*n)++;
	}
	if (errno)
		goto fail;
	closedir(d);
	if (!v)
		v = calloc(1, sizeof(*v));
	if (v)
		qsort(v, *n, sizeof(*v), name_cmp);
	return v;
fail:
	saved = errno ? errno : ENOMEM;
	closedir(d);
	while (v && *n)
		free(v[--*n]);
	free(v);
	errno = saved;
	return NULL;
}

/*
 * global.include_dir of the main file (lcs[0]): each of its *.conf files,
 * in name order, read into lcs[1..] (*n counts them all) and named in
 * p->c->included.  They are checked as the main file is.
 */
static bool read_include_dir(struct pctx *p, config_t ***lcs, unsigned *n)
{
	const config_setting_t *g = config_lookup((*lcs)[0], "global"), *s;
	static const char path[] = "global.include_dir";
	char dir[CFG_PATH_MAX * 2], why[WHY_MAX * 2], **names;
	struct l2tpd_config *c = p->c;
	unsigned n_names, i;
	const char *v;
	bool ok = true;

	s = g && config_setting_type(g) == CONFIG_TYPE_GROUP ?
	    config_setting_get_member(g, "include_dir") : NULL;
	if (!s)
		return true;
	if (!parse_string(p, s, path, "a directory, absolute or relative to this file's", &v))
		return false;
	if (!*v)
		return true;
	if (strlen(v) >= CFG_PATH_MAX)
		return fail(p, s, path, "too long: %zu characters (valid: at most %d)", strlen(v),
			    CFG_PATH_MAX - 1);
	if (!check_printable(v, why, sizeof(why)))
		return fail(p, s, path, "%s", why);
	snprintf(dir, sizeof(dir), "%s", v);
	if (v[0] != '/' && p->incdir)
		rel_path(p->incdir, v, dir, sizeof(dir));
	if (trust_check && trust_check("include_dir", dir, why, sizeof(why)) < 0)
		return fail(p, s, path, "%s", why);
	names = conf_names(dir, &n_names);
	if (!names)
		return fail(p, s, path, "cannot read directory %s: %s", dir, strerror(errno));
	c->included = calloc(n_names ? n_names : 1, sizeof(*c->included));
	if (!c->included)
		ok = fail(p, s, path, "out of memory");
	for (i = 0; ok && i < n_names; i++) {
		char *file = c->included[c->n_included];
		config_t **nl;
		struct stat st;

		if ((size_t)snprintf(file, CFG_PATH_MAX, "%s%s%s", dir,
				     dir[strlen(dir) - 1] == '/' ? "" : "/", names[i]) >= CFG_PATH_MAX) {
			ok = fail(p, s, path, "%s/%s: path too long (valid: at most %d characters)",
				  dir, names[i], CFG_PATH_MAX - 1);
			break;
		}
		c->n_included++;
		if (stat(file, &st) < 0) {
			ok = fail(p, s, path, "cannot read %s: %s", file, strerror(errno));
			break;
		}
		if (!S_ISREG(st.st_mode)) {
			ok = fail(p, s, path, "%s is not a regular file (valid: *.conf files)", file);
			break;
		}
		if (trust_check && trust_check("included configuration", file, why, sizeof(why)) < 0) {
			ok = fail(p, s, path, "%s", why);
			break;
		}
		nl = realloc(*lcs, (*n + 1) * sizeof(**lcs));
		if (nl)
			*lcs = nl;
		if (!nl || ((*lcs)[*n] = malloc(sizeof(config_t))) == NULL) {
			ok = fail(p, s, path, "out of memory");
			break;
		}
		if (!read_syntax(p, (*lcs)[(*n)++], file))
			ok = false;
	}
	for (i = 0; i < n_names; i++)
		free(names[i]);
	free(names);
	return ok;
}

struct l2tpd_config *config_load(const char *path, char *err, size_t errlen)
{
	const config_setting_t **roots = NULL;
	struct pctx p;
	struct l2tpd_config *c = NULL;
	config_t **lcs;
	unsigned n_lcs = 0, i;
	char dir[CFG_PATH_MAX], *slash;
	FILE *f;
	bool ok = false;

	memset(&p, 0, sizeof(p));
	p.file = path;
	p.err = err;
	p.errlen = errlen;
	if (err && errlen)
		err[0] = '\0';
	if (strlen(path) >= CFG_PATH_MAX) {
		if (err && errlen)
			snprintf(err, errlen, "%.64s...: path too long (valid: at most %d "
				 "characters)", path, CFG_PATH_MAX - 1);
		return NULL;
	}
	/* libconfig says only "file I/O error": ask first, for the reason */
	f = fopen(path, "r");
	if (!f || (getc(f) == EOF && ferror(f))) {	/* a directory opens, then fails */
		if (err && errlen)
			snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
		if (f)
			fclose(f);
		return NULL;
	}
	fclose(f);

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash) {
		/* @include and include_dir are relative to the file ("/" for a file at the root) */
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		p.incdir = dir;
	}
	lcs = calloc(1, sizeof(*lcs));
	if (lcs)
		lcs[0] = malloc(sizeof(config_t));
	if (!lcs || !lcs[0]) {
		if (err && errlen)
			snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	n_lcs = 1;
	if (!read_syntax(&p, lcs[0], path))
		goto out;

	c = config_defaults();
	if (!c) {
		if (err && errlen)
			snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	snprintf(c->path, sizeof(c->path), "%s", path);
	p.c = c;
	if (!read_include_dir(&p, &lcs, &n_lcs))
		goto out;
	roots = calloc(n_lcs, sizeof(*roots));
	if (!roots) {
		fail(&p, NULL, "global", "out of memory");
		goto out;
	}
	for (i = 0; i < n_lcs; i++)
		roots[i] = config_root_setting(lcs[i]);
	ok = parse_root(&p, roots, n_lcs);
	if (ok && index_reserved_ifnames(c) < 0) {
		if (err && errlen)
			snprintf(err, errlen, "%s: out of memory", path);
		ok = false;
	}
out:
	free(roots);
	free(p.tp_groups);
	free(p.sp_groups);
	free(p.peer_groups);
	free(p.tun_groups);
	free(p.pool_groups);
	free(p.src.name);
	free(p.src.text);
	free(p.src.line_off);
	for (i = 0; lcs && i < n_lcs; i++) {
		config_destroy(lcs[i]);
		free(lcs[i]);
	}
	if (lcs && n_lcs == 0)
		free(lcs[0]);
	free(lcs);
	if (!ok) {
		config_free(c);
		return NULL;
	}
	return c;
}
