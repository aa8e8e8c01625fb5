/*
 * src/config_table.c - the settings: one table per section (struct opt:
 * name, kind, field, range), the words an option may take, the checks of
 * string values and the settings with a parse and print of their own
 * (addresses, secrets, lists).  Adding a setting starts here.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "config_int.h"

#define IFNAME_DIGITS		5	/* "%d" may become up to this many digits */

/* ---- names ---- */

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

const struct name_val *name_find(const struct name_val *t, const char *s)
{
	for (; t->name; t++)
		if (strcasecmp(t->name, s) == 0)
			return t;
	return NULL;
}

const char *name_of(const struct name_val *t, int val)
{
	for (; t->name; t++)
		if (t->val == val)
			return t->name;
	return NULL;
}

/* "none, md5, sha1" */
const char *names_text(const struct name_val *t, char *buf, size_t len)
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

/* ---- checks of string values ---- */

bool check_name(const char *s, char *why, size_t wl)
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

bool check_printable(const char *s, char *why, size_t wl)
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
bool parse_secret(struct pctx *p, const config_setting_t *s, void *obj, const char *path,
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

/*
 * Its files are merged into the lists the output shows: "" keeps the
 * output a fixed point (loaded again, it must not add them twice).
 */
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

/* ---- the tables ---- */

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

static const int cookie_lens[] = { 0, 4, 8, -1 };

#define G struct l2tpd_config
const struct opt global_opts[] = {
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
const struct opt tunnel_profile_opts[] = {
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
const struct opt session_profile_opts[] = {
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
const struct opt peer_opts[] = {
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
const struct opt peer_default_opts[] = {
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
const struct opt match_opts[] = {
	{ .name = "remote_end_id", .kind = OPT_STR, FIELD(SM, remote_end_id),
	  .check = check_nonempty_printable, .required = true },
	O_STR(SM, "profile", profile, NULL),
	O_STR(SM, "ifname", ifname, check_match_ifname),
	O_STR(SM, "bridge", bridge, check_ifname),
	O_END
};
#undef SM

#define ST struct static_tunnel
const struct opt tunnel_opts[] = {
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
const struct opt pool_opts[] = {
	O_STR(LP, "name", name, check_name),
	{ .name = "members", .kind = OPT_SPECIAL, FIELD(LP, members), .parse = parse_pool_members,
	  .print = print_pool_members, .required = true },
	O_TIME(LP, "hold_down", hold_down_ms, 1000, 86400000, "(none)"),
	O_END
};
#undef LP

#define PM struct lns_pool_member
const struct opt member_opts[] = {
	{ .name = "address", .kind = OPT_SPECIAL, FIELD(PM, address), .parse = parse_member_addr,
	  .print = print_member_addr, .required = true },
	O_UINT(PM, "weight", weight, 1, 1000, NULL),
	O_END
};
#undef PM

#define SS struct static_session
const struct opt session_opts[] = {
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
const struct opt hook_opts[] = {
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
const struct opt snmp_opts[] = {
	O_BOOL(SN, "enabled", enabled),
	O_STR(SN, "agentx_socket", agentx_socket, check_nonempty_printable),
	O_END
};
#undef SN

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
