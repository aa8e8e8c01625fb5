/*
 * src/config_value.c - one value: addresses and prefixes (parsed and
 * written), integers and times as the file writes them, and a setting read
 * by its table entry (struct opt).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_int.h"
#include "usl/suggest.h"

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

uint16_t addr_port(const struct cfg_addr *a)
{
	if (a->ss.ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)&a->ss)->sin_port);
	if (a->ss.ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)&a->ss)->sin6_port);
	return 0;
}

void addr_set_port(struct cfg_addr *a, uint16_t port)
{
	if (a->ss.ss_family == AF_INET)
		((struct sockaddr_in *)&a->ss)->sin_port = htons(port);
	else if (a->ss.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&a->ss)->sin6_port = htons(port);
}

/* The address, with its port unless it is 0 or omit_port. */
const char *addr_fmt(const struct cfg_addr *a, uint16_t omit_port, char *buf, size_t len)
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

bool addr_equal(const struct cfg_addr *a, const struct cfg_addr *b)
{
	char x[CFG_ADDR_STRLEN], y[CFG_ADDR_STRLEN];

	return strcmp(addr_fmt(a, 0, x, sizeof(x)), addr_fmt(b, 0, y, sizeof(y))) == 0;
}

/* Fills p from s; on error writes why (a reason, then the valid forms). */
bool prefix_parse(const char *s, struct cfg_prefix *p, char *why, size_t wl)
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
bool get_int(struct pctx *p, const config_setting_t *s, const char *path,
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
const char *secs_fmt(long long ms, char *buf, size_t len)
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

void *field(void *obj, const struct opt *o)
{
	return (char *)obj + o->off;
}

const void *cfield(const void *obj, const struct opt *o)
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

unsigned long long load_uint(const void *src, size_t size)
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

bool parse_string(struct pctx *p, const config_setting_t *s, const char *path,
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

bool parse_opt(struct pctx *p, const config_setting_t *s, void *obj, const char *path,
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

const struct opt *opt_find(const struct opt *opts, const char *name)
{
	for (; opts->name; opts++)
		if (strcmp(opts->name, name) == 0)
			return opts;
	return NULL;
}
