/*
 * src/inspect/out.c - output records: one per control message (or per
 * frame that could not be decoded), printed in capture order as a text line
 * or a JSON object, then the per-connection lines and the summary.
 *
 * Records wait in a FIFO so that a violation found later (a retransmission
 * nobody acknowledged) lands on the message it concerns: the queue is
 * printed up to the first held record after every frame.  Text and JSON
 * differ only in how a record is rendered (out_text(), out_json()).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inspect.h"

/* A growing string; on allocation failure it stops growing (output is best effort). */
struct sb {
	char *p;
	size_t len, cap;
};

struct viol {
	const char *kind;	/* static: a V_* name or l2tp_drop_name() */
	char *detail;
};

struct insp_rec {
	struct insp_rec *next;
	unsigned holds;
	unsigned frame;
	int64_t t_ns;
	char src[INSP_ADDR_STRLEN], dst[INSP_ADDR_STRLEN];
	bool over_ip;
	const char *why;		/* set: a frame not decoded */
	bool header_ok;
	bool data;			/* a data message, to session sid */
	uint32_t sid;
	unsigned conn;			/* 0: not attached to a connection */
	int dir;			/* 0 A>B, 1 B>A, -1 unknown */
	char type[16];			/* a copy: unknown types' names are rotating buffers */
	uint16_t type_code;
	uint32_t ccid;
	uint16_t ns, nr;
	unsigned rtx_copy;		/* 2.. for a retransmission */
	int64_t rtx_interval;
	unsigned n_avps;
	struct sb avps, notes, lists[3];	/* lists: by enum insp_list */
	unsigned n_list[3], n_notes;
	struct viol *viols;
	unsigned n_viols;
};

struct kind_count {
	const char *kind;
	unsigned n;
};

static const struct insp_opts *opts;
static struct insp_rec *head, **tail = &head;
static struct kind_count *kinds;
static unsigned n_kinds, n_violations, n_messages, n_zlb, n_ack, n_data, n_undecoded;
static struct sb conn_text, conn_json;
static unsigned n_conn_lines;

static void sb_vprintf(struct sb *b, const char *fmt, va_list ap)
{
	va_list ap2;
	size_t need;
	char *np;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return;
	need = b->len + (size_t)n + 1;
	if (need > b->cap) {
		np = realloc(b->p, need * 2);
		if (np == NULL)
			return;
		b->p = np;
		b->cap = need * 2;
	}
	vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	b->len += (size_t)n;
}

static void sb_printf(struct sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sb *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_vprintf(b, fmt, ap);
	va_end(ap);
}

static const char *sb_str(const struct sb *b)
{
	return b->p ? b->p : "";
}

static void sb_free(struct sb *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/* ---- string helpers shared with avp.c ---- */

/* JSON string contents (no quotes); bytes outside printable ASCII as \u00XX. */
void insp_json_str(char *buf, size_t len, const uint8_t *p, size_t n)
{
	size_t o = 0, i;

	for (i = 0; i < n && o + 7 < len; i++) {
		if (p[i] == '"' || p[i] == '\\')
			o += (size_t)snprintf(buf + o, len - o, "\\%c", p[i]);
		else if (p[i] < 0x20 || p[i] > 0x7e)
			o += (size_t)snprintf(buf + o, len - o, "\\u%04x", p[i]);
		else
			buf[o++] = (char)p[i];
	}
	buf[o < len ? o : len - 1] = '\0';
}

/* Text for a terminal: printable ASCII as is, the rest as \xNN. */
void insp_text_str(char *buf, size_t len, const uint8_t *p, size_t n)
{
	size_t o = 0, i;

	for (i = 0; i < n && o + 5 < len; i++) {
		if (p[i] == '"' || p[i] == '\\' || p[i] < 0x20 || p[i] > 0x7e)
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", p[i]);
		else
			buf[o++] = (char)p[i];
	}
	buf[o < len ? o : len - 1] = '\0';
}

void insp_hex(char *buf, size_t len, const uint8_t *p, size_t n)
{
	size_t o = 0, i;

	for (i = 0; i < n && o + 3 <= len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%02x", p[i]);
	if (len)
		buf[o < len ? o : len - 1] = '\0';
}

/* ---- records ---- */

void insp_out_init(const struct insp_opts *o)
{
	opts = o;
}

struct insp_rec *insp_rec_new(const struct insp_pkt *pk)
{
	struct insp_rec *r = calloc(1, sizeof(*r));

	if (r == NULL) {
		perror("l2tpv3-inspect");
		exit(2);
	}
	r->frame = pk->frame;
	r->t_ns = pk->t_ns;
	r->over_ip = pk->over_ip;
	r->dir = -1;
	insp_addr_str(&pk->src, true, r->src, sizeof(r->src));
	insp_addr_str(&pk->dst, true, r->dst, sizeof(r->dst));
	if (pk->kind == PKT_UNDECODED) {
		r->why = pk->why;
		n_undecoded++;
	}
	*tail = r;
	tail = &r->next;
	return r;
}

void insp_out_data(void)
{
	n_data++;
}

/* type: the message type's name, or NULL when the header itself was refused. */
void insp_rec_header(struct insp_rec *r, unsigned conn, int dir, const struct l2tp_msg *m,
		     const char *type)
{
	r->conn = conn;
	r->dir = dir;
	r->header_ok = type != NULL;
	n_messages++;
	if (type == NULL)
		return;
	snprintf(r->type, sizeof(r->type), "%s", type);
	r->type_code = m->type;
	r->ccid = m->ccid;
	r->ns = m->ns;
	r->nr = m->nr;
	n_zlb += strcmp(type, "ZLB") == 0;
	n_ack += strcmp(type, "ACK") == 0;
}

void insp_rec_data(struct insp_rec *r, unsigned conn, int dir, uint32_t sid)
{
	r->conn = conn;
	r->dir = dir;
	r->data = true;
	r->sid = sid;
}

/* key: text key ("host-name"); the JSON key is the same with '_' for '-'. */
void insp_rec_avp(struct insp_rec *r, const char *key, const char *text, const char *json)
{
	char jkey[48];
	size_t i;

	if (!opts->json) {
		sb_printf(&r->avps, "%s%s %s", r->n_avps ? ", " : "", key, text);
	} else if (json != NULL) {
		for (i = 0; key[i] && i + 1 < sizeof(jkey); i++)
			jkey[i] = key[i] == '-' ? '_' : key[i];
		jkey[i] = '\0';
		sb_printf(&r->avps, "%s\"%s\":%s", r->n_avps ? "," : "", jkey, json);
	} else {
		return;
	}
	r->n_avps++;
}

static const char *const list_text[] = {
	[INSP_LIST_SKIPPED]	= "%s (skipped)",
	[INSP_LIST_V2COMPAT]	= "v2-compat %s",
	[INSP_LIST_UNKNOWN_M]	= "%s (M=1, unknown)",
};

/* AVPs the codec does not store: listed by name in wire order (text) or per list (JSON). */
void insp_rec_list(struct insp_rec *r, enum insp_list list, const char *what)
{
	struct sb *b = &r->lists[list];
	char esc[128];

	if (!opts->json) {
		if (r->n_avps++)
			sb_printf(&r->avps, ", ");
		sb_printf(&r->avps, list_text[list], what);
		return;
	}
	insp_json_str(esc, sizeof(esc), (const uint8_t *)what, strlen(what));
	sb_printf(b, "%s\"%s\"", r->n_list[list]++ ? "," : "", esc);
}

void insp_rec_note(struct insp_rec *r, const char *fmt, ...)
{
	char buf[256], esc[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (opts->json) {
		insp_json_str(esc, sizeof(esc), (const uint8_t *)buf, strlen(buf));
		sb_printf(&r->notes, "%s\"%s\"", r->n_notes ? "," : "", esc);
	} else {
		sb_printf(&r->notes, "%s%s", r->n_notes ? "; " : "", buf);
	}
	r->n_notes++;
}

static void count_kind(const char *kind)
{
	struct kind_count *k;
	unsigned i;

	n_violations++;
	for (i = 0; i < n_kinds; i++)
		if (strcmp(kinds[i].kind, kind) == 0) {
			kinds[i].n++;
			return;
		}
	k = realloc(kinds, (n_kinds + 1) * sizeof(*kinds));
	if (k == NULL)
		return;
	kinds = k;
	kinds[n_kinds].kind = kind;
	kinds[n_kinds++].n = 1;
}

void insp_rec_violation(struct insp_rec *r, const char *kind, const char *fmt, ...)
{
	struct viol *v;
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	v = realloc(r->viols, (r->n_viols + 1) * sizeof(*v));
	if (v == NULL)
		return;
	r->viols = v;
	v[r->n_viols].kind = kind;
	v[r->n_viols].detail = strdup(buf);
	r->n_viols++;
	count_kind(kind);
}

void insp_rec_retransmission(struct insp_rec *r, unsigned copy, int64_t interval_ns)
{
	r->rtx_copy = copy;
	r->rtx_interval = interval_ns;
}

void insp_rec_hold(struct insp_rec *r, bool hold)
{
	if (hold)
		r->holds++;
	else if (r->holds)
		r->holds--;
}

unsigned insp_out_violations(void)
{
	return n_violations;
}

/* ---- rendering ---- */

static const char *dir_name(int dir)
{
	return dir == 0 ? "A>B" : dir == 1 ? "B>A" : "?";
}

static void out_text(const struct insp_rec *r)
{
	unsigned i;

	printf("%12.3f ", (double)r->t_ns / 1e6);
	if (r->conn)
		printf("c%u %s ", r->conn, dir_name(r->dir));
	printf("%s > %s", r->src, r->dst);
	if (r->why) {
		printf(" frame %u: not decoded: %s\n", r->frame, r->why);
		return;
	}
	if (r->data)
		printf(" data session %u", r->sid);
	else if (r->header_ok)
		printf(" %s ccid 0x%08x ns %u nr %u", r->type, r->ccid, r->ns, r->nr);
	else
		printf(" frame %u: bad header", r->frame);
	if (r->rtx_copy)
		printf(" [retransmission #%u, +%.1f ms]", r->rtx_copy - 1,
		       (double)r->rtx_interval / 1e6);
	if (r->n_avps)
		printf(" {%s}", sb_str(&r->avps));
	if (r->n_notes)
		printf(" -- %s", sb_str(&r->notes));
	for (i = 0; i < r->n_viols; i++)
		printf(" !! %s: %s", r->viols[i].kind, r->viols[i].detail);
	putchar('\n');
}

static void out_json_viols(const struct insp_rec *r)
{
	char esc[1024];
	unsigned i;

	printf(",\"violations\":[");
	for (i = 0; i < r->n_viols; i++) {
		insp_json_str(esc, sizeof(esc), (const uint8_t *)r->viols[i].detail,
			      strlen(r->viols[i].detail));
		printf("%s{\"kind\":\"%s\",\"detail\":\"%s\"}", i ? "," : "", r->viols[i].kind, esc);
	}
	printf("]");
}

static const char *const list_json[] = {
	[INSP_LIST_SKIPPED]	= "skipped",
	[INSP_LIST_V2COMPAT]	= "v2_compat",
	[INSP_LIST_UNKNOWN_M]	= "unknown_mandatory",
};

static void out_json(const struct insp_rec *r)
{
	unsigned i;

	printf("{\"frame\":%u,\"time_ms\":%.3f,\"src\":\"%s\",\"dst\":\"%s\",\"encap\":\"%s\"",
	       r->frame, (double)r->t_ns / 1e6, r->src, r->dst, r->over_ip ? "ip" : "udp");
	if (r->conn)
		printf(",\"conn\":%u,\"dir\":\"%s\"", r->conn, dir_name(r->dir));
	if (r->why) {
		printf(",\"not_decoded\":\"%s\"}\n", r->why);
		return;
	}
	if (r->data) {
		printf(",\"type\":\"data\",\"session_id\":%u", r->sid);
		out_json_viols(r);
		printf("}\n");
		return;
	}
	if (r->header_ok)
		printf(",\"type\":\"%s\",\"type_code\":%u,\"ccid\":%u,\"ns\":%u,\"nr\":%u",
		       r->type, r->type_code, r->ccid, r->ns, r->nr);
	if (r->rtx_copy)
		printf(",\"retransmission\":{\"copy\":%u,\"interval_ms\":%.3f}", r->rtx_copy,
		       (double)r->rtx_interval / 1e6);
	printf(",\"avps\":{%s}", sb_str(&r->avps));
	for (i = 0; i < 3; i++)
		if (r->n_list[i])
			printf(",\"%s\":[%s]", list_json[i], sb_str(&r->lists[i]));
	if (r->n_notes)
		printf(",\"notes\":[%s]", sb_str(&r->notes));
	out_json_viols(r);
	printf("}\n");
}

static void rec_free(struct insp_rec *r)
{
	unsigned i;

	for (i = 0; i < r->n_viols; i++)
		free(r->viols[i].detail);
	free(r->viols);
	sb_free(&r->avps);
	sb_free(&r->notes);
	for (i = 0; i < 3; i++)
		sb_free(&r->lists[i]);
	free(r);
}

/* Prints records up to the first held one (all: every record). */
void insp_out_flush(bool all)
{
	struct insp_rec *r;

	while ((r = head) != NULL && (all || r->holds == 0)) {
		if (opts->json)
			out_json(r);
		else
			out_text(r);
		head = r->next;
		if (head == NULL)
			tail = &head;
		rec_free(r);
	}
}

/* ---- end of capture ---- */

/* One line (text) or object (JSON) per connection, printed with the summary. */
void insp_out_conn(unsigned id, const char *text, const char *json)
{
	if (opts->json)
		sb_printf(&conn_json, "%s%s", n_conn_lines ? "," : "", json);
	else
		sb_printf(&conn_text, "connection c%u: %s\n", id, text);
	n_conn_lines++;
}

static void summary_text(unsigned frames, unsigned connections)
{
	unsigned i;

	fputs(sb_str(&conn_text), stdout);
	printf("summary: %u frames, %u control messages (%u ZLB, %u ACK), %u data messages, "
	       "%u not decoded, %u connections; %u violations", frames, n_messages, n_zlb, n_ack,
	       n_data, n_undecoded, connections, n_violations);
	for (i = 0; i < n_kinds; i++)
		printf("%s %s %u", i ? "," : ":", kinds[i].kind, kinds[i].n);
	putchar('\n');
}

static void summary_json(unsigned frames, unsigned connections)
{
	unsigned i;

	printf("{\"summary\":{\"frames\":%u,\"messages\":%u,\"zlb\":%u,\"ack\":%u,"
	       "\"data_messages\":%u,\"not_decoded\":%u,\"connections\":%u,\"violations\":%u,"
	       "\"by_kind\":{", frames, n_messages, n_zlb, n_ack, n_data, n_undecoded,
	       connections, n_violations);
	for (i = 0; i < n_kinds; i++)
		printf("%s\"%s\":%u", i ? "," : "", kinds[i].kind, kinds[i].n);
	printf("},\"connection_list\":[%s]}}\n", sb_str(&conn_json));
}

void insp_out_summary(unsigned frames, unsigned connections)
{
	insp_out_flush(true);
	if (opts->json)
		summary_json(frames, connections);
	else
		summary_text(frames, connections);
	sb_free(&conn_text);
	sb_free(&conn_json);
	free(kinds);
	kinds = NULL;
	n_kinds = 0;
}
