/*
 * src/cli/parse.c - command words to a request, with bgpctl-style token
 * tables: one keyword table per level, each keyword leading either to the
 * next table or to a command with its argument table.
 *
 * Everything is checked here, before anything is sent, so a typo never
 * reaches the daemon and every message names the word that is wrong and
 * what would have been valid.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* Sizes from src/config.h (CFG_NAME_MAX, CFG_SECRET_MAX), minus the NUL. */
#define NAME_LEN	63
#define SECRET_LEN	127
#define DESC_LEN	127	/* CFG_DESC_MAX - 1 */
#define IFNAME_LEN	15	/* IFNAMSIZ - 1 */
#define MAX_ARGS	16

enum val_type {
	V_END = 0,		/* table sentinel */
	V_UINT,			/* decimal in [min, max] */
	V_ADDR,			/* v4, v6, v4:port, [v6]:port */
	V_ENUM,			/* one of values, sent as a string */
	V_INT_ENUM,		/* one of values, sent as a number */
	V_ENUM_LIST,		/* values, comma-separated, sent as a list of strings */
	V_STRING,		/* up to max characters */
	V_IFNAME,		/* a valid Linux interface name */
	V_FLAG,			/* no value; stores false (every flag is a no-X) */
	V_SWITCH,		/* no value; the client's own (A_CLIENT), stores true */
	V_REF,			/* "ID" or "name NAME": key or name_key */
	V_SECRET,		/* a secret, or "-": one line of standard input */
	V_SECRET_FILE,		/* a file holding the secret, not readable by every user */
	V_TEXT,			/* printable text, up to max characters */
};

#define A_REQUIRED	0x1
#define A_ONE_OF	0x2	/* exactly one of the A_ONE_OF arguments */
#define A_CLIENT	0x4	/* for l2tpv3ctl itself (req->client), not sent */

struct arg {
	const char *kw;			/* NULL: positional, shown as "ID" */
	enum val_type type;
	const char *key;		/* JSON key in args */
	unsigned flags;
	const char *const *values;	/* V_ENUM, V_INT_ENUM, V_ENUM_LIST */
	const char *name_key;		/* V_REF: key for the "name NAME" form */
	uint32_t min, max;		/* V_UINT range; V_STRING max length */
};

struct command {
	enum cmd_kind kind;
	const char *name;		/* protocol name and message prefix */
	const struct arg *args;
};

/*
 * A keyword at a command level: leads to next, or is the command cmd; with
 * both, to next when the following word is one of next's keywords.
 */
struct token {
	const char *kw;
	const struct token *next;
	const struct command *cmd;
};

static const char *const encap_values[] = { "udp", "ip", NULL };
static const char *const digest_values[] = { "none", "md5", "sha1", NULL };
static const char *const sport_values[] = { "1701", "ephemeral", NULL };
static const char *const pw_values[] = { "eth", "eth_vlan", "ppp", NULL };
static const char *const cookie_values[] = { "0", "4", "8", NULL };
static const char *const l2spec_values[] = { "none", "default", NULL };
static const char *const seq_values[] = { "none", "non-ip", "all", NULL };

#define ID_ARG(k, fl)	{ NULL, V_UINT, k, fl, .min = 1, .max = UINT32_MAX }
#define STR_ARG(kw, k, len, fl)	{ kw, V_STRING, k, fl, .max = len }
#define ENUM_ARG(kw, k, v)	{ kw, V_ENUM, k, 0, .values = v }

static const struct arg tunnel_create_args[] = {
	{ "peer", V_ADDR, "peer", .flags = A_ONE_OF },
	STR_ARG("pool", "pool", NAME_LEN, A_ONE_OF),	/* an lns_pools entry instead of a peer */
	{ "local", V_ADDR, "local", .flags = 0 },
	ENUM_ARG("encap", "encap", encap_values),
	STR_ARG("profile", "profile", NAME_LEN, 0),
	STR_ARG("name", "name", NAME_LEN, 0),
	{ "secret", V_SECRET, "secret", 0, .max = SECRET_LEN },
	{ "secret-file", V_SECRET_FILE, "secret", 0, .max = SECRET_LEN },
	{ "description", V_TEXT, "description", 0, .max = DESC_LEN },
	ENUM_ARG("digest", "digest", digest_values),
	/* the daemon keeps milliseconds in a u32 */
	{ "hello", V_UINT, "hello_interval", 0, .min = 0, .max = UINT32_MAX / 1000 },
	ENUM_ARG("src-port", "udp_src_port", sport_values),
	{ "no-wait", V_FLAG, "wait", .flags = 0 },
	{ 0 }
};

static const struct arg tunnel_delete_args[] = {
	ID_ARG("tunnel_id", A_ONE_OF),
	STR_ARG("name", "name", NAME_LEN, A_ONE_OF),
	{ "result", V_UINT, "result", 0, .min = 1, .max = UINT16_MAX },
	{ 0 }
};

static const struct arg tunnel_ref_args[] = {
	ID_ARG("tunnel_id", A_ONE_OF),
	STR_ARG("name", "name", NAME_LEN, A_ONE_OF),
	{ 0 }
};

static const struct arg session_create_args[] = {
	{ "tunnel", V_REF, "tunnel_id", A_REQUIRED, .name_key = "tunnel" },
	STR_ARG("profile", "profile", NAME_LEN, 0),
	STR_ARG("name", "name", NAME_LEN, 0),
	ENUM_ARG("pw", "pw_type", pw_values),
	{ "cookie", V_INT_ENUM, "cookie_len", 0, .values = cookie_values },
	ENUM_ARG("l2spec", "l2spec", l2spec_values),
	ENUM_ARG("seq", "data_seq", seq_values),
	{ "ifname", V_IFNAME, "ifname", .flags = 0 },
	STR_ARG("remote-end-id", "remote_end_id", NAME_LEN, 0),
	{ "description", V_TEXT, "description", 0, .max = DESC_LEN },
	{ "no-wait", V_FLAG, "wait", .flags = 0 },
	{ 0 }
};

static const struct arg session_delete_args[] = {
	ID_ARG("session_id", A_ONE_OF),
	STR_ARG("name", "name", NAME_LEN, A_ONE_OF),
	{ "result", V_UINT, "result", 0, .min = 1, .max = UINT16_MAX },
	{ 0 }
};

static const struct arg session_ref_args[] = {
	ID_ARG("session_id", A_ONE_OF),
	STR_ARG("name", "name", NAME_LEN, A_ONE_OF),
	{ 0 }
};

/* session list and stats: an optional tunnel filter */
static const struct arg tunnel_filter_args[] = {
	{ "tunnel", V_REF, "tunnel_id", 0, .name_key = "tunnel" },
	{ 0 }
};

/* the daemon's names (src/event.c) */
static const char *const event_values[] = {
	"tunnel-created", "tunnel-up", "tunnel-down", "tunnel-deleted",
	"session-created", "session-up", "session-down", "session-deleted", NULL
};

static const struct arg monitor_args[] = {
	{ "reconnect", V_SWITCH, "reconnect", .flags = A_CLIENT },
	{ "events", V_ENUM_LIST, "events", 0, .values = event_values },
	{ 0 }
};

static const struct arg no_args[] = { { 0 } };

/* debug on|off: one tunnel, or every tunnel of a peer */
static const struct arg debug_args[] = {
	{ "tunnel", V_REF, "tunnel_id", A_ONE_OF, .name_key = "tunnel" },
	{ "peer", V_ADDR, "peer", .flags = A_ONE_OF },
	{ 0 }
};

static const struct command
	cmd_tunnel_create = { CMD_TUNNEL_CREATE, "tunnel create", tunnel_create_args },
	cmd_tunnel_delete = { CMD_TUNNEL_DELETE, "tunnel delete", tunnel_delete_args },
	cmd_tunnel_show = { CMD_TUNNEL_SHOW, "tunnel show", tunnel_ref_args },
	cmd_tunnel_list = { CMD_TUNNEL_LIST, "tunnel list", no_args },
	cmd_session_create = { CMD_SESSION_CREATE, "session create", session_create_args },
	cmd_session_delete = { CMD_SESSION_DELETE, "session delete", session_delete_args },
	cmd_session_show = { CMD_SESSION_SHOW, "session show", session_ref_args },
	cmd_session_list = { CMD_SESSION_LIST, "session list", tunnel_filter_args },
	cmd_show_daemon = { CMD_SHOW_DAEMON, "show daemon", no_args },
	cmd_stats = { CMD_STATS, "stats", tunnel_filter_args },
	cmd_stats_reset = { CMD_STATS_RESET, "stats reset", tunnel_filter_args },
	cmd_metrics = { CMD_METRICS, "metrics", no_args },
	cmd_reload = { CMD_RELOAD, "reload", no_args },
	cmd_restart = { CMD_RESTART, "restart", no_args },
	cmd_failover_takeover = { CMD_FAILOVER_TAKEOVER, "failover takeover", no_args },
	cmd_debug_on = { CMD_DEBUG_ON, "debug on", debug_args },
	cmd_debug_off = { CMD_DEBUG_OFF, "debug off", debug_args },
	cmd_monitor = { CMD_MONITOR, "monitor", monitor_args };

static const struct token tunnel_tokens[] = {
	{ "create", NULL, &cmd_tunnel_create },
	{ "delete", NULL, &cmd_tunnel_delete },
	{ "show", NULL, &cmd_tunnel_show },
	{ "list", NULL, &cmd_tunnel_list },
	{ NULL, NULL, NULL }
};

static const struct token session_tokens[] = {
	{ "create", NULL, &cmd_session_create },
	{ "delete", NULL, &cmd_session_delete },
	{ "show", NULL, &cmd_session_show },
	{ "list", NULL, &cmd_session_list },
	{ NULL, NULL, NULL }
};

/* "stats" alone is a command too: see descend() */
static const struct token stats_tokens[] = {
	{ "reset", NULL, &cmd_stats_reset },
	{ NULL, NULL, NULL }
};

static const struct token debug_tokens[] = {
	{ "on", NULL, &cmd_debug_on },
	{ "off", NULL, &cmd_debug_off },
	{ NULL, NULL, NULL }
};

static const struct token failover_tokens[] = {
	{ "takeover", NULL, &cmd_failover_takeover },
	{ NULL, NULL, NULL }
};

static const struct token show_tokens[] = {
	{ "daemon", NULL, &cmd_show_daemon },
	{ NULL, NULL, NULL }
};

static const struct token top_tokens[] = {
	{ "tunnel", tunnel_tokens, NULL },
	{ "session", session_tokens, NULL },
	{ "show", show_tokens, NULL },
	{ "stats", stats_tokens, &cmd_stats },
	{ "metrics", NULL, &cmd_metrics },
	{ "reload", NULL, &cmd_reload },
	{ "restart", NULL, &cmd_restart },
	{ "failover", failover_tokens, NULL },
	{ "debug", debug_tokens, NULL },
	{ "monitor", NULL, &cmd_monitor },
	{ NULL, NULL, NULL }
};

/* Where messages go: the caller's buffer, prefixed with the command so far. */
struct perr {
	char *buf;
	size_t len;
	const char *prefix;		/* "tunnel create: " or "" */
};

static int __attribute__((format(printf, 2, 3)))
fail(const struct perr *e, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(e->buf, e->len, "%s", e->prefix);

	if (n < 0 || (size_t)n >= e->len)
		return -1;
	va_start(ap, fmt);
	vsnprintf(e->buf + n, e->len - n, fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * Joins names into "a, b, c"; with only_prefix, just those starting with it
 * (the candidates of an ambiguous prefix).
 */
static const char *join(const char *const *names, size_t n, const char *only_prefix,
			char *out, size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++) {
		if (only_prefix && strncmp(names[i], only_prefix, strlen(only_prefix)))
			continue;
		int w = snprintf(out + used, len - used, "%s%s", used ? ", " : "", names[i]);
		if (w < 0)
			break;
		used += (size_t)w;
	}
	return out;
}

#define NO_MATCH	(-1)
#define AMBIGUOUS	(-2)

/* Exact match wins, else a unique prefix, as in ip(8): "tun cr", "sh dae". */
static int match_word(const char *word, const char *const *names, size_t n)
{
	size_t wl = strlen(word);
	int found = NO_MATCH;

	if (wl == 0)
		return NO_MATCH;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(word, names[i]))
			return (int)i;
		if (!strncmp(word, names[i], wl))
			found = found == NO_MATCH ? (int)i : AMBIGUOUS;
	}
	return found;
}

static size_t token_names(const struct token *t, const char **names)
{
	size_t n = 0;

	for (; t->kw; t++)
		names[n++] = t->kw;
	return n;
}

static const struct token *match_token(const struct token *tbl, const char *word,
				       const struct perr *e)
{
	const char *names[MAX_ARGS];
	char list[CLI_ERRLEN];
	size_t n = token_names(tbl, names);
	int i = match_word(word, names, n);

	if (i == AMBIGUOUS)
		fail(e, "ambiguous command '%s' (could be: %s)", word,
		     join(names, n, word, list, sizeof list));
	else if (i == NO_MATCH)
		fail(e, "unknown command '%s' (valid: %s)", word,
		     join(names, n, NULL, list, sizeof list));
	return i < 0 ? NULL : &tbl[i];
}

static const char *arg_label(const struct arg *a)
{
	return a->kw ? a->kw : "ID";
}

static size_t arg_labels(const struct arg *args, const char **names)
{
	size_t n = 0;

	for (; args[n].type != V_END; n++)
		names[n] = arg_label(&args[n]);
	return n;
}

static int positional_index(const struct arg *args)
{
	for (int i = 0; args[i].type != V_END; i++)
		if (!args[i].kw)
			return i;
	return NO_MATCH;
}

static bool is_flag(const struct arg *a)
{
	return a->type == V_FLAG || a->type == V_SWITCH;
}

/* "--no-wait", "--reconnect": only flags take the option spelling, and only in full. */
static int match_long_flag(const struct arg *args, const char *word)
{
	for (int i = 0; args[i].type != V_END; i++)
		if (is_flag(&args[i]) && !strcmp(args[i].kw, word + 2))
			return i;
	return NO_MATCH;
}

/*
 * Which argument a word starts.  Keywords first; a word that is not one and
 * does not start with a letter is the positional ID, so "tunnel show 0x1"
 * says "bad value" while "tunnel show nmae x" says "unknown argument".
 */
static int find_arg(const struct arg *args, const char *word, const struct perr *e)
{
	const char *names[MAX_ARGS];
	char list[CLI_ERRLEN];
	size_t n = arg_labels(args, names);
	int i = !strncmp(word, "--", 2) ? match_long_flag(args, word)
					: match_word(word, names, n);

	if (i == NO_MATCH && !isalpha((unsigned char)word[0]) && strncmp(word, "--", 2))
		i = positional_index(args);
	if (i >= 0 && !args[i].kw && isalpha((unsigned char)word[0]))
		i = NO_MATCH;	/* "ID" is a label, not a keyword */
	if (i == AMBIGUOUS)
		return fail(e, "ambiguous argument '%s' (could be: %s)", word,
			    join(names, n, word, list, sizeof list));
	if (i == NO_MATCH && n == 0)
		return fail(e, "unexpected argument '%s' (takes none)", word);
	if (i == NO_MATCH)
		return fail(e, "unknown argument '%s' (valid: %s)", word,
			    join(names, n, NULL, list, sizeof list));
	return i;
}

/* Strict decimal: no sign, no spaces, no 0x, no overflow. */
static bool parse_uint(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	unsigned long long v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return false;
		v = v * 10 + (unsigned)(*s - '0');
		if (v > max)
			return false;
	}
	if (v < min)
		return false;
	*out = (uint32_t)v;
	return true;
}

static bool valid_port(const char *s)
{
	uint32_t port;

	return parse_uint(s, 1, 65535, &port);
}

/* Copies s[0..n) into a bounded buffer and asks inet_pton about it. */
static bool is_inet(int af, const char *s, size_t n)
{
	char host[INET6_ADDRSTRLEN + 1];
	unsigned char bin[sizeof(struct in6_addr)];

	if (n >= sizeof host)
		return false;
	memcpy(host, s, n);
	host[n] = '\0';
	return inet_pton(af, host, bin) == 1;
}

/* "192.0.2.1", "192.0.2.1:1701", "2001:db8::1", "[2001:db8::1]:1701" */
static bool valid_addr(const char *s)
{
	const char *colon;

	if (s[0] == '[') {
		const char *end = strchr(s, ']');

		if (!end || !is_inet(AF_INET6, s + 1, (size_t)(end - s - 1)))
			return false;
		return end[1] == '\0' || (end[1] == ':' && valid_port(end + 2));
	}
	if (is_inet(AF_INET, s, strlen(s)) || is_inet(AF_INET6, s, strlen(s)))
		return true;
	colon = strchr(s, ':');
	if (!colon || strchr(colon + 1, ':'))
		return false;
	return is_inet(AF_INET, s, (size_t)(colon - s)) && valid_port(colon + 1);
}

/* The kernel's dev_valid_name(), so a bad name fails here, not in netlink. */
static bool valid_ifname(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > IFNAME_LEN || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (; *s; s++)
		if (*s == '/' || *s == ':' || isspace((unsigned char)*s))
			return false;
	return true;
}

static size_t count_values(const char *const *v)
{
	size_t n = 0;

	while (v[n])
		n++;
	return n;
}

/* "0, 4 or 8" */
static const char *join_or(const char *const *v, size_t n, char *out, size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++) {
		const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
		int w = snprintf(out + used, len - used, "%s%s", sep, v[i]);
		if (w < 0)
			break;
		used += (size_t)w;
	}
	return out;
}

/* Which of a's values word is (a unique prefix will do); -1 with the message. */
static int enum_match(const struct arg *a, const char *word, const struct perr *e)
{
	char list[CLI_ERRLEN];
	size_t n = count_values(a->values);
	int i = match_word(word, a->values, n);

	if (i >= 0)
		return i;
	if (a->type == V_INT_ENUM)
		return fail(e, "'%s' must be %s", a->kw, join_or(a->values, n, list, sizeof list));
	if (i == AMBIGUOUS)
		return fail(e, "ambiguous value '%s' for '%s' (could be: %s)", word, a->kw,
			    join(a->values, n, word, list, sizeof list));
	return fail(e, "bad value '%s' for '%s' (valid: %s)", word, a->kw,
		    join(a->values, n, NULL, list, sizeof list));
}

static int parse_enum(const struct arg *a, const char *word, json_object *args,
		      const struct perr *e)
{
	int i = enum_match(a, word, e);

	if (i < 0)
		return -1;
	if (a->type == V_INT_ENUM)
		json_object_object_add(args, a->key, json_object_new_int(atoi(a->values[i])));
	else
		json_object_object_add(args, a->key, json_object_new_string(a->values[i]));
	return 0;
}

/* "session-up,session-down": each a value (or a unique prefix of one). */
static int parse_enum_list(const struct arg *a, const char *word, json_object *args,
			   const struct perr *e)
{
	json_object *list = json_object_new_array();
	char item[CLI_ERRLEN], names[CLI_ERRLEN];
	const char *p = word;
	int i;

	for (;;) {
		size_t len = strcspn(p, ",");

		if (len == 0 || len >= sizeof(item)) {
			json_object_put(list);
			return fail(e, "bad value '%s' for '%s' (expected a comma-separated list of: %s)",
				    word, a->kw, join(a->values, count_values(a->values), NULL,
						      names, sizeof names));
		}
		memcpy(item, p, len);
		item[len] = '\0';
		if ((i = enum_match(a, item, e)) < 0) {
			json_object_put(list);
			return -1;
		}
		json_object_array_add(list, json_object_new_string(a->values[i]));
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	json_object_object_add(args, a->key, list);
	return 0;
}

static int parse_string(const struct arg *a, const char *word, json_object *args,
			const struct perr *e)
{
	if (!*word)
		return fail(e, "empty value for '%s'", a->kw);
	if (strlen(word) > a->max)
		return fail(e, "value for '%s' is too long (at most %u characters)",
			    a->kw, (unsigned)a->max);
	json_object_object_add(args, a->key, json_object_new_string(word));
	return 0;
}

/* Operator text (a description): printable, as the daemon's configuration takes it. */
static int parse_text(const struct arg *a, const char *word, json_object *args,
		      const struct perr *e)
{
	for (const char *p = word; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return fail(e, "bad value for '%s' (a control character at offset %zu; "
				    "valid: printable characters)", a->kw, (size_t)(p - word));
	return parse_string(a, word, args, e);
}

static bool stdin_taken;

void parse_stdin_taken(void)
{
	stdin_taken = true;
}

/*
 * A secret of len bytes from what was read: one trailing newline dropped,
 * neither empty nor too long nor holding a NUL.  Stored under a->key.
 */
static int secret_store(const struct arg *a, char *buf, size_t len, const char *from,
			json_object *args, const struct perr *e)
{
	int rc = 0;

	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len > 0 && buf[len - 1] == '\r')
		len--;
	if (len == 0)
		rc = fail(e, "%s is empty (expected the secret)", from);
	else if (len > a->max)
		rc = fail(e, "%s holds more than %u characters (the secret's limit)", from,
			  (unsigned)a->max);
	else if (memchr(buf, '\0', len) != NULL)
		rc = fail(e, "%s holds a NUL byte", from);
	else if (json_object_object_get_ex(args, a->key, NULL))
		rc = fail(e, "give only one of 'secret' and 'secret-file'");
	else
		json_object_object_add(args, a->key, json_object_new_string_len(buf, (int)len));
	memset(buf, 0, len);
	return rc;
}

/* Up to max bytes of fd into buf (room for max + 1); -1 on a read error. */
static ssize_t read_all(int fd, char *buf, size_t max)
{
	size_t len = 0;

	while (len < max) {
		ssize_t n = read(fd, buf + len, max - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		len += (size_t)n;
		if (fd == STDIN_FILENO && memchr(buf, '\n', len) != NULL)
			break;	/* one line: the rest of standard input is not ours */
	}
	return (ssize_t)len;
}

/* "secret S", "secret -" (a line of standard input) or "secret-file PATH": never in argv. */
static int parse_secret(const struct arg *a, const char *word, json_object *args,
			const struct perr *e)
{
	char buf[SECRET_LEN + 3];
	const char *from = word;
	struct stat st;
	ssize_t n;
	int fd;

	if (a->type == V_SECRET && strcmp(word, "-") != 0) {
		if (json_object_object_get_ex(args, a->key, NULL))
			return fail(e, "give only one of 'secret' and 'secret-file'");
		return parse_string(a, word, args, e);
	}
	if (a->type == V_SECRET) {
		if (stdin_taken)
			return fail(e, "'secret -' cannot be used in a batch (use secret-file)");
		from = "standard input";
		fd = STDIN_FILENO;
	} else if ((fd = open(word, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
		return fail(e, "cannot read %s: %s", word, strerror(errno));
	} else if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return fail(e, "%s is not a regular file", word);
	} else if (st.st_mode & S_IROTH) {
		close(fd);
		return fail(e, "%s is readable by every user (mode %04o): chmod o-r it", word,
			    (unsigned)(st.st_mode & 07777));
	}
	n = read_all(fd, buf, sizeof(buf) - 1);
	if (fd != STDIN_FILENO)
		close(fd);
	if (n < 0)
		return fail(e, "cannot read %s: %s", from, strerror(errno));
	if (fd == STDIN_FILENO) {
		char *nl = memchr(buf, '\n', (size_t)n);

		if (nl != NULL)	/* its first line */
			n = nl - buf + 1;
	}
	return secret_store(a, buf, (size_t)n, from, args, e);
}

static int parse_scalar(const struct arg *a, const char *word, json_object *args,
			const struct perr *e)
{
	uint32_t v;

	switch (a->type) {
	case V_UINT:
		if (!parse_uint(word, a->min, a->max, &v))
			return fail(e, "bad value '%s' for '%s' (expected a decimal number from %u to %u)",
				    word, arg_label(a), (unsigned)a->min, (unsigned)a->max);
		json_object_object_add(args, a->key, json_object_new_int64(v));
		return 0;
	case V_ADDR:
		if (!valid_addr(word))
			return fail(e, "bad value '%s' for '%s' (expected an IPv4 or IPv6 address, "
				    "ADDR:PORT or [V6]:PORT)", word, a->kw);
		json_object_object_add(args, a->key, json_object_new_string(word));
		return 0;
	case V_IFNAME:
		if (!valid_ifname(word))
			return fail(e, "bad value '%s' for '%s' (expected an interface name: "
				    "1-%d characters, no '/', ':' or spaces)", word, a->kw, IFNAME_LEN);
		json_object_object_add(args, a->key, json_object_new_string(word));
		return 0;
	case V_ENUM:
	case V_INT_ENUM:
		return parse_enum(a, word, args, e);
	case V_ENUM_LIST:
		return parse_enum_list(a, word, args, e);
	case V_SECRET:
	case V_SECRET_FILE:
		return parse_secret(a, word, args, e);
	case V_TEXT:
		return parse_text(a, word, args, e);
	default:
		return parse_string(a, word, args, e);
	}
}

static const char *expected(const struct arg *a)
{
	switch (a->type) {
	case V_UINT:	return "a number";
	case V_ADDR:	return "an address";
	case V_REF:	return "ID or name NAME";
	case V_IFNAME:	return "an interface name";
	case V_ENUM:
	case V_INT_ENUM: return "one of its values";
	case V_ENUM_LIST: return "a comma-separated list of its values";
	case V_SECRET:	return "the secret, or - to read it from standard input";
	case V_SECRET_FILE: return "a file's path";
	default:	return "a string";
	}
}

/* "tunnel 5" or "tunnel name foo": the one value that takes two shapes. */
static int parse_ref(const struct arg *a, int argc, char *const argv[],
		     json_object *args, const struct perr *e)
{
	static const char *const name_kw[] = { "name" };
	const struct arg by_name = { a->kw, V_STRING, a->name_key, 0, .max = NAME_LEN };
	const struct arg by_id = { a->kw, V_UINT, a->key, 0, .min = 1, .max = UINT32_MAX };

	if (isalpha((unsigned char)argv[1][0])) {
		if (match_word(argv[1], name_kw, 1) != 0)
			return fail(e, "bad value '%s' for '%s' (expected ID or name NAME)",
				    argv[1], a->kw);
		if (argc < 3)
			return fail(e, "missing value for '%s name'", a->kw);
		return parse_string(&by_name, argv[2], args, e) < 0 ? -1 : 3;
	}
	return parse_scalar(&by_id, argv[1], args, e) < 0 ? -1 : 2;
}

/* Parses the value(s) of argument a starting at argv[0]; returns words used. */
static int parse_value(const struct arg *a, int argc, char *const argv[],
		       json_object *args, const struct perr *e)
{
	if (!a->kw)
		return parse_scalar(a, argv[0], args, e) < 0 ? -1 : 1;
	if (is_flag(a)) {
		json_object_object_add(args, a->key, json_object_new_boolean(a->type == V_SWITCH));
		return 1;
	}
	if (argc < 2)
		return fail(e, "missing value for '%s' (expected %s)", a->kw, expected(a));
	if (a->type == V_REF)
		return parse_ref(a, argc, argv, args, e);
	return parse_scalar(a, argv[1], args, e) < 0 ? -1 : 2;
}

/* Required arguments, and exactly one of the A_ONE_OF group ("ID | name NAME"). */
static int check_present(const struct arg *args, const bool *seen, const struct perr *e)
{
	const char *group[MAX_ARGS];
	char list[CLI_ERRLEN];
	size_t n = 0, given = 0;

	for (size_t i = 0; args[i].type != V_END; i++) {
		if ((args[i].flags & A_REQUIRED) && !seen[i])
			return fail(e, "missing argument '%s'", arg_label(&args[i]));
		if (args[i].flags & A_ONE_OF) {
			group[n++] = arg_label(&args[i]);
			given += seen[i];
		}
	}
	if (n && given == 0)
		return fail(e, "missing argument (%s)", join_or(group, n, list, sizeof list));
	if (given > 1)
		return fail(e, "give only one of %s", join_or(group, n, list, sizeof list));
	return 0;
}

static int parse_args(const struct command *cmd, int argc, char *const argv[],
		      struct request *req, const struct perr *e)
{
	json_object *args = json_object_new_object(), *client = json_object_new_object();
	bool seen[MAX_ARGS] = { false };

	for (int i = 0, used; i < argc; i += used) {
		int a = find_arg(cmd->args, argv[i], e);

		if (a < 0)
			goto fail;
		if (seen[a]) {
			fail(e, "'%s' given twice", arg_label(&cmd->args[a]));
			goto fail;
		}
		seen[a] = true;
		used = parse_value(&cmd->args[a], argc - i, argv + i,
				   cmd->args[a].flags & A_CLIENT ? client : args, e);
		if (used < 0)
			goto fail;
	}
	if (check_present(cmd->args, seen, e) < 0)
		goto fail;
	req->kind = cmd->kind;
	req->cmd = cmd->name;
	req->args = args;
	req->client = client;
	return 0;
fail:
	json_object_put(args);
	json_object_put(client);
	return -1;
}

/* "stats reset": a keyword of next after a token that is also a command. */
static bool descend(const struct token *t, int argc, char *const argv[])
{
	const char *names[MAX_ARGS];

	if (t->next == NULL)
		return false;
	if (t->cmd == NULL)
		return true;
	return argc > 0 && match_word(argv[0], names, token_names(t->next, names)) >= 0;
}

/*
 * Parses argv (the words after the options, or one batch line) into req.
 * On error returns -1 with "tunnel create: what is wrong" in err.
 */
int parse_command(int argc, char *const argv[], struct request *req,
		  char *err, size_t errlen)
{
	const struct token *tbl = top_tokens;
	char prefix[64] = "";
	struct perr e = { err, errlen, prefix };

	for (int i = 0; ; i++) {
		const char *names[MAX_ARGS];
		char list[CLI_ERRLEN];
		const struct token *t;

		if (i == argc)
			return fail(&e, "missing command (valid: %s)",
				    join(names, token_names(tbl, names), NULL, list, sizeof list));
		t = match_token(tbl, argv[i], &e);
		if (!t)
			return -1;
		if (t->cmd && !descend(t, argc - i - 1, argv + i + 1)) {
			snprintf(prefix, sizeof prefix, "%s: ", t->cmd->name);
			return parse_args(t->cmd, argc - i - 1, argv + i + 1, req, &e);
		}
		snprintf(prefix, sizeof prefix, "%s: ", t->kw);
		tbl = t->next;
	}
}

void request_free(struct request *req)
{
	json_object_put(req->args);
	json_object_put(req->client);
	req->args = req->client = NULL;
}

/* A switch of the client's own ("monitor reconnect"). */
bool request_switch(const struct request *req, const char *key)
{
	json_object *v;

	return req->client != NULL && json_object_object_get_ex(req->client, key, &v) &&
	       json_object_get_boolean(v);
}

/* Copies one word from *rp to *wp, removing quotes; -1 if a quote is open. */
static int copy_word(char **rp, char **wp)
{
	char *r = *rp, *w = *wp, quote = 0;

	for (; *r; r++) {
		if (quote) {
			if (*r == quote)
				quote = 0;
			else if (quote == '"' && *r == '\\' && (r[1] == '"' || r[1] == '\\'))
				*w++ = *++r;
			else
				*w++ = *r;
		} else if (isspace((unsigned char)*r)) {
			break;
		} else if (*r == '\'' || *r == '"') {
			quote = *r;
		} else {
			if (*r == '\\' && r[1])
				r++;
			*w++ = *r;
		}
	}
	*rp = r;
	*wp = w;
	return quote ? -1 : 0;
}

/*
 * Splits a batch line in place into words, shell-like: '...' and "..."
 * quote (so a secret may hold spaces), a word starting with # starts a
 * comment.  Returns the number of words (0: blank or comment), or -1.
 */
int split_words(char *line, char **words, int max, char *err, size_t errlen)
{
	char *r = line, *w = line;
	int n = 0;

	for (;;) {
		char delim;

		while (isspace((unsigned char)*r))
			r++;
		if (*r == '\0' || *r == '#')
			return n;
		if (n == max) {
			snprintf(err, errlen, "too many words (at most %d)", max);
			return -1;
		}
		words[n++] = w;
		if (copy_word(&r, &w) < 0) {
			snprintf(err, errlen, "unterminated quote");
			return -1;
		}
		/* w never passes r, so the terminator only lands on consumed bytes */
		delim = *r;
		if (delim)
			r++;
		*w++ = '\0';
		if (!delim)
			return n;
	}
}
