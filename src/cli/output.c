/*
 * src/cli/output.c - human output: aligned tables for lists, "key: value"
 * lines for show, one line for create/delete, one line per monitor event.
 * Which printer a command gets is a table, like bgpctl's show_* functions.
 *
 * Every string printed goes through text(): the daemon already escapes a
 * peer's bytes, but a JSON string can still decode to a control character
 * ("\u001b"), and a terminal must never receive one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "ctl_proto.h"
#include "usl/escape.h"

#define MAX_COLUMNS	16

/* A list column; an optional one appears only when some row has its key. */
struct column {
	const char *head;
	const char *key;
	bool optional;
};

static const struct column tunnel_columns[] = {
	{ "ID", "tunnel_id", false },
	{ "PEER-ID", "peer_tunnel_id", false },
	{ "NAME", "name", false },
	{ "STATE", "state", false },
	{ "PEER", "peer", false },
	{ "POOL", "pool", true },	/* only when a tunnel was made through an LNS pool */
	{ "PEER-HOST", "peer_host_name", false },	/* the name the peer gave in SCCRQ/SCCRP */
	{ "ENCAP", "encap", false },
	{ "SESSIONS", "sessions", false },
	{ "UPTIME", "uptime", false },
	{ "CONFIG-ID", "config_id", true },	/* only with snmp_config_id */
	{ "DESCRIPTION", "description", true },	/* only when one has one: it is last, it may be long */
};

static const struct column session_columns[] = {
	{ "ID", "session_id", false },
	{ "PEER-ID", "peer_session_id", false },
	{ "TUNNEL", "tunnel_id", false },
	{ "NAME", "name", false },
	{ "STATE", "state", false },
	{ "PW", "pw_type", false },
	{ "REMOTE-END-ID", "remote_end_id", false },
	{ "IFNAME", "ifname", false },
	{ "COOKIE", "cookie_len", false },
	{ "UPTIME", "uptime", false },
	{ "DESCRIPTION", "description", true },
};

#define N_ELEMS(a)	(sizeof(a) / sizeof((a)[0]))
#define FIELD_RING	4	/* field() values alive at once: enough for one printf */

/*
 * n bytes of s as printable text (malloc'd): usl/escape.h's rule, except
 * that '\' stays as it is, since the daemon's "\xNN" escapes must read the
 * same here as in its JSON and hook variables.
 */
static char *text_n(const char *s, size_t n)
{
	size_t need = usl_str_escape_flags(NULL, 0, s, n, USL_ESCAPE_KEEP_BACKSLASH);
	char *out = xmalloc(need + 1);

	usl_str_escape_flags(out, need + 1, s, n, USL_ESCAPE_KEEP_BACKSLASH);
	return out;
}

static char *text(const char *s)
{
	return text_n(s, strlen(s));
}

/* A JSON value as text; strings keep an embedded NUL visible. */
static char *json_text(json_object *v)
{
	if (json_object_is_type(v, json_type_string))
		return text_n(json_object_get_string(v), (size_t)json_object_get_string_len(v));
	return text(json_object_get_string(v));
}

/* A member as text for one-line messages; "-" when absent.  Valid until FIELD_RING more calls. */
static const char *field(json_object *o, const char *key)
{
	static char *ring[FIELD_RING];
	static unsigned next;
	json_object *v;
	char **slot = &ring[next++ % FIELD_RING];

	if (!json_object_object_get_ex(o, key, &v) || !v)
		return "-";
	free(*slot);
	*slot = json_text(v);
	return *slot;
}

/* "1d02h03m04s": uptimes are read by people, not summed. */
static void fmt_duration(double secs, char *out, size_t len)
{
	unsigned long long s = secs > 0 ? (unsigned long long)secs : 0;
	unsigned long long d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60;

	s %= 60;
	if (d)
		snprintf(out, len, "%llud%02lluh%02llum%02llus", d, h, m, s);
	else if (h)
		snprintf(out, len, "%lluh%02llum%02llus", h, m, s);
	else if (m)
		snprintf(out, len, "%llum%02llus", m, s);
	else
		snprintf(out, len, "%llus", s);
}

static bool is_scalar(json_object *v)
{
	return !json_object_is_type(v, json_type_object) &&
	       !json_object_is_type(v, json_type_array);
}

static char *fmt_value(const char *key, json_object *v);

/* Arrays of scalars read as "a, b, c"; anything deeper stays JSON. */
static char *fmt_array(json_object *v)
{
	size_t n = json_object_array_length(v);
	struct buf b = { 0 };

	for (size_t i = 0; i < n; i++)
		if (!is_scalar(json_object_array_get_idx(v, i)))
			return text(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
	for (size_t i = 0; i < n; i++) {
		char *s = fmt_value(NULL, json_object_array_get_idx(v, i));

		if (i)
			buf_append(&b, ", ", 2);
		buf_append(&b, s, strlen(s));
		free(s);
	}
	buf_append(&b, "", 1);
	return b.data;
}

/* A value as text (malloc'd); "-" for absent or empty so columns line up. */
static char *fmt_value(const char *key, json_object *v)
{
	char tmp[64];

	switch (json_object_get_type(v)) {
	case json_type_null:
		return xstrdup("-");
	case json_type_boolean:
		return xstrdup(json_object_get_boolean(v) ? "yes" : "no");
	case json_type_int:
	case json_type_double:
		if (!key || strcmp(key, "uptime"))
			return text(json_object_get_string(v));
		fmt_duration(json_object_get_double(v), tmp, sizeof tmp);
		return xstrdup(tmp);
	case json_type_string:
		return json_object_get_string_len(v) ? json_text(v) : xstrdup("-");
	case json_type_array:
		return json_object_array_length(v) ? fmt_array(v) : xstrdup("-");
	default:
		return text(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
	}
}

/* A non-empty object gets its own indented block; anything else is one line. */
static bool is_block(json_object *v)
{
	return json_object_is_type(v, json_type_object) && json_object_object_length(v) > 0;
}

static int key_width(json_object *obj)
{
	size_t w = 0;

	json_object_object_foreach(obj, key, val) {
		char *k = text(key);

		if (!is_block(val) && strlen(k) > w)
			w = strlen(k);
		free(k);
	}
	return (int)w;
}

/* "key: value" lines, values aligned per level, objects indented under their key. */
static void print_kv(json_object *obj, int indent)
{
	int w = key_width(obj);

	json_object_object_foreach(obj, key, val) {
		char *k = text(key), *s;

		if (is_block(val)) {
			printf("%*s%s:\n", indent, "", k);
			print_kv(val, indent + 2);
			free(k);
			continue;
		}
		s = json_object_is_type(val, json_type_object) ? xstrdup("-") : fmt_value(key, val);
		printf("%*s%s:%*s %s\n", indent, "", k, w - (int)strlen(k), "", s);
		free(s);
		free(k);
	}
}

/* An optional column is shown when some row has its key, and not as "" (a description). */
static bool column_used(const struct column *col, json_object *rows)
{
	size_t n = json_object_array_length(rows);
	json_object *v;

	if (!col->optional)
		return true;
	for (size_t r = 0; r < n; r++)
		if (json_object_object_get_ex(json_object_array_get_idx(rows, r), col->key, &v) &&
		    !(json_object_is_type(v, json_type_string) && json_object_get_string_len(v) == 0))
			return true;
	return false;
}

static void print_row(char *const *cells, const size_t *width, size_t nc)
{
	for (size_t c = 0; c + 1 < nc; c++)
		printf("%-*s  ", (int)width[c], cells[c]);
	printf("%s\n", cells[nc - 1]);
}

/* Cells of the header and of every row, row-major, nc per row (malloc'd). */
static char **table_cells(const struct column *const *use, size_t nc, json_object *rows)
{
	size_t nr = json_object_array_length(rows);
	char **cell = xmalloc((nr + 1) * nc * sizeof *cell);

	for (size_t c = 0; c < nc; c++)
		cell[c] = xstrdup(use[c]->head);
	for (size_t r = 0; r < nr; r++) {
		json_object *row = json_object_array_get_idx(rows, r), *v;

		for (size_t c = 0; c < nc; c++) {
			if (!json_object_object_get_ex(row, use[c]->key, &v))
				v = NULL;
			cell[(r + 1) * nc + c] = fmt_value(use[c]->key, v);
		}
	}
	return cell;
}

/* Header plus one row per object, each column as wide as its widest cell. */
static void print_table(const struct column *cols, size_t ncols, json_object *rows)
{
	const struct column *use[MAX_COLUMNS];
	size_t width[MAX_COLUMNS] = { 0 }, nc = 0, ncells;
	json_object *none = NULL;
	char **cell;

	if (!json_object_is_type(rows, json_type_array))
		rows = none = json_object_new_array();	/* absent list: header only */
	for (size_t i = 0; i < ncols; i++)
		if (column_used(&cols[i], rows))
			use[nc++] = &cols[i];
	cell = table_cells(use, nc, rows);
	ncells = (json_object_array_length(rows) + 1) * nc;
	for (size_t i = 0; i < ncells; i++)
		if (strlen(cell[i]) > width[i % nc])
			width[i % nc] = strlen(cell[i]);
	for (size_t i = 0; i < ncells; i += nc)
		print_row(cell + i, width, nc);
	for (size_t i = 0; i < ncells; i++)
		free(cell[i]);
	free(cell);
	json_object_put(none);
}

typedef void printer(const struct request *, json_object *data);

static void show_created(const struct request *req, json_object *data)
{
	bool tunnel = req->kind == CMD_TUNNEL_CREATE;

	printf("%s %s %s\n", tunnel ? "tunnel" : "session",
	       field(data, tunnel ? "tunnel_id" : "session_id"), field(data, "state"));
}

/* The reply is {}: name the object the way the user did. */
static void show_deleted(const struct request *req, json_object *data)
{
	bool tunnel = req->kind == CMD_TUNNEL_DELETE;
	const char *id = field(req->args, tunnel ? "tunnel_id" : "session_id");

	(void)data;
	if (!strcmp(id, "-"))
		id = field(req->args, "name");
	printf("%s %s deleted\n", tunnel ? "tunnel" : "session", id);
}

static void show_reloaded(const struct request *req, json_object *data)
{
	(void)req;
	(void)data;
	printf("configuration reloaded\n");
}

static void show_reload(const struct request *req, json_object *data)
{
	show_reloaded(req, data);
	if (data)
		print_kv(data, 2);
}

static void show_kv(const struct request *req, json_object *data)
{
	(void)req;
	if (data)
		print_kv(data, 0);
}

/* One line per LNS pool member: its share, its tunnels, held down or not, its last failure. */
static void print_pools(json_object *pools)
{
	size_t n = json_object_array_length(pools);

	printf("pools:\n");
	for (size_t i = 0; i < n; i++) {
		json_object *p = json_object_array_get_idx(pools, i), *ms = NULL;
		size_t nm;

		printf("  %s (hold-down %s s)\n", field(p, "name"), field(p, "hold_down"));
		json_object_object_get_ex(p, "members", &ms);
		nm = ms ? json_object_array_length(ms) : 0;
		for (size_t j = 0; j < nm; j++) {
			json_object *m = json_object_array_get_idx(ms, j), *until = NULL;
			long long left = 0;

			if (json_object_object_get_ex(m, "held_down_until", &until) && until != NULL)
				left = json_object_get_int64(until) - (long long)time(NULL);
			printf("    %-22s weight %-4s tunnels %-7s ", field(m, "address"),
			       field(m, "weight"), field(m, "tunnels"));
			if (until != NULL)
				printf("held down (%lld s left)", left > 0 ? left : 0);
			else
				printf("up");
			if (strcmp(field(m, "last_failure"), "-"))
				printf("; last failure: %s", field(m, "last_failure"));
			printf("\n");
		}
	}
}

/* show daemon: key: value lines, and the pools, if any, a line per member. */
static void show_daemon(const struct request *req, json_object *data)
{
	json_object *pools = NULL;

	(void)req;
	if (data == NULL)
		return;
	if (json_object_object_get_ex(data, "pools", &pools)) {
		json_object_get(pools);
		json_object_object_del(data, "pools");
	}
	print_kv(data, 0);
	if (pools != NULL && json_object_array_length(pools) > 0)
		print_pools(pools);
	json_object_put(pools);
}

/*
 * The live objects, then the static ones waiting for their retry (state
 * "retrying", when and why in a line each) and those the configuration
 * shuts down (state "shutdown"), and a held old connection's state marked
 * so it is not taken for the live one of the same name.
 */
static void show_list(json_object *data, const char *key, const struct column *cols, size_t n)
{
	json_object *rows = NULL, *retrying = NULL, *down = NULL, *all = json_object_new_array();
	size_t i, len;

	json_object_object_get_ex(data, key, &rows);
	json_object_object_get_ex(data, "retrying", &retrying);
	len = rows ? json_object_array_length(rows) : 0;
	for (i = 0; i < len; i++) {
		json_object *r = json_object_array_get_idx(rows, i), *held = NULL;

		if (json_object_object_get_ex(r, "held", &held) && json_object_get_boolean(held))
			json_object_object_add(r, "state", json_object_new_string("stopping (held)"));
		json_object_array_add(all, json_object_get(r));
	}
	json_object_object_get_ex(data, "shutdown", &down);
	len = down ? json_object_array_length(down) : 0;
	for (i = 0; i < len; i++)
		json_object_array_add(all, json_object_get(json_object_array_get_idx(down, i)));
	len = retrying ? json_object_array_length(retrying) : 0;
	for (i = 0; i < len; i++)
		json_object_array_add(all, json_object_get(json_object_array_get_idx(retrying, i)));
	print_table(cols, n, all);
	json_object_put(all);
	for (i = 0; i < len; i++) {
		json_object *r = json_object_array_get_idx(retrying, i);

		const char *err;

		/* one field() at a time: its values live in a small ring */
		printf("%s: retrying", field(r, "name"));
		printf(" (attempt %s)", field(r, "attempt"));
		printf(" in %s s", field(r, "next_try_s"));
		err = field(r, "last_error");
		if (strcmp(err, "") != 0 && strcmp(err, "-") != 0)
			printf(", after: %s", err);
		putchar('\n');
	}
}

static void show_tunnels(const struct request *req, json_object *data)
{
	(void)req;
	show_list(data, "tunnels", tunnel_columns, N_ELEMS(tunnel_columns));
}

static void show_sessions(const struct request *req, json_object *data)
{
	(void)req;
	show_list(data, "sessions", session_columns, N_ELEMS(session_columns));
}

/* "counters reset", or "tunnel lac1 counters reset": the object the way the user named it. */
static void show_stats_reset(const struct request *req, json_object *data)
{
	const char *id = field(req->args, "tunnel_id");

	(void)data;
	if (!strcmp(id, "-"))
		id = field(req->args, "tunnel");
	if (strcmp(id, "-"))
		printf("tunnel %s counters reset\n", id);
	else
		printf("counters reset\n");
}

/* The Prometheus text, as the daemon wrote it (node_exporter's textfile format). */
static void show_metrics(const struct request *req, json_object *data)
{
	json_object *t = NULL;

	(void)req;
	if (json_object_object_get_ex(data, "text", &t))
		fputs(json_object_get_string(t), stdout);
}

/* full: a single command's output; summary: its "LINE: ..." in a batch (NULL: "ok" + full). */
static const struct {
	printer *full;
	printer *summary;
} text_cmds[CMD__COUNT] = {
	[CMD_TUNNEL_CREATE]	= { show_created, show_created },
	[CMD_TUNNEL_DELETE]	= { show_deleted, show_deleted },
	[CMD_TUNNEL_SHOW]	= { show_kv, NULL },
	[CMD_TUNNEL_LIST]	= { show_tunnels, NULL },
	[CMD_SESSION_CREATE]	= { show_created, show_created },
	[CMD_SESSION_DELETE]	= { show_deleted, show_deleted },
	[CMD_SESSION_SHOW]	= { show_kv, NULL },
	[CMD_SESSION_LIST]	= { show_sessions, NULL },
	[CMD_SHOW_DAEMON]	= { show_daemon, NULL },
	[CMD_STATS]		= { show_kv, NULL },
	[CMD_STATS_RESET]	= { show_stats_reset, show_stats_reset },
	[CMD_METRICS]		= { show_metrics, NULL },
	[CMD_RELOAD]		= { show_reload, show_reloaded },
	[CMD_RESTART]		= { show_kv, NULL },
	[CMD_FAILOVER_TAKEOVER]	= { show_kv, NULL },
	[CMD_DEBUG_ON]		= { show_kv, NULL },
	[CMD_DEBUG_OFF]		= { show_kv, NULL },
	[CMD_MONITOR]		= { show_kv, NULL },
};

/* invalid-argument names the argument itself; other errors say what kind. */
void print_failure(const struct reply *r)
{
	char *msg = text(r->error ? r->error : "(no message)");
	char *status = text(r->status_name ? r->status_name : "-");

	if (r->status == CTL_E_INVALID)
		cli_warnx("%s", msg);
	else
		cli_warnx("%s: %s", status, msg);
	free(status);
	free(msg);
}

static void text_result(const struct request *req, const struct reply *r)
{
	if (r->status != CTL_OK)
		print_failure(r);
	else
		text_cmds[req->kind].full(req, r->data);
}

static void text_batch_reply(unsigned long line, const struct request *req,
			     const struct reply *r)
{
	printer *summary = text_cmds[req->kind].summary;

	if (r->status != CTL_OK) {
		char *status = text(r->status_name ? r->status_name : "-");
		char *msg = text(r->error ? r->error : "-");

		printf("%lu: %s: %s\n", line, status, msg);
		free(status);
		free(msg);
		return;
	}
	printf("%lu: ", line);
	if (summary) {
		summary(req, r->data);
		return;
	}
	printf("ok\n");
	text_cmds[req->kind].full(req, r->data);
}

/* Parse errors already went to stderr; stdout keeps only replies. */
static void text_batch_error(unsigned long line, const char *msg)
{
	(void)line;
	(void)msg;
}

static void text_batch_summary(unsigned long commands, unsigned long failed)
{
	printf("%lu commands: %lu succeeded, %lu failed\n", commands, commands - failed, failed);
}

/* ISO 8601 local time with milliseconds: events come in bursts. */
static void fmt_time(double t, char *out, size_t len)
{
	time_t sec = (time_t)t;
	struct tm tm;
	char base[32];

	localtime_r(&sec, &tm);
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, len, "%s.%03d", base, (int)((t - (double)sec) * 1000));
}

static void print_result(json_object *res)
{
	json_object *v;

	printf(" result %s (%s)", field(res, "code"), field(res, "name"));
	if (json_object_object_get_ex(res, "error", &v) && json_object_get_int(v))
		printf(" error %d (%s)", json_object_get_int(v), field(res, "error_name"));
	if (json_object_object_get_ex(res, "message", &v) && json_object_get_string_len(v) > 0)
		printf(": %s", field(res, "message"));
}

/* time event tunnel N [session M] peer P [result ...] */
static void text_event(json_object *ev)
{
	json_object *v;
	char when[64];

	fmt_time(json_object_object_get_ex(ev, "time", &v) ? json_object_get_double(v)
							     : (double)time(NULL),
		 when, sizeof when);
	if (!json_object_object_get_ex(ev, "tunnel_id", &v)) {	/* the daemon's own */
		printf("%s %s\n", when, field(ev, "event"));
		return;
	}
	printf("%s %s tunnel %s", when, field(ev, "event"), field(ev, "tunnel_id"));
	if (json_object_object_get_ex(ev, "session_id", &v))
		printf(" session %s", field(ev, "session_id"));
	printf(" peer %s", field(ev, "peer"));
	if (json_object_object_get_ex(ev, "result", &v) && json_object_is_type(v, json_type_object))
		print_result(v);
	putchar('\n');
}

static void text_reconnected(void)
{
	char when[64];

	fmt_time(wall_now(), when, sizeof when);
	printf("%s reconnected (events while disconnected were missed)\n", when);
}

const struct output output_text = {
	.result = text_result,
	.batch_reply = text_batch_reply,
	.batch_error = text_batch_error,
	.batch_summary = text_batch_summary,
	.event = text_event,
	.reconnected = text_reconnected,
};
