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
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <libconfig.h>
#include <limits.h>
#include <net/if.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "config.h"
#include "usl/suggest.h"

#ifndef RUNSTATEDIR
#define RUNSTATEDIR "/run"
#endif

#define SETTING_PATH_MAX	96	/* "tunnels.sessions.remote_end_id" and room */
#define WHY_MAX			320
#define IFNAME_DIGITS		5	/* "%d" may become up to this many digits */

/* ---- names ---- */

struct name_val {
	const char *name;
	int val;
};

static const struct name_val encap_names[] = {
	{ "udp", L2TP_ENCAP_UDP }, { "ip", L2TP_ENCAP_IP }, { NULL, 0 }
};
static const struct name_val sport_names[] = {
	{ "ephemeral", CFG_SPORT_EPHEMERAL }, { "1701", CFG_SPORT_1701 }, { NULL, 0 }
};
static const struct name_val responder_port_names[] = {
	{ "auto", CFG_SPORT_AUTO }, { "listener", CFG_SPORT_1701 },
	{ "ephemeral", CFG_SPORT_EPHEMERAL }, { NULL, 0 }
};
static const struct name_val reload_peers_names[] = {
	{ "clear", CFG_RELOAD_PEERS_CLEAR }, { "report", CFG_RELOAD_PEERS_REPORT }, { NULL, 0 }
};
static const struct name_val digest_names[] = {
	{ "none", CFG_DIGEST_NONE }, { "md5", CFG_DIGEST_MD5 }, { "sha1", CFG_DIGEST_SHA1 },
	{ NULL, 0 }
};
/* Every pseudowire type we can name (the CLI prints what peers offer). */
static const struct name_val pw_names[] = {
	{ "eth", L2TP_PW_ETH }, { "eth_vlan", L2TP_PW_ETH_VLAN }, { "ppp", L2TP_PW_PPP },
	{ "ppp_ac", L2TP_PW_PPP_AC }, { "ip", L2TP_PW_IP }, { NULL, 0 }
};
/* The ones a session profile may ask for: what the kernel data plane carries. */
static const struct name_val pw_config_names[] = {
	{ "eth", L2TP_PW_ETH }, { "eth_vlan", L2TP_PW_ETH_VLAN }, { "ppp", L2TP_PW_PPP },
	{ NULL, 0 }
};
/* L2-Specific Sublayer AVP values (RFC 3931 5.4.4). */
static const struct name_val l2spec_names[] = {
	{ "none", 0 }, { "default", 1 }, { NULL, 0 }
};
/* Data Sequencing AVP values (RFC 3931 5.4.4). */
static const struct name_val data_seq_names[] = {
	{ "none", 0 }, { "non-ip", 1 }, { "all", 2 }, { NULL, 0 }
};
static const struct name_val df_names[] = {
	{ "system", CFG_DF_SYSTEM }, { "on", CFG_DF_ON }, { "off", CFG_DF_OFF },
	{ "pmtu", CFG_DF_PMTU }, { NULL, 0 }
};
static const struct name_val ll6_names[] = {
	{ "auto", CFG_LL6_AUTO }, { "on", CFG_LL6_ON }, { "off", CFG_LL6_OFF }, { NULL, 0 }
};
static const struct name_val event_loop_names[] = {
	{ "epoll", 0 }, { "poll", 0 }, { NULL, 0 }
};
static const struct name_val log_level_names[] = {
	{ "err", 0 }, { "warn", 0 }, { "info", 0 }, { "debug", 0 }, { NULL, 0 }
};
static const struct name_val dataplane_names[] = {
	{ "kernel", 0 }, { "null", 0 }, { NULL, 0 }
};

static const struct name_val *name_find(const struct name_val *t, const char *s)
{
	for (; t->name; t++)
		if (strcasecmp(t->name, s) == 0)
			return t;
	return NULL;
}

static const char *name_of(const struct name_val *t, int val)
{
	for (; t->name; t++)
		if (t->val == val)
			return t->name;
	return NULL;
}

/* "none, md5, sha1" */
static const char *names_text(const struct name_val *t, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (; t->name && n < len; t++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", t->name);
	return buf;
}

const char *config_digest_name(enum cfg_digest d)
{
	const char *s = name_of(digest_names, (int)d);

	return s ? s : "unknown";
}

const char *config_df_name(enum cfg_df df)
{
	const char *s = name_of(df_names, (int)df);

	return s ? s : "unknown";
}

const char *config_pw_type_name(uint16_t pw)
{
	const char *s = name_of(pw_names, pw);

	return s ? s : "unknown";
}

int config_pw_type_parse(const char *s)
{
	const struct name_val *nv = s ? name_find(pw_names, s) : NULL;

	return nv ? nv->val : -1;
}

const char *config_data_seq_name(uint16_t sq)
{
	const char *s = name_of(data_seq_names, sq);

	return s ? s : "unknown";
}

int config_data_seq_parse(const char *s)
{
	const struct name_val *nv = s ? name_find(data_seq_names, s) : NULL;

	return nv ? nv->val : -1;
}

/* ---- addresses ---- */

static bool parse_port(const char *s, uint16_t *port)
{
	unsigned long v = 0;
	size_t i;

	for (i = 0; s[i]; i++) {
		if (!isdigit((unsigned char)s[i]) || i >= 5)
			return false;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (i == 0 || v == 0 || v > 65535)
		return false;
	*port = (uint16_t)v;
	return true;
}

bool config_parse_addr(const char *s, uint16_t default_port, struct cfg_addr *a)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *hs, *ps = NULL, *colon;
	size_t hl;
	uint16_t port = default_port;
	bool v6;

	memset(a, 0, sizeof(*a));
	if (!s)
		return false;
	if (s[0] == '[') {
		const char *e = strchr(s, ']');

		if (!e)
			return false;
		hs = s + 1;
		hl = (size_t)(e - hs);
		if (e[1] == ':')
			ps = e + 2;
		else if (e[1] != '\0')
			return false;
		v6 = true;
	} else {
		hs = s;
		colon = strchr(s, ':');
		if (colon && !strchr(colon + 1, ':')) {
			/* exactly one colon: a.b.c.d:port (an IPv6 address has two at least) */
			hl = (size_t)(colon - s);
			ps = colon + 1;
			v6 = false;
		} else {
			hl = strlen(s);
			v6 = colon != NULL;
		}
	}
	if (hl == 0 || hl >= sizeof(host))
		return false;
	memcpy(host, hs, hl);
	host[hl] = '\0';
	if (ps && !parse_port(ps, &port))
		return false;

	if (v6) {
		struct sockaddr_in6 sin6;

		memset(&sin6, 0, sizeof(sin6));
		if (inet_pton(AF_INET6, host, &sin6.sin6_addr) != 1)
			return false;
		sin6.sin6_family = AF_INET6;
		sin6.sin6_port = htons(port);
		memcpy(&a->ss, &sin6, sizeof(sin6));
		a->len = sizeof(sin6);
	} else {
		struct sockaddr_in sin;

		memset(&sin, 0, sizeof(sin));
		if (inet_pton(AF_INET, host, &sin.sin_addr) != 1)
			return false;
		sin.sin_family = AF_INET;
		sin.sin_port = htons(port);
		memcpy(&a->ss, &sin, sizeof(sin));
		a->len = sizeof(sin);
	}
	return true;
}

static uint16_t addr_port(const struct cfg_addr *a)
{
	if (a->ss.ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)&a->ss)->sin_port);
	if (a->ss.ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)&a->ss)->sin6_port);
	return 0;
}

static void addr_set_port(struct cfg_addr *a, uint16_t port)
{
	if (a->ss.ss_family == AF_INET)
		((struct sockaddr_in *)&a->ss)->sin_port = htons(port);
	else if (a->ss.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&a->ss)->sin6_port = htons(port);
}

/* The address, with its port unless it is 0 or omit_port. */
static const char *addr_fmt(const struct cfg_addr *a, uint16_t omit_port, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];
	uint16_t port = addr_port(a);
	bool with_port = port != 0 && port != omit_port;

	if (len)
		buf[0] = '\0';
	if (a->ss.ss_family == AF_INET) {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)&a->ss)->sin_addr, host, sizeof(host));
		if (with_port)
			snprintf(buf, len, "%s:%u", host, port);
		else
			snprintf(buf, len, "%s", host);
	} else if (a->ss.ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)&a->ss)->sin6_addr, host,
			  sizeof(host));
		if (with_port)
			snprintf(buf, len, "[%s]:%u", host, port);
		else
			snprintf(buf, len, "%s", host);
	}
	return buf;
}

const char *config_addr_str(const struct cfg_addr *a, char *buf, size_t len)
{
	return addr_fmt(a, 0, buf, len);
}

static bool addr_equal(const struct cfg_addr *a, const struct cfg_addr *b)
{
	char x[CFG_ADDR_STRLEN], y[CFG_ADDR_STRLEN];

	return strcmp(addr_fmt(a, 0, x, sizeof(x)), addr_fmt(b, 0, y, sizeof(y))) == 0;
}

/* Fills p from s; on error writes why (a reason, then the valid forms). */
static bool prefix_parse(const char *s, struct cfg_prefix *p, char *why, size_t wl)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(s, '/');
	size_t hl = slash ? (size_t)(slash - s) : strlen(s);
	unsigned maxlen, plen, i;

	memset(p, 0, sizeof(*p));
	p->family = AF_UNSPEC;
	if (strcasecmp(s, "any") == 0)
		return true;
	if (hl == 0 || hl >= sizeof(host))
		goto bad;
	memcpy(host, s, hl);
	host[hl] = '\0';
	if (inet_pton(AF_INET, host, p->addr) == 1) {
		p->family = AF_INET;
		maxlen = 32;
	} else if (inet_pton(AF_INET6, host, p->addr) == 1) {
		p->family = AF_INET6;
		maxlen = 128;
	} else {
		goto bad;
	}
	plen = maxlen;
	if (slash) {
		const char *d = slash + 1;

		plen = 0;
		for (i = 0; d[i]; i++) {
			if (!isdigit((unsigned char)d[i]) || i >= 3)
				break;
			plen = plen * 10 + (unsigned)(d[i] - '0');
		}
		if (i == 0 || d[i] != '\0' || plen > maxlen) {
			snprintf(why, wl, "'%s': bad prefix length (valid: 0..%u)", s, maxlen);
			p->family = AF_UNSPEC;
			return false;
		}
	}
	p->plen = (uint8_t)plen;
	for (i = plen; i < maxlen; i++) {
		if (p->addr[i / 8] & (0x80 >> (i % 8))) {
			struct cfg_prefix q = *p;
			char buf[INET6_ADDRSTRLEN + 8];

			for (; i < maxlen; i++)
				q.addr[i / 8] &= (uint8_t)~(0x80 >> (i % 8));
			snprintf(why, wl, "'%s' has host bits set (did you mean '%s'?)", s,
				 config_prefix_str(&q, buf, sizeof(buf)));
			p->family = AF_UNSPEC;
			return false;
		}
	}
	return true;
bad:
	snprintf(why, wl, "'%s' is not an address or prefix (valid: \"any\", \"192.0.2.0/24\", "
		 "\"192.0.2.1\", \"2001:db8::/32\")", s);
	p->family = AF_UNSPEC;
	return false;
}

bool config_parse_prefix(const char *s, struct cfg_prefix *p)
{
	char why[WHY_MAX];

	if (!s) {
		memset(p, 0, sizeof(*p));
		return false;
	}
	return prefix_parse(s, p, why, sizeof(why));
}

const char *config_prefix_str(const struct cfg_prefix *p, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];

	if (p->family != AF_INET && p->family != AF_INET6) {
		snprintf(buf, len, "any");
		return buf;
	}
	inet_ntop(p->family, p->addr, host, sizeof(host));
	snprintf(buf, len, "%s/%u", host, p->plen);
	return buf;
}

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

static void tunnel_profile_defaults(struct tunnel_profile *tp)
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

static void session_profile_defaults(struct session_profile *sp)
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

static void peer_defaults(struct peer_profile *pp, bool accept)
{
	memset(pp, 0, sizeof(*pp));
	pp->match.family = AF_UNSPEC;
	pp->accept = accept;
	snprintf(pp->tunnel_profile, sizeof(pp->tunnel_profile), "default");
	snprintf(pp->session_profile, sizeof(pp->session_profile), "default");
}

static void listen_defaults(struct l2tpd_config *c)
{
	config_parse_addr("0.0.0.0", c->udp_port, &c->listen[0]);
	config_parse_addr("::", c->udp_port, &c->listen[1]);
	c->n_listen = 2;
}

static void hostname_default(struct l2tpd_config *c)
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

/* One source file, read back to recover integer literals (see int_literal()). */
struct src_file {
	char *name;
	char *text;
	size_t len;
	size_t *line_off;	/* start of line n+1 */
	unsigned n_lines;
};

struct pctx {
	struct l2tpd_config *c;
	const char *file;
	const char *incdir;		/* directory of file: @include, include_dir, secret_file */
	char *err;
	size_t errlen;

	/* groups of the elements, index-aligned with the arrays in c (NULL: built in) */
	const config_setting_t **tp_groups, **sp_groups, **peer_groups, **tun_groups, **pool_groups;
	const config_setting_t *peer_default_group;
	const config_setting_t *listen_setting;
	bool sccrq_in_default;		/* "default" sets sccrq_max_retries itself */

	struct src_file src;
};

static bool fail(struct pctx *p, const config_setting_t *s, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static config_trust_fn trust_check;

void config_set_trust_check(config_trust_fn fn)
{
	trust_check = fn;
}

/* v as the configuration gives it, made a path that opens from here: relative to the main file. */
static const char *rel_path(const char *incdir, const char *v, char *buf, size_t len)
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
static const char *src_name(const struct pctx *p, const char *file, char *buf, size_t len)
{
	if (!file)
		return p->file;
	if (is_top(p, file))
		return file;
	return rel_path(p->incdir, file, buf, len);
}

static bool fail(struct pctx *p, const config_setting_t *s, const char *path, const char *fmt, ...)
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

static const char *type_name(const config_setting_t *s)
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
static bool has(const config_setting_t *g, const char *key)
{
	return g && config_setting_get_member(g, key) != NULL;
}

/* The setting key of group g, or g itself (for line numbers of checks across settings). */
static const config_setting_t *where(const config_setting_t *g, const char *key)
{
	const config_setting_t *s = g ? config_setting_get_member(g, key) : NULL;

	return s ? s : g;
}

/* The first of the keys g sets, or g. */
static const config_setting_t *where2(const config_setting_t *g, const char *k1, const char *k2)
{
	const config_setting_t *s = g ? config_setting_get_member(g, k1) : NULL;

	return s ? s : where(g, k2);
}

/* ---- reading values ---- */

static bool src_load(struct src_file *sf, const char *name)
{
	FILE *f;
	size_t cap = 0, n;
	unsigned lines = 1;
	char *t = NULL;

	if (sf->name && strcmp(sf->name, name) == 0)
		return sf->text != NULL;
	free(sf->name);
	free(sf->text);
	free(sf->line_off);
	memset(sf, 0, sizeof(*sf));
	sf->name = strdup(name);
	f = fopen(name, "r");
	if (!f || !sf->name)
		goto out;
	for (;;) {
		if (sf->len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 16384;
			t = realloc(sf->text, cap);
			if (!t)
				goto out;
			sf->text = t;
		}
		n = fread(sf->text + sf->len, 1, cap - sf->len - 1, f);
		if (n == 0)
			break;
		sf->len += n;
	}
	if (!sf->text)
		goto out;
	sf->text[sf->len] = '\0';
	for (n = 0; n < sf->len; n++)
		lines += sf->text[n] == '\n';
	sf->line_off = calloc(lines, sizeof(*sf->line_off));
	if (!sf->line_off)
		goto out;
	sf->n_lines = 1;
	for (n = 0; n < sf->len; n++)
		if (sf->text[n] == '\n')
			sf->line_off[sf->n_lines++] = n + 1;
out:
	if (f)
		fclose(f);
	if (!sf->line_off) {
		free(sf->text);
		sf->text = NULL;
	}
	return sf->text != NULL;
}

static bool is_name_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_' || ch == '-' || ch == '*';
}

/*
 * libconfig 1.5 keeps an integer without the L suffix in 32 bits and wraps
 * larger ones silently (3000000000 reads as -1294967296).  Read the literal
 * back from the source line; it is taken only when it agrees with libconfig
 * modulo 2^32, so a name elsewhere on the line cannot fool it.  *huge: more
 * digits than 64 bits hold.
 */
static bool int_literal(struct pctx *p, const config_setting_t *s, long long *v, bool *huge)
{
	char buf[CFG_PATH_MAX * 2];
	const char *file = src_name(p, config_setting_source_file(s), buf, sizeof(buf));
	const char *name = config_setting_name(s);
	unsigned line = config_setting_source_line(s);
	const char *b, *e, *q;
	size_t nl;

	*huge = false;
	if (!name || !line || !src_load(&p->src, file) || line > p->src.n_lines)
		return false;
	b = p->src.text + p->src.line_off[line - 1];
	e = line < p->src.n_lines ? p->src.text + p->src.line_off[line] : p->src.text + p->src.len;
	nl = strlen(name);
	for (q = b; q + nl <= e; q++) {
		const char *r = q + nl;
		unsigned long long val = 0;
		bool neg = false, hex = false, over = false;
		unsigned digits = 0;

		if (memcmp(q, name, nl) != 0 || (q > b && is_name_char(q[-1])))
			continue;
		while (r < e && (*r == ' ' || *r == '\t'))
			r++;
		if (r >= e || (*r != '=' && *r != ':'))
			continue;
		r++;
		while (r < e && (*r == ' ' || *r == '\t'))
			r++;
		if (r < e && (*r == '-' || *r == '+'))
			neg = *r++ == '-';
		if (r + 1 < e && r[0] == '0' && (r[1] == 'x' || r[1] == 'X')) {
			hex = true;
			r += 2;
		}
		for (; r < e && (hex ? isxdigit((unsigned char)*r) : isdigit((unsigned char)*r)); r++) {
			unsigned d = isdigit((unsigned char)*r) ? (unsigned)(*r - '0')
							      : (unsigned)(tolower((unsigned char)*r) - 'a' + 10);

			if (val > (ULLONG_MAX >> 5))
				over = true;
			else
				val = val * (hex ? 16 : 10) + d;
			digits++;
		}
		if (!digits || (r < e && (isalnum((unsigned char)*r) || *r == '.')))
			continue;
		if (over || val > (unsigned long long)LLONG_MAX) {
			*huge = true;
			return true;
		}
		*v = neg ? -(long long)val : (long long)val;
		if ((int32_t)(uint32_t)(unsigned long long)*v != config_setting_get_int(s))
			continue;
		return true;
	}
	return false;
}

/* An integer setting; fails with a type error naming valid. */
static bool get_int(struct pctx *p, const config_setting_t *s, const char *path,
		    const char *valid, long long *v)
{
	bool huge;

	*v = 0;
	switch (config_setting_type(s)) {
	case CONFIG_TYPE_INT64:
		*v = config_setting_get_int64(s);
		return true;
	case CONFIG_TYPE_INT:
		if (!int_literal(p, s, v, &huge))
			*v = config_setting_get_int(s);
		else if (huge)
			return fail(p, s, path, "number too large (valid: %s)", valid);
		return true;
	default:
		return fail(p, s, path, "expected an integer, got %s (valid: %s)", type_name(s), valid);
	}
}

/* "1", "0.1", "1.5", "0.001": seconds from milliseconds, as short as exact. */
static const char *secs_fmt(long long ms, char *buf, size_t len)
{
	if (ms % 1000 == 0) {
		snprintf(buf, len, "%lld", ms / 1000);
	} else {
		char *z;

		snprintf(buf, len, "%lld.%03lld", ms / 1000, ms % 1000);
		z = buf + strlen(buf) - 1;
		while (*z == '0')
			*z-- = '\0';
	}
	return buf;
}

/* ---- option tables ---- */

enum opt_kind {
	OPT_BOOL,		/* bool */
	OPT_UINT,		/* uint8/16/32_t (size from the table) */
	OPT_TIME,		/* seconds (int or float) in the file, uint32_t ms in the struct */
	OPT_STR,		/* char[size]; names: one of these words */
	OPT_ENUM,		/* a word from names, stored as its value (enum or uint16_t) */
	OPT_SPECIAL,		/* its own parse and print */
};

struct opt;
typedef bool (*parse_fn)(struct pctx *p, const config_setting_t *s, void *obj, const char *path,
			 const struct opt *o);
typedef void (*print_fn)(FILE *f, const struct l2tpd_config *c, const void *obj, int ind);
/* true when s is acceptable; otherwise writes the reason into why. */
typedef bool (*check_fn)(const char *s, char *why, size_t wl);

struct opt {
	const char *name;
	enum opt_kind kind;
	size_t off, size;
	long long min, max;		/* UINT: values; TIME: milliseconds */
	const char *zero;		/* 0 accepted besides min..max; what it means */
	size_t off2;			/* secret, secret_file: the other one's field */
	const int *set;			/* UINT: only these values (terminated by -1) */
	const struct name_val *names;	/* ENUM, STR */
	check_fn check;			/* STR */
	bool required;
	parse_fn parse;			/* instead of the generic parse */
	print_fn print;			/* instead of the generic print */
};

#define FIELD(T, f)	.off = offsetof(T, f), .size = sizeof(((T *)0)->f)
#define O_BOOL(T, n, f)	{ .name = n, .kind = OPT_BOOL, FIELD(T, f) }
#define O_UINT(T, n, f, lo, hi, z) \
	{ .name = n, .kind = OPT_UINT, FIELD(T, f), .min = lo, .max = hi, .zero = z }
#define O_TIME(T, n, f, lo, hi, z) \
	{ .name = n, .kind = OPT_TIME, FIELD(T, f), .min = lo, .max = hi, .zero = z }
#define O_STR(T, n, f, chk) \
	{ .name = n, .kind = OPT_STR, FIELD(T, f), .check = chk }
#define O_WORD(T, n, f, nm) \
	{ .name = n, .kind = OPT_STR, FIELD(T, f), .names = nm }
#define O_ENUM(T, n, f, nm) \
	{ .name = n, .kind = OPT_ENUM, FIELD(T, f), .names = nm }
#define O_SPECIAL(T, n, f, ps, pr) \
	{ .name = n, .kind = OPT_SPECIAL, FIELD(T, f), .parse = ps, .print = pr }
/* secret and secret_file, each clearing the other (a profile inherits both) */
#define O_SECRET(T) \
	{ .name = "secret", .kind = OPT_STR, FIELD(T, secret), .parse = parse_secret, \
	  .off2 = offsetof(T, secret_file) }, \
	{ .name = "secret_file", .kind = OPT_STR, FIELD(T, secret_file), \
	  .parse = parse_secret_file, .off2 = offsetof(T, secret) }
#define O_END		{ .name = NULL }

static void *field(void *obj, const struct opt *o)
{
	return (char *)obj + o->off;
}

static const void *cfield(const void *obj, const struct opt *o)
{
	return (const char *)obj + o->off;
}

static void store_uint(void *dst, size_t size, unsigned long long v)
{
	if (size == 1) {
		uint8_t x = (uint8_t)v;

		memcpy(dst, &x, 1);
	} else if (size == 2) {
		uint16_t x = (uint16_t)v;

		memcpy(dst, &x, 2);
	} else {
		uint32_t x = (uint32_t)v;

		memcpy(dst, &x, 4);
	}
}

static unsigned long long load_uint(const void *src, size_t size)
{
	if (size == 1) {
		uint8_t x;

		memcpy(&x, src, 1);
		return x;
	} else if (size == 2) {
		uint16_t x;

		memcpy(&x, src, 2);
		return x;
	} else {
		uint32_t x;

		memcpy(&x, src, 4);
		return x;
	}
}

/* "1..65535", "0 (off) or 1..86400 seconds", "0, 4, 8" */
static const char *range_text(const struct opt *o, char *buf, size_t len)
{
	char lo[32], hi[32];
	size_t n = 0;

	if (o->set) {
		const int *v;

		buf[0] = '\0';
		for (v = o->set; *v >= 0 && n < len; v++)
			n += (size_t)snprintf(buf + n, len - n, "%s%d", n ? ", " : "", *v);
		return buf;
	}
	if (o->kind == OPT_TIME) {
		secs_fmt(o->min, lo, sizeof(lo));
		secs_fmt(o->max, hi, sizeof(hi));
	} else {
		snprintf(lo, sizeof(lo), "%lld", o->min);
		snprintf(hi, sizeof(hi), "%lld", o->max);
	}
	snprintf(buf, len, "%s%s%s%s..%s", o->zero ? "0 " : "", o->zero ? o->zero : "",
		 o->zero ? " or " : "", lo, hi);
	if (o->kind == OPT_TIME)
		snprintf(buf + strlen(buf), len - strlen(buf), " seconds");
	return buf;
}

static bool in_range(const struct opt *o, long long v)
{
	const int *s;

	if (o->set) {
		for (s = o->set; *s >= 0; s++)
			if (v == *s)
				return true;
		return false;
	}
	return (v == 0 && o->zero) || (v >= o->min && v <= o->max);
}

static bool parse_bool(struct pctx *p, const config_setting_t *s, const char *path, bool *b)
{
	*b = false;
	if (config_setting_type(s) != CONFIG_TYPE_BOOL)
		return fail(p, s, path, "expected true or false, got %s", type_name(s));
	*b = config_setting_get_bool(s) != 0;
	return true;
}

static bool parse_string(struct pctx *p, const config_setting_t *s, const char *path,
			 const char *valid, const char **v)
{
	*v = "";
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return fail(p, s, path, "expected a string, got %s%s%s%s", type_name(s),
			    valid ? " (valid: " : "", valid ? valid : "", valid ? ")" : "");
	*v = config_setting_get_string(s);
	return true;
}

/* A word from names (case does not matter); an integer is taken as its digits. */
static bool parse_word(struct pctx *p, const config_setting_t *s, const char *path,
		       const struct name_val *names, const struct name_val **nv)
{
	char valid[WHY_MAX], digits[24];
	const char *v;
	const struct name_val *t;
	unsigned best = UINT_MAX;
	const char *sugg = NULL;

	*nv = NULL;
	names_text(names, valid, sizeof(valid));
	if (config_setting_type(s) == CONFIG_TYPE_INT || config_setting_type(s) == CONFIG_TYPE_INT64) {
		snprintf(digits, sizeof(digits), "%lld", config_setting_get_int64(s));
		v = digits;
	} else if (!parse_string(p, s, path, valid, &v)) {
		return false;
	}
	*nv = name_find(names, v);
	if (*nv)
		return true;
	for (t = names; t->name; t++)
		if (usl_suggest_close(v, t->name, &best))
			sugg = t->name;
	if (sugg)
		return fail(p, s, path, "unknown value '%s' (did you mean '%s'? valid: %s)", v, sugg,
			    valid);
	return fail(p, s, path, "unknown value '%s' (valid: %s)", v, valid);
}

static bool parse_opt(struct pctx *p, const config_setting_t *s, void *obj, const char *path,
		      const struct opt *o)
{
	char valid[WHY_MAX], why[WHY_MAX];
	const struct name_val *nv;
	const char *str;
	long long v;

	switch (o->kind) {
	case OPT_BOOL: {
		bool b;

		if (!parse_bool(p, s, path, &b))
			return false;
		memcpy(field(obj, o), &b, sizeof(b));
		return true;
	}
	case OPT_UINT:
		range_text(o, valid, sizeof(valid));
		if (!get_int(p, s, path, valid, &v))
			return false;
		if (!in_range(o, v))
			return fail(p, s, path, "%lld is out of range (valid: %s)", v, valid);
		store_uint(field(obj, o), o->size, (unsigned long long)v);
		return true;
	case OPT_TIME: {
		char given[40];
		uint32_t ms32;

		range_text(o, valid, sizeof(valid));
		if (config_setting_type(s) == CONFIG_TYPE_FLOAT) {
			double d = config_setting_get_float(s);

			snprintf(given, sizeof(given), "%g", d);
			if (!(d >= 0 && d <= (double)o->max / 1000.0))	/* also NaN */
				v = -1;
			else
				v = (long long)(d * 1000.0 + 0.5);
			if (d > 0 && v == 0)
				v = -1;		/* below the millisecond: never what was meant */
		} else if (config_setting_type(s) == CONFIG_TYPE_INT ||
			   config_setting_type(s) == CONFIG_TYPE_INT64) {
			if (!get_int(p, s, path, valid, &v))
				return false;
			snprintf(given, sizeof(given), "%lld", v);
			v = v < 0 || v > o->max / 1000 ? -1 : v * 1000;
		} else {
			return fail(p, s, path, "expected a number of seconds, got %s (valid: %s)",
				    type_name(s), valid);
		}
		if (v < 0 || !in_range(o, v))
			return fail(p, s, path, "%s seconds is out of range (valid: %s)", given, valid);
		ms32 = (uint32_t)v;
		memcpy(field(obj, o), &ms32, sizeof(ms32));
		return true;
	}
	case OPT_STR:
		if (o->names) {
			if (!parse_word(p, s, path, o->names, &nv))
				return false;
			str = nv->name;
		} else if (!parse_string(p, s, path, NULL, &str)) {
			return false;
		}
		if (strlen(str) >= o->size)
			return fail(p, s, path, "too long: %zu characters (valid: at most %zu)",
				    strlen(str), o->size - 1);
		if (o->check && !o->check(str, why, sizeof(why)))
			return fail(p, s, path, "%s", why);
		memcpy(field(obj, o), str, strlen(str) + 1);
		return true;
	case OPT_ENUM:
		if (!parse_word(p, s, path, o->names, &nv))
			return false;
		store_uint(field(obj, o), o->size, (unsigned long long)nv->val);
		return true;
	case OPT_SPECIAL:
		break;
	}
	return fail(p, s, path, "internal error: no parser");
}

static const struct opt *opt_find(const struct opt *opts, const char *name)
{
	for (; opts->name; opts++)
		if (strcmp(opts->name, name) == 0)
			return opts;
	return NULL;
}

/* ---- checks of string values ---- */

static bool check_name(const char *s, char *why, size_t wl)
{
	const char *q;

	if (!*s) {
		snprintf(why, wl, "empty name (valid: letters, digits and - _ . : @ /)");
		return false;
	}
	for (q = s; *q; q++) {
		if (!isalnum((unsigned char)*q) && !strchr("-_.:@/", *q)) {
			snprintf(why, wl, "'%s': character '%c' not allowed in a name "
				 "(valid: letters, digits and - _ . : @ /)", s,
				 isprint((unsigned char)*q) ? *q : '?');
			return false;
		}
	}
	return true;
}

static bool check_printable(const char *s, char *why, size_t wl)
{
	const char *q;

	for (q = s; *q; q++) {
		if (*q < 0x20 || *q == 0x7f) {
			snprintf(why, wl, "control character at offset %zu "
				 "(valid: printable characters)", (size_t)(q - s));
			return false;
		}
	}
	return true;
}

static bool check_nonempty_printable(const char *s, char *why, size_t wl)
{
	if (!*s) {
		snprintf(why, wl, "empty (valid: printable characters, at least one)");
		return false;
	}
	return check_printable(s, why, wl);
}

/*
 * Operator text shown by the CLI, in monitor events and as a metrics label:
 * printable, so that none of them needs more than quoting.
 */
static bool check_description(const char *s, char *why, size_t wl)
{
	return check_printable(s, why, wl);
}

/* What the kernel accepts as an interface name (dev_valid_name()); "" allowed. */
static bool check_ifname_chars(const char *s, const char *what, char *why, size_t wl)
{
	const char *q;

	if (!strcmp(s, ".") || !strcmp(s, "..")) {
		snprintf(why, wl, "'%s' is not a valid %s (valid: not \".\" nor \"..\")", s, what);
		return false;
	}
	for (q = s; *q; q++) {
		if (*q == '/' || *q == ':' || isspace((unsigned char)*q) || *q < 0x20 || *q == 0x7f) {
			snprintf(why, wl, "'%s': %s may not contain '/', ':', spaces or control "
				 "characters", s, what);
			return false;
		}
	}
	return true;
}

static bool check_ifname(const char *s, char *why, size_t wl)
{
	if (strlen(s) > IFNAMSIZ - 1) {
		snprintf(why, wl, "'%s' is too long for an interface name: %zu characters "
			 "(valid: at most %d)", s, strlen(s), IFNAMSIZ - 1);
		return false;
	}
	if (strchr(s, '%')) {
		snprintf(why, wl, "'%s': '%%' not allowed here (valid: an interface name)", s);
		return false;
	}
	return check_ifname_chars(s, "interface name", why, wl);
}

/* "l2tpeth%d": at most one %d, no other %, short enough once %d is a 5-digit number. */
static bool check_ifname_pattern(const char *s, char *why, size_t wl)
{
	const char *q;
	unsigned n_d = 0;
	size_t len;

	if (!*s) {
		snprintf(why, wl, "empty (valid: an interface name, '%%d' becomes a number, "
			 "e.g. \"l2tpeth%%d\")");
		return false;
	}
	for (q = s; (q = strchr(q, '%')); q += 2) {
		if (q[1] != 'd') {
			snprintf(why, wl, "'%s': '%%' must be followed by 'd' (valid: one '%%d' "
				 "at most)", s);
			return false;
		}
		n_d++;
	}
	if (n_d > 1) {
		snprintf(why, wl, "'%s' has %u '%%d' (valid: one '%%d' at most)", s, n_d);
		return false;
	}
	len = strlen(s) - 2 * n_d + IFNAME_DIGITS * n_d;
	if (len > IFNAMSIZ - 1) {
		snprintf(why, wl, "'%s' is too long: %zu characters once '%%d' is a %d-digit "
			 "number (valid: at most %d)", s, len, IFNAME_DIGITS, IFNAMSIZ - 1);
		return false;
	}
	return check_ifname_chars(s, "interface name", why, wl);
}

/* A session match's ifname: "" (the profile's), or a name with one %r and one %d at most. */
static bool check_match_ifname(const char *s, char *why, size_t wl)
{
	unsigned n_d = 0, n_r = 0;
	const char *q;
	size_t len;

	if (!*s)
		return true;
	for (q = s; (q = strchr(q, '%')); q += 2) {
		if (q[1] == 'd')
			n_d++;
		else if (q[1] == 'r')
			n_r++;
		else {
			snprintf(why, wl, "'%s': '%%' must be followed by 'r' (the Remote End ID) "
				 "or 'd' (a number)", s);
			return false;
		}
	}
	if (n_d > 1 || n_r > 1) {
		snprintf(why, wl, "'%s': one '%%r' and one '%%d' at most", s);
		return false;
	}
	len = strlen(s) - 2 * (n_d + n_r) + IFNAME_DIGITS * n_d;
	if (len > IFNAMSIZ - 1) {
		snprintf(why, wl, "'%s' is too long: %zu characters without the Remote End ID "
			 "(valid: at most %d)", s, len, IFNAMSIZ - 1);
		return false;
	}
	return check_ifname_chars(s, "interface name", why, wl);
}

static bool check_ifname_pattern_or_empty(const char *s, char *why, size_t wl)
{
	return !*s || check_ifname_pattern(s, why, wl);
}

static bool check_abspath(const char *s, char *why, size_t wl)
{
	if (s[0] != '/') {
		snprintf(why, wl, "'%s' is not an absolute path (valid: a path starting with '/')", s);
		return false;
	}
	return check_printable(s, why, wl);
}

static bool check_abspath_or_empty(const char *s, char *why, size_t wl)
{
	if (s[0] && s[0] != '/') {
		snprintf(why, wl, "'%s' is not an absolute path (valid: \"\" for none, or a path "
			 "starting with '/')", s);
		return false;
	}
	return check_printable(s, why, wl);
}

static bool check_sockpath(const char *s, char *why, size_t wl)
{
	if (!check_abspath(s, why, wl))
		return false;
	if (strlen(s) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		snprintf(why, wl, "too long for a UNIX socket: %zu characters (valid: at most %zu)",
			 strlen(s), sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
		return false;
	}
	return true;
}

/* "", "ADDR:PORT" or "[V6]:PORT" with a numeric address and a port 1..65535. */
static bool check_host_port(const char *s, char *why, size_t wl)
{
	const char *colon = strrchr(s, ':');
	char host[INET6_ADDRSTRLEN + 2], *end;
	unsigned char buf[sizeof(struct in6_addr)];
	unsigned long port;
	size_t n;

	if (s[0] == '\0')
		return true;
	if (colon == NULL || colon == s)
		goto bad;
	port = strtoul(colon + 1, &end, 10);
	n = (size_t)(colon - s);
	if (*end != '\0' || port == 0 || port > 65535 || n >= sizeof(host))
		goto bad;
	if (s[0] == '[' && n >= 2 && s[n - 1] == ']') {
		memcpy(host, s + 1, n - 2);
		host[n - 2] = '\0';
		if (inet_pton(AF_INET6, host, buf) == 1)
			return true;
	} else {
		memcpy(host, s, n);
		host[n] = '\0';
		if (inet_pton(AF_INET, host, buf) == 1)
			return true;
	}
bad:
	snprintf(why, wl, "'%s': not ADDRESS:PORT (valid: e.g. \"127.0.0.1:9724\", "
		 "\"[::1]:9724\", or \"\" for off)", s);
	return false;
}

static bool check_group(const char *s, char *why, size_t wl)
{
	const char *q;

	for (q = s; *q; q++) {
		if (!isalnum((unsigned char)*q) && !strchr("-_.", *q)) {
			snprintf(why, wl, "'%s' is not a group name (valid: \"\" for the daemon's "
				 "group, or letters, digits and - _ .)", s);
			return false;
		}
	}
	return true;
}

static bool check_hostname(const char *s, char *why, size_t wl)
{
	const char *q;

	for (q = s; *q; q++) {
		if (!isgraph((unsigned char)*q)) {
			snprintf(why, wl, "'%s' contains a space or a control character "
				 "(valid: \"\" for this host's name, or printable characters)", s);
			return false;
		}
	}
	return true;
}

/* ---- special settings ---- */

static bool parse_listen(struct pctx *p, const config_setting_t *s, void *obj, const char *path,
			 const struct opt *o)
{
	struct l2tpd_config *c = obj;
	static const char valid[] = "addresses like \"0.0.0.0\", \"::\", \"192.0.2.1\", "
				    "\"2001:db8::1\"";
	int i, n;

	(void)o;
	p->listen_setting = s;
	if (config_setting_type(s) == CONFIG_TYPE_STRING) {
		n = 1;
	} else if (config_setting_type(s) == CONFIG_TYPE_ARRAY ||
		   config_setting_type(s) == CONFIG_TYPE_LIST) {
		n = config_setting_length(s);
	} else {
		return fail(p, s, path, "expected an array [ ] of strings, got %s (valid: %s)",
			    type_name(s), valid);
	}
	if (n > CFG_MAX_LISTEN)
		return fail(p, s, path, "%d addresses (valid: at most %d)", n, CFG_MAX_LISTEN);
	c->n_listen = 0;
	for (i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_type(s) == CONFIG_TYPE_STRING ? s
					    : config_setting_get_elem(s, (unsigned)i);
		const char *v;
		unsigned j;

		if (config_setting_type(e) != CONFIG_TYPE_STRING)
			return fail(p, e, path, "expected a string, got %s (valid: %s)",
				    type_name(e), valid);
		v = config_setting_get_string(e);
		if (!config_parse_addr(v, 0, &c->listen[c->n_listen]))
			return fail(p, e, path, "'%s' is not an IP address (valid: %s)", v, valid);
		/* the daemon binds every listener to udp_port: say so rather than ignore it */
		if (addr_port(&c->listen[c->n_listen]) != 0)
			return fail(p, e, path, "'%s': no port here (valid: an address; every "
				    "listening socket uses global.udp_port)", v);
		for (j = 0; j < c->n_listen; j++)
			if (addr_equal(&c->listen[j], &c->listen[c->n_listen]))
				return fail(p, e, path, "'%s' is listed twice", v);
		c->n_listen++;
	}
	return true;
}

static void print_str(FILE *f, const char *s);

static void print_listen(FILE *f, const struct l2tpd_config *c, const void *obj, int ind)
{
	char buf[CFG_ADDR_STRLEN];
	unsigned i;

	(void)obj;
	(void)ind;
	fputs("[", f);
	for (i = 0; i < c->n_listen; i++) {
		fputs(i ? ", " : " ", f);
		print_str(f, addr_fmt(&c->listen[i], c->udp_port, buf, sizeof(buf)));
	}
	fputs(c->n_listen ? " ]" : "]", f);
}

static bool parse_router_id(struct pctx *p, const config_setting_t *s, void *obj,
			    const char *path, const struct opt *o)
{
	static const char valid[] = "a dotted quad like \"192.0.2.1\", an integer "
				    "1..4294967295, or \"\" to derive it from a local address";
	struct l2tpd_config *c = obj;
	long long v;

	(void)o;
	if (config_setting_type(s) == CONFIG_TYPE_STRING) {
		const char *str = config_setting_get_string(s);
		struct in_addr in;
		char *end;

		if (!*str) {
			c->router_id = 0;
			c->router_id_set = false;
			return true;
		}
		if (inet_pton(AF_INET, str, &in) == 1) {
			v = ntohl(in.s_addr);
		} else if (isdigit((unsigned char)str[0]) && strlen(str) <= 10) {
			v = strtoll(str, &end, 10);
			if (*end)
				return fail(p, s, path, "'%s' is not a router id (valid: %s)", str,
					    valid);
		} else {
			return fail(p, s, path, "'%s' is not a router id (valid: %s)", str, valid);
		}
	} else if (config_setting_type(s) == CONFIG_TYPE_INT ||
		   config_setting_type(s) == CONFIG_TYPE_INT64) {
		if (!get_int(p, s, path, valid, &v))
			return false;
	} else {
		return fail(p, s, path, "expected a string or an integer, got %s (valid: %s)",
			    type_name(s), valid);
	}
	if (v <= 0 || v > UINT32_MAX)
		return fail(p, s, path, "%lld is not a valid router id (valid: %s)", v, valid);
	c->router_id = (uint32_t)v;
	c->router_id_set = true;
	return true;
}

static void print_router_id(FILE *f, const struct l2tpd_config *c, const void *obj, int ind)
{
	char buf[INET_ADDRSTRLEN] = "";
	struct in_addr in;

	(void)obj;
	(void)ind;
	if (c->router_id_set) {
		in.s_addr = htonl(c->router_id);
		inet_ntop(AF_INET, &in, buf, sizeof(buf));
	}
	print_str(f, buf);
}

/* ---- secret, secret_file ---- */

/* The sibling setting key of s (in the same group) when it is a non-empty string. */
static const config_setting_t *sibling_set(const config_setting_t *s, const char *key)
{
	const config_setting_t *g = config_setting_parent(s);
	const config_setting_t *o = g ? config_setting_get_member(g, key) : NULL;

	if (o == NULL || config_setting_type(o) != CONFIG_TYPE_STRING ||
	    config_setting_get_string(o)[0] == '\0')
		return NULL;
	return o;
}

static bool secret_both(struct pctx *p, const config_setting_t *s, const char *path,
			const config_setting_t *other)
{
	return fail(p, s, path, "set together with '%s' (line %u) (valid: one of them, the "
		    "secret itself or the file holding it)", config_setting_name(other),
		    config_setting_source_line(other));
}

/*
 * A secret from a file: owned by root or the daemon's user and closed to
 * other users (0600, 0640), its content the secret without one trailing
 * newline.  The file's problems are the setting's.
 */
static bool read_secret_file(struct pctx *p, const config_setting_t *s, const char *path,
			     const char *file, char *out)
{
	char buf[CFG_SECRET_MAX + 2];
	size_t len = 0;
	struct stat st;
	bool ok = false;
	ssize_t n;
	int fd;

	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return fail(p, s, path, "cannot read %s: %s", file, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		fail(p, s, path, "%s is not a regular file (valid: a file holding the secret)", file);
		goto out;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		fail(p, s, path, "%s is owned by uid %u, neither root nor l2tpv3d's (uid %u) "
		     "(valid: owned by root or the daemon's user)", file, (unsigned)st.st_uid,
		     (unsigned)geteuid());
		goto out;
	}
	if (st.st_mode & (S_IRWXO | S_IWGRP)) {
		fail(p, s, path, "%s is %s (mode %04o) (valid: mode 0600 or 0640; chmod o-rwx,g-w "
		     "it)", file, st.st_mode & S_IROTH ? "readable by every user" :
		     st.st_mode & S_IRWXO ? "open to every user" : "writable by its group",
		     (unsigned)(st.st_mode & 07777));
		goto out;
	}
	while (len < sizeof(buf) - 1) {
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fail(p, s, path, "cannot read %s: %s", file, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len == 0)
		fail(p, s, path, "%s is empty (valid: the secret, on one line)", file);
	else if (len >= CFG_SECRET_MAX)
		fail(p, s, path, "%s holds more than %d characters (valid: a secret of at most %d)",
		     file, CFG_SECRET_MAX - 1, CFG_SECRET_MAX - 1);
	else if (memchr(buf, '\0', len) != NULL)
		fail(p, s, path, "%s holds a NUL byte (valid: a secret without one)", file);
	else
		ok = true;
	if (ok) {
		memcpy(out, buf, len);
		out[len] = '\0';
	}
out:
	explicit_bzero(buf, sizeof(buf));
	close(fd);
	return ok;
}

/* secret: "" beside a secret_file is how -nv prints one; otherwise it replaces the file's. */
static bool parse_secret(struct pctx *p, const config_setting_t *s, void *obj, const char *path,
			 const struct opt *o)
{
	const config_setting_t *other = sibling_set(s, "secret_file");
	const char *v;

	if (!parse_string(p, s, path, NULL, &v))
		return false;
	if (other != NULL && v[0] != '\0')
		return secret_both(p, s, path, other);
	if (other != NULL)
		return true;
	if (strlen(v) >= o->size)
		return fail(p, s, path, "too long: %zu characters (valid: at most %zu)", strlen(v),
			    o->size - 1);
	memcpy(field(obj, o), v, strlen(v) + 1);
	((char *)obj + o->off2)[0] = '\0';
	return true;
}

/* secret_file: the secret read from it now (each load and reload); "" for none. */
static bool parse_secret_file(struct pctx *p, const config_setting_t *s, void *obj,
			      const char *path, const struct opt *o)
{
	const config_setting_t *other = sibling_set(s, "secret");
	char why[WHY_MAX], buf[CFG_PATH_MAX * 2], secret[CFG_SECRET_MAX];
	const char *v;

	if (!parse_string(p, s, path, "a file's path, absolute or relative to the main file's "
			  "directory", &v))
		return false;
	if (v[0] == '\0') {
		if (config_setting_get_member(config_setting_parent(s), "secret") == NULL) {
			((char *)field(obj, o))[0] = '\0';
			((char *)obj + o->off2)[0] = '\0';
		}
		return true;
	}
	if (other != NULL)
		return secret_both(p, s, path, other);
	if (strlen(v) >= o->size)
		return fail(p, s, path, "too long: %zu characters (valid: at most %zu)", strlen(v),
			    o->size - 1);
	if (!check_printable(v, why, sizeof(why)))
		return fail(p, s, path, "%s", why);
	if (!read_secret_file(p, s, path, rel_path(p->incdir, v, buf, sizeof(buf)), secret))
		return false;
	memcpy(field(obj, o), v, strlen(v) + 1);
	memcpy((char *)obj + o->off2, secret, sizeof(secret));
	explicit_bzero(secret, sizeof(secret));
	return true;
}

static bool parse_match(struct pctx *p, const config_setting_t *s, void *obj, const char *path,
			const struct opt *o)
{
	struct peer_profile *pp = obj;
	char why[WHY_MAX];
	const char *v;

	(void)o;
	if (!parse_string(p, s, path, "\"any\", \"192.0.2.0/24\", \"2001:db8::/32\"", &v))
		return false;
	if (!prefix_parse(v, &pp->match, why, sizeof(why)))
		return fail(p, s, path, "%s", why);
	return true;
}

static void print_match(FILE *f, const struct l2tpd_config *c, const void *obj, int ind)
{
	const struct peer_profile *pp = obj;
	char buf[INET6_ADDRSTRLEN + 8];

	(void)c;
	(void)ind;
	print_str(f, config_prefix_str(&pp->match, buf, sizeof(buf)));
}

/* Interface address "a.b.c.d/len" or "v6/len" (host bits are the point here); "" for none. */
static bool parse_if_address(struct pctx *p, const config_setting_t *s, void *obj,
			     const char *path, const struct opt *o)
{
	static const char valid[] = "\"\" for none, or an address with its prefix length, like "
				    "\"192.0.2.1/24\" or \"2001:db8::1/64\"";
	char host[INET6_ADDRSTRLEN + 1], out[INET6_ADDRSTRLEN];
	uint8_t a[16];
	const char *v, *slash;
	size_t hl;
	unsigned plen = 0, maxlen, i;
	int fam;

	if (!parse_string(p, s, path, valid, &v))
		return false;
	if (!*v) {
		((char *)field(obj, o))[0] = '\0';
		return true;
	}
	slash = strchr(v, '/');
	hl = slash ? (size_t)(slash - v) : strlen(v);
	if (hl == 0 || hl >= sizeof(host))
		return fail(p, s, path, "'%s' is not an address (valid: %s)", v, valid);
	memcpy(host, v, hl);
	host[hl] = '\0';
	if (inet_pton(AF_INET, host, a) == 1) {
		fam = AF_INET;
		maxlen = 32;
	} else if (inet_pton(AF_INET6, host, a) == 1) {
		fam = AF_INET6;
		maxlen = 128;
	} else {
		return fail(p, s, path, "'%s' is not an address (valid: %s)", v, valid);
	}
	if (slash) {
		for (i = 1; slash[i] && i <= 3 && isdigit((unsigned char)slash[i]); i++)
			plen = plen * 10 + (unsigned)(slash[i] - '0');
		if (i == 1 || slash[i] || plen > maxlen)
			return fail(p, s, path, "'%s': bad prefix length (valid: 0..%u)", v, maxlen);
	} else {
		plen = maxlen;
	}
	inet_ntop(fam, a, out, sizeof(out));
	snprintf(field(obj, o), o->size, "%s/%u", out, plen);
	return true;
}

static bool parse_tunnel_addr(struct pctx *p, const config_setting_t *s, void *obj,
			      const char *path, const struct opt *o, bool optional)
{
	struct cfg_addr *a = field(obj, o);
	const char *v;
	char valid[160];

	if (optional)
		snprintf(valid, sizeof(valid), "\"\" for any, or an IP address like "
			 "\"192.0.2.1\" or \"2001:db8::1\"");
	else
		snprintf(valid, sizeof(valid), "an IP address with an optional port, like "
			 "\"192.0.2.2\", \"192.0.2.2:1701\", \"[2001:db8::2]:1701\"%s",
			 o->required ? "" : ", or \"\" with 'pool' set");
	if (!parse_string(p, s, path, valid, &v))
		return false;
	if (!*v && (optional || !o->required)) {
		memset(a, 0, sizeof(*a));
		return true;
	}
	if (!config_parse_addr(v, 0, a))
		return fail(p, s, path, "'%s' is not an IP address (valid: %s; host names are "
			    "not resolved)", v, valid);
	if (optional && addr_port(a) != 0)
		return fail(p, s, path, "'%s': no port here (valid: an address; the source port "
			    "comes from the tunnel profile's udp_src_port)", v);
	return true;
}

static bool parse_peer_addr(struct pctx *p, const config_setting_t *s, void *obj,
			    const char *path, const struct opt *o)
{
	return parse_tunnel_addr(p, s, obj, path, o, false);
}

static bool parse_local_addr(struct pctx *p, const config_setting_t *s, void *obj,
			     const char *path, const struct opt *o)
{
	return parse_tunnel_addr(p, s, obj, path, o, true);
}

static void print_peer_addr(FILE *f, const struct l2tpd_config *c, const void *obj, int ind)
{
	const struct static_tunnel *t = obj;
	const struct tunnel_profile *tp = config_tunnel_profile(c, t->profile);
	char buf[CFG_ADDR_STRLEN];

	(void)ind;
	print_str(f, addr_fmt(&t->peer, tp ? tp->udp_port : 0, buf, sizeof(buf)));
}

/*
 * A static session's backup tunnels: one name or a list of them, each a
 * static tunnel (checked once every tunnel is known: check_backups).
 */
static bool parse_backup(struct pctx *p, const config_setting_t *s, void *obj, const char *path,
			 const struct opt *o)
{
	struct static_session *ss = obj;
	int n = config_setting_is_array(s) || config_setting_is_list(s) ? config_setting_length(s) : 1;
	const char *v;

	(void)o;
	if (n > CFG_MAX_BACKUPS)
		return fail(p, s, path, "%d backup tunnels (valid: at most %d)", n, CFG_MAX_BACKUPS);
	ss->n_backup = 0;
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = n == 1 && config_setting_type(s) == CONFIG_TYPE_STRING ?
					    s : config_setting_get_elem(s, (unsigned)i);

		v = e ? config_setting_get_string(e) : NULL;
		if (v == NULL || v[0] == '\0' || strlen(v) >= CFG_NAME_MAX)
			return fail(p, e ? e : s, path, "not a tunnel name (valid: the name of a static "
				    "tunnel, or a list of them, like [\"to-lns-b\"])");
		snprintf(ss->backup[ss->n_backup++], CFG_NAME_MAX, "%s", v);
	}
	return true;
}

static void print_backup(FILE *f, const struct l2tpd_config *c, const void *obj, int ind)
{
	const struct static_session *ss = obj;

	(void)c;
	(void)ind;
	fputs("[", f);
	for (unsigned i = 0; i < ss->n_backup; i++) {
		fputs(i ? ", " : " ", f);
		print_str(f, ss->backup[i]);
	}
	fputs(ss->n_backup ? " ]" : "]", f);
}

/* A pool member's address as written: the port only when it sets one. */
static bool parse_member_addr(struct pctx *p, const config_setting_t *s, void *obj,
			      const char *path, const struct opt *o)
{
	static const char valid[] = "an IP address with an optional port, like \"192.0.2.2\", "
				    "\"192.0.2.2:1701\", \"[2001:db8::2]:1701\"";
	struct cfg_addr *a = field(obj, o);
	const char *v;

	if (!parse_string(p, s, path, valid, &v))
		return false;
	if (!config_parse_addr(v, 0, a))
		return fail(p, s, path, "'%s' is not an IP address (valid: %s; host names are "
			    "not resolved)", v, valid);
	return true;
}

static void print_member_addr(FILE *f, const struct l2tpd_config *c, const void *obj, int ind)
{
	const struct lns_pool_member *m = obj;
	char buf[CFG_ADDR_STRLEN];

	(void)c;
	(void)ind;
	print_str(f, addr_fmt(&m->address, 0, buf, sizeof(buf)));
}

/*
 * Its files are merged into the lists the output shows: "" keeps the
 * output a fixed point (loaded again, it must not add them twice).
 */
static bool print_secrets;

/*
 * The pair's key: long enough that guessing it is no way in.  "" is unset,
 * as printed (no pair; a pair without it is refused by parse_global()).
 */
static bool check_ha_secret(const char *s, char *why, size_t wl)
{
	if (s[0] == '\0' || (strlen(s) >= 16 && check_printable(s, why, wl)))
		return true;
	if (strlen(s) < 16)
		snprintf(why, wl, "at least 16 characters");
	return false;
}

static void print_ha_secret(FILE *f, const struct l2tpd_config *c, const void *obj, int ind)
{
	(void)obj;
	(void)ind;
	print_str(f, print_secrets || c->ha_secret[0] == '\0' ? c->ha_secret : "********");
}

static void print_include_dir(FILE *f, const struct l2tpd_config *c, const void *obj, int ind)
{
	(void)c;
	(void)obj;
	(void)ind;
	print_str(f, "");
}

static void print_local_addr(FILE *f, const struct l2tpd_config *c, const void *obj, int ind)
{
	const struct static_tunnel *t = obj;
	char buf[CFG_ADDR_STRLEN];

	(void)c;
	(void)ind;
	print_str(f, addr_fmt(&t->local, 0, buf, sizeof(buf)));
}

static bool parse_sessions(struct pctx *p, const config_setting_t *s, void *obj,
			   const char *path, const struct opt *o);
static void print_sessions(FILE *f, const struct l2tpd_config *c, const void *obj, int ind);
static bool parse_peer_sessions(struct pctx *p, const config_setting_t *s, void *obj,
				const char *path, const struct opt *o);
static void print_peer_sessions(FILE *f, const struct l2tpd_config *c, const void *obj, int ind);
static bool parse_pool_members(struct pctx *p, const config_setting_t *s, void *obj,
			       const char *path, const struct opt *o);
static void print_pool_members(FILE *f, const struct l2tpd_config *c, const void *obj, int ind);

/* ---- the tables ---- */

static const int cookie_lens[] = { 0, 4, 8, -1 };

#define G struct l2tpd_config
static const struct opt global_opts[] = {
	O_SPECIAL(G, "listen", listen, parse_listen, print_listen),
	O_UINT(G, "udp_port", udp_port, 1, 65535, NULL),
	O_BOOL(G, "listen_ip", listen_ip),
	O_ENUM(G, "responder_port", responder_port, responder_port_names),
	O_ENUM(G, "reload_peers", reload_peers, reload_peers_names),
	O_WORD(G, "event_loop", event_loop, event_loop_names),
	O_STR(G, "hostname", hostname, check_hostname),
	O_SPECIAL(G, "router_id", router_id, parse_router_id, print_router_id),
	O_SECRET(G),
	{ .name = "include_dir", .kind = OPT_STR, FIELD(G, include_dir), .check = check_printable,
	  .print = print_include_dir },
	O_UINT(G, "max_tunnels", max_tunnels, 1, UINT32_MAX, NULL),
	O_UINT(G, "max_sessions", max_sessions, 1, UINT32_MAX, NULL),
	O_UINT(G, "max_sessions_per_tunnel", max_sessions_per_tunnel, 1, UINT32_MAX, "(no limit)"),
	O_UINT(G, "max_half_open", max_half_open, 1, UINT32_MAX, NULL),
	O_UINT(G, "reserved_tunnels", reserved_tunnels, 1, UINT32_MAX, "(none)"),
	O_BOOL(G, "snmp_config_id", snmp_config_id),
	O_STR(G, "ctl_socket", ctl_socket, check_sockpath),
	O_STR(G, "ctl_group", ctl_group, check_group),
	O_UINT(G, "ctl_max_clients", ctl_max_clients, 1, 65536, NULL),
	O_UINT(G, "ctl_max_output", ctl_max_output, 65536, UINT32_MAX, NULL),
	O_UINT(G, "ctl_idle_timeout", ctl_idle_timeout, 1, 86400, NULL),
	O_WORD(G, "log_level", log_level, log_level_names),
	O_WORD(G, "dataplane", dataplane, dataplane_names),
	O_STR(G, "state_dir", state_dir, check_abspath),
	O_STR(G, "metrics_listen", metrics_listen, check_host_port),
	O_STR(G, "ha_listen", ha_listen, check_host_port),
	O_STR(G, "ha_peer", ha_peer, check_host_port),
	{ .name = "ha_secret", .kind = OPT_STR, FIELD(G, ha_secret), .check = check_ha_secret,
	  .print = print_ha_secret },
	O_BOOL(G, "metrics_session_counters", metrics_session_counters),
	O_END
};
#undef G

#define T struct tunnel_profile
static const struct opt tunnel_profile_opts[] = {
	O_STR(T, "name", name, check_name),
	O_ENUM(T, "encap", encap, encap_names),
	O_ENUM(T, "udp_src_port", udp_src_port, sport_names),
	O_UINT(T, "udp_port", udp_port, 1, 65535, NULL),
	O_TIME(T, "hello_interval", hello_interval_ms, 1000, 86400000, "(off)"),
	O_TIME(T, "setup_timeout", setup_timeout_ms, 1000, 3600000, "(off)"),
	O_TIME(T, "session_setup_timeout", session_setup_timeout_ms, 1000, 3600000, NULL),
	O_TIME(T, "retransmit_initial", retransmit_initial_ms, 100, 60000, NULL),
	O_TIME(T, "retransmit_cap", retransmit_cap_ms, 100, 600000, NULL),
	O_UINT(T, "max_retries", max_retries, 1, 1000, NULL),
	O_UINT(T, "sccrq_max_retries", sccrq_max_retries, 1, 1000, NULL),
	O_UINT(T, "sccrp_max_retries", sccrp_max_retries, 1, 1000, NULL),
	O_TIME(T, "delayed_ack", delayed_ack_ms, 0, 5000, NULL),
	O_UINT(T, "rx_window", rx_window, 1, 65535, NULL),
	O_UINT(T, "send_window", send_window, 1, 65535, "(the peer's Receive Window Size)"),
	O_ENUM(T, "digest", digest, digest_names),
	O_SECRET(T),
	O_BOOL(T, "hide_avps", hide_avps),
	O_BOOL(T, "send_ack_msg", send_ack_msg),
	O_UINT(T, "max_sessions", max_sessions, 1, UINT32_MAX, "(the global limits)"),
	O_UINT(T, "dscp", dscp, 0, 63, NULL),
	O_UINT(T, "ttl", ttl, 1, 255, "(the system's)"),
	O_ENUM(T, "df", df, df_names),
	O_STR(T, "bind_device", bind_device, check_ifname),
	O_BOOL(T, "failover", failover),
	O_TIME(T, "recovery_time", recovery_time_ms, 1000, 600000, NULL),
	O_STR(T, "description", description, check_description),
	O_END
};
#undef T

#define S struct session_profile
static const struct opt session_profile_opts[] = {
	O_STR(S, "name", name, check_name),
	O_ENUM(S, "pw_type", pw_type, pw_config_names),
	{ .name = "cookie_len", .kind = OPT_UINT, FIELD(S, cookie_len), .set = cookie_lens },
	O_ENUM(S, "l2spec", l2spec, l2spec_names),
	O_ENUM(S, "data_seq", data_seq, data_seq_names),
	O_STR(S, "ifname", ifname, check_ifname_pattern),
	O_UINT(S, "mtu", mtu, 68, 65535, "(from the path MTU)"),
	O_STR(S, "bridge", bridge, check_ifname),
	{ .name = "address", .kind = OPT_STR, FIELD(S, address), .parse = parse_if_address },
	O_ENUM(S, "ipv6_link_local", ipv6_link_local, ll6_names),
	O_UINT(S, "vlan_id", vlan_id, 1, 4094, "(none)"),
	O_STR(S, "pppd_options", pppd_options, check_printable),
	O_STR(S, "description", description, check_description),
	O_END
};
#undef S

#define P struct peer_profile
static const struct opt peer_opts[] = {
	O_STR(P, "name", name, check_name),
	{ .name = "match", .kind = OPT_SPECIAL, FIELD(P, match), .parse = parse_match,
	  .print = print_match, .required = true },
	O_BOOL(P, "accept", accept),
	O_STR(P, "tunnel_profile", tunnel_profile, NULL),
	O_STR(P, "session_profile", session_profile, NULL),
	O_SECRET(P),
	O_SPECIAL(P, "sessions", sessions, parse_peer_sessions, print_peer_sessions),
	O_BOOL(P, "refuse_unknown_sessions", refuse_unknown_sessions),
	O_UINT(P, "max_tunnels", max_tunnels, 1, UINT32_MAX, "(the global limit)"),
	O_UINT(P, "max_sessions", max_sessions, 1, UINT32_MAX, "(the global limits)"),
	O_STR(P, "description", description, check_description),
	O_END
};
static const struct opt peer_default_opts[] = {
	O_BOOL(P, "accept", accept),
	O_STR(P, "tunnel_profile", tunnel_profile, NULL),
	O_STR(P, "session_profile", session_profile, NULL),
	O_SECRET(P),
	O_SPECIAL(P, "sessions", sessions, parse_peer_sessions, print_peer_sessions),
	O_BOOL(P, "refuse_unknown_sessions", refuse_unknown_sessions),
	O_UINT(P, "max_tunnels", max_tunnels, 1, UINT32_MAX, "(the global limit)"),
	O_UINT(P, "max_sessions", max_sessions, 1, UINT32_MAX, "(the global limits)"),
	O_END
};
#undef P

#define SM struct session_match
static const struct opt match_opts[] = {
	{ .name = "remote_end_id", .kind = OPT_STR, FIELD(SM, remote_end_id),
	  .check = check_nonempty_printable, .required = true },
	O_STR(SM, "profile", profile, NULL),
	O_STR(SM, "ifname", ifname, check_match_ifname),
	O_STR(SM, "bridge", bridge, check_ifname),
	O_END
};
#undef SM

#define ST struct static_tunnel
static const struct opt tunnel_opts[] = {
	O_STR(ST, "name", name, check_name),
	O_SPECIAL(ST, "peer", peer, parse_peer_addr, print_peer_addr),
	O_STR(ST, "pool", pool, NULL),
	O_SPECIAL(ST, "local", local, parse_local_addr, print_local_addr),
	O_STR(ST, "profile", profile, NULL),
	O_SPECIAL(ST, "sessions", sessions, parse_sessions, print_sessions),
	O_BOOL(ST, "shutdown", shutdown),
	O_STR(ST, "description", description, check_description),
	O_END
};
#undef ST

#define LP struct lns_pool
static const struct opt pool_opts[] = {
	O_STR(LP, "name", name, check_name),
	{ .name = "members", .kind = OPT_SPECIAL, FIELD(LP, members), .parse = parse_pool_members,
	  .print = print_pool_members, .required = true },
	O_TIME(LP, "hold_down", hold_down_ms, 1000, 86400000, "(none)"),
	O_END
};
#undef LP

#define PM struct lns_pool_member
static const struct opt member_opts[] = {
	{ .name = "address", .kind = OPT_SPECIAL, FIELD(PM, address), .parse = parse_member_addr,
	  .print = print_member_addr, .required = true },
	O_UINT(PM, "weight", weight, 1, 1000, NULL),
	O_END
};
#undef PM

#define SS struct static_session
static const struct opt session_opts[] = {
	O_STR(SS, "name", name, check_name),
	O_STR(SS, "profile", profile, NULL),
	O_STR(SS, "remote_end_id", remote_end_id, check_nonempty_printable),
	O_STR(SS, "ifname", ifname, check_ifname_pattern_or_empty),
	O_SPECIAL(SS, "backup", backup, parse_backup, print_backup),
	O_TIME(SS, "revert_delay", revert_delay_ms, 0, 86400000, NULL),
	O_BOOL(SS, "revert", revert),
	O_BOOL(SS, "shutdown", shutdown),
	O_STR(SS, "description", description, check_description),
	O_END
};
#undef SS

#define H struct hook_config
static const struct opt hook_opts[] = {
	O_STR(H, "tunnel_up", tunnel_up, check_abspath_or_empty),
	O_STR(H, "tunnel_down", tunnel_down, check_abspath_or_empty),
	O_STR(H, "session_up", session_up, check_abspath_or_empty),
	O_STR(H, "session_down", session_down, check_abspath_or_empty),
	O_UINT(H, "max_concurrent", max_concurrent, 1, 1024, NULL),
	O_TIME(H, "timeout", timeout_ms, 1000, 3600000, NULL),
	O_END
};
#undef H

#define SN struct snmp_config
static const struct opt snmp_opts[] = {
	O_BOOL(SN, "enabled", enabled),
	O_STR(SN, "agentx_socket", agentx_socket, check_nonempty_printable),
	O_END
};
#undef SN

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

/* Kept in step with the tables by check_config (it compares with config_print()). */
const char *const config_known_settings[] = {
	"global.listen", "global.udp_port", "global.listen_ip", "global.event_loop",
	"global.responder_port", "global.reload_peers",
	"global.hostname", "global.router_id", "global.secret", "global.secret_file",
	"global.include_dir", "global.max_tunnels",
	"global.metrics_listen", "global.ha_listen", "global.ha_peer", "global.ha_secret", "global.metrics_session_counters",
	"global.max_sessions", "global.max_sessions_per_tunnel", "global.max_half_open",
	"global.reserved_tunnels",
	"global.snmp_config_id", "global.ctl_socket", "global.ctl_group",
	"global.ctl_max_clients", "global.ctl_max_output", "global.ctl_idle_timeout",
	"global.log_level",
	"global.dataplane", "global.state_dir",

	"tunnel_profiles.name", "tunnel_profiles.encap", "tunnel_profiles.udp_src_port",
	"tunnel_profiles.udp_port", "tunnel_profiles.hello_interval", "tunnel_profiles.setup_timeout",
	"tunnel_profiles.session_setup_timeout",
	"tunnel_profiles.retransmit_initial", "tunnel_profiles.retransmit_cap",
	"tunnel_profiles.max_retries", "tunnel_profiles.sccrq_max_retries",
	"tunnel_profiles.sccrp_max_retries",
	"tunnel_profiles.delayed_ack", "tunnel_profiles.rx_window", "tunnel_profiles.send_window",
	"tunnel_profiles.digest",
	"tunnel_profiles.secret", "tunnel_profiles.secret_file", "tunnel_profiles.hide_avps",
	"tunnel_profiles.send_ack_msg", "tunnel_profiles.max_sessions",
	"tunnel_profiles.dscp", "tunnel_profiles.ttl", "tunnel_profiles.df",
	"tunnel_profiles.bind_device", "tunnel_profiles.failover", "tunnel_profiles.recovery_time",
	"tunnel_profiles.description",

	"session_profiles.name", "session_profiles.pw_type", "session_profiles.cookie_len",
	"session_profiles.l2spec", "session_profiles.data_seq", "session_profiles.ifname",
	"session_profiles.mtu", "session_profiles.bridge", "session_profiles.address",
	"session_profiles.ipv6_link_local", "session_profiles.vlan_id",
	"session_profiles.pppd_options", "session_profiles.description",

	"peers.name", "peers.match", "peers.accept", "peers.tunnel_profile",
	"peers.session_profile", "peers.secret", "peers.secret_file", "peers.sessions",
	"peers.refuse_unknown_sessions", "peers.max_tunnels", "peers.max_sessions",
	"peers.description",
	"peers.sessions.remote_end_id", "peers.sessions.profile", "peers.sessions.ifname",
	"peers.sessions.bridge",

	"peer_default.accept", "peer_default.tunnel_profile", "peer_default.session_profile",
	"peer_default.secret", "peer_default.secret_file", "peer_default.sessions", "peer_default.refuse_unknown_sessions",
	"peer_default.max_tunnels", "peer_default.max_sessions",

	"lns_pools.name", "lns_pools.members", "lns_pools.members.address",
	"lns_pools.members.weight", "lns_pools.hold_down",

	"tunnels.name", "tunnels.peer", "tunnels.pool", "tunnels.local", "tunnels.profile",
	"tunnels.sessions", "tunnels.shutdown", "tunnels.description",
	"tunnels.sessions.name", "tunnels.sessions.profile", "tunnels.sessions.remote_end_id",
	"tunnels.sessions.ifname", "tunnels.sessions.backup", "tunnels.sessions.revert_delay",
	"tunnels.sessions.revert", "tunnels.sessions.shutdown", "tunnels.sessions.description",

	"hooks.tunnel_up", "hooks.tunnel_down", "hooks.session_up", "hooks.session_down",
	"hooks.max_concurrent", "hooks.timeout",

	"snmp.enabled", "snmp.agentx_socket",
	NULL
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

static bool parse_sessions(struct pctx *p, const config_setting_t *s, void *obj,
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

static bool parse_pool_members(struct pctx *p, const config_setting_t *s, void *obj,
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

static bool parse_peer_sessions(struct pctx *p, const config_setting_t *s, void *obj,
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

static bool parse_root(struct pctx *p, const config_setting_t *const *roots, unsigned nr)
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

/* ---- printing ---- */

/* A libconfig string literal: quotes, backslashes and control characters escaped. */
static void print_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		switch (ch) {
		case '"':	fputs("\\\"", f); break;
		case '\\':	fputs("\\\\", f); break;
		case '\n':	fputs("\\n", f); break;
		case '\t':	fputs("\\t", f); break;
		case '\r':	fputs("\\r", f); break;
		case '\f':	fputs("\\f", f); break;
		default:
			if (ch < 0x20 || ch == 0x7f)
				fprintf(f, "\\x%02x", ch);
			else
				fputc(ch, f);
		}
	}
	fputc('"', f);
}

static bool print_secrets;

static void print_value(FILE *f, const struct l2tpd_config *c, const struct opt *o,
			const void *obj, int ind)
{
	const void *fp = cfield(obj, o);
	unsigned long long v;
	char buf[32];
	bool b;

	if (o->print) {
		o->print(f, c, obj, ind);
		return;
	}
	switch (o->kind) {
	case OPT_BOOL:
		memcpy(&b, fp, sizeof(b));
		fputs(b ? "true" : "false", f);
		break;
	case OPT_UINT:
		v = load_uint(fp, o->size);
		fprintf(f, "%llu%s", v, v > INT32_MAX ? "L" : "");
		break;
	case OPT_TIME:
		fputs(secs_fmt((long long)load_uint(fp, 4), buf, sizeof(buf)), f);
		break;
	case OPT_STR:
		/* -nv output lands in tickets and chats: secrets only when asked, a file's never */
		if (o->parse == parse_secret && *((const char *)obj + o->off2))
			print_str(f, "");
		else
			print_str(f, o->parse == parse_secret && !print_secrets &&
				  *(const char *)fp ? "********" : fp);
		break;
	case OPT_ENUM: {
		const char *n = name_of(o->names, (int)load_uint(fp, o->size));

		print_str(f, n ? n : "unknown");
		break;
	}
	case OPT_SPECIAL:
		break;
	}
}

void config_print_secrets(bool show)
{
	print_secrets = show;
}

static void print_group(FILE *f, const struct l2tpd_config *c, const struct opt *opts,
			const void *obj, int ind)
{
	for (; opts->name; opts++) {
		fprintf(f, "%*s%s = ", ind, "", opts->name);
		print_value(f, c, opts, obj, ind);
		fputs(";\n", f);
	}
}

/* "( {...}, {...} )" with the closing parenthesis at ind. */
static void print_list(FILE *f, const struct l2tpd_config *c, const struct opt *opts,
		       const void *arr, size_t size, unsigned n, int ind)
{
	unsigned i;

	if (!n) {
		fputs("( )", f);
		return;
	}
	fputs("(\n", f);
	for (i = 0; i < n; i++) {
		fprintf(f, "%*s{\n", ind + 2, "");
		print_group(f, c, opts, (const char *)arr + i * size, ind + 4);
		fprintf(f, "%*s}%s\n", ind + 2, "", i + 1 < n ? "," : "");
	}
	fprintf(f, "%*s)", ind, "");
}

static void print_sessions(FILE *f, const struct l2tpd_config *c, const void *obj, int ind)
{
	const struct static_tunnel *t = obj;

	print_list(f, c, session_opts, t->sessions, sizeof(*t->sessions), t->n_sessions, ind);
}

static void print_peer_sessions(FILE *f, const struct l2tpd_config *c, const void *obj, int ind)
{
	const struct peer_profile *pp = obj;

	print_list(f, c, match_opts, pp->sessions, sizeof(*pp->sessions), pp->n_sessions, ind);
}

static void print_pool_members(FILE *f, const struct l2tpd_config *c, const void *obj, int ind)
{
	const struct lns_pool *lp = obj;

	print_list(f, c, member_opts, lp->members, sizeof(*lp->members), lp->n_members, ind);
}

void config_print(const struct l2tpd_config *c, FILE *out)
{
	fputs("# l2tpv3d configuration, normalised: every setting with the value in effect\n"
	      "# (defaults filled in, profiles expanded, include_dir's files merged,\n"
	      "# times in seconds).\n\n", out);
	fputs("global = {\n", out);
	print_group(out, c, global_opts, c, 2);
	fputs("};\n\ntunnel_profiles = ", out);
	print_list(out, c, tunnel_profile_opts, c->tunnel_profiles, sizeof(*c->tunnel_profiles),
		   c->n_tunnel_profiles, 0);
	fputs(";\n\nsession_profiles = ", out);
	print_list(out, c, session_profile_opts, c->session_profiles,
		   sizeof(*c->session_profiles), c->n_session_profiles, 0);
	fputs(";\n\npeers = ", out);
	print_list(out, c, peer_opts, c->peers, sizeof(*c->peers), c->n_peers, 0);
	fputs(";\n\npeer_default = {\n", out);
	print_group(out, c, peer_default_opts, &c->peer_default, 2);
	fputs("};\n\nlns_pools = ", out);
	print_list(out, c, pool_opts, c->lns_pools, sizeof(*c->lns_pools), c->n_lns_pools, 0);
	fputs(";\n\ntunnels = ", out);
	print_list(out, c, tunnel_opts, c->tunnels, sizeof(*c->tunnels), c->n_tunnels, 0);
	fputs(";\n\nhooks = {\n", out);
	print_group(out, c, hook_opts, &c->hooks, 2);
	fputs("};\n\nsnmp = {\n", out);
	print_group(out, c, snmp_opts, &c->snmp, 2);
	fputs("};\n", out);
}
