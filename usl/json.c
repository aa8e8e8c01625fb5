/* usl/json.c - a small strict JSON reader into a fixed pool (see json.h). */
#include "usl/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct reader {
	struct usl_json *doc;
	const char *start, *p, *end;
	char *out;			/* next free byte of the scratch */
	unsigned depth;
	char *err;
	size_t errlen;
};

static int fail(struct reader *r, const char *what)
{
	snprintf(r->err, r->errlen, "%s at offset %zu", what, (size_t)(r->p - r->start));
	return -1;
}

static int fail_unexpected(struct reader *r)
{
	char what[40];

	if (r->p >= r->end)
		return fail(r, "unexpected end");
	if (*r->p > 0x20 && *r->p < 0x7f)
		snprintf(what, sizeof(what), "unexpected '%c'", *r->p);
	else
		snprintf(what, sizeof(what), "unexpected byte 0x%02x", (unsigned char)*r->p);
	return fail(r, what);
}

static void skip_space(struct reader *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

/* The next byte after white space is c: consumed. */
static bool accept(struct reader *r, char c)
{
	skip_space(r);
	if (r->p < r->end && *r->p == c) {
		r->p++;
		return true;
	}
	return false;
}

static struct usl_json_value *value_new(struct reader *r, enum usl_json_type t)
{
	struct usl_json_value *v;

	if (r->doc->n >= USL_JSON_MAX_VALUES) {
		char what[48];

		snprintf(what, sizeof(what), "more than %d values", USL_JSON_MAX_VALUES);
		fail(r, what);
		return NULL;
	}
	v = &r->doc->v[r->doc->n++];
	memset(v, 0, sizeof(*v));
	v->type = t;
	return v;
}

static int hex4(struct reader *r, unsigned *cp)
{
	*cp = 0;
	if (r->end - r->p < 4)
		return fail(r, "short \\u escape");
	for (int i = 0; i < 4; i++) {
		char c = *r->p++;

		*cp <<= 4;
		if (c >= '0' && c <= '9')
			*cp |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*cp |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*cp |= (unsigned)(c - 'A' + 10);
		else {
			r->p--;
			return fail(r, "bad hex digit in a \\u escape");
		}
	}
	return 0;
}

static void put_utf8(struct reader *r, unsigned cp)
{
	unsigned char *o = (unsigned char *)r->out;

	if (cp < 0x80) {
		*o++ = (unsigned char)cp;
	} else if (cp < 0x800) {
		*o++ = (unsigned char)(0xc0 | cp >> 6);
		*o++ = (unsigned char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*o++ = (unsigned char)(0xe0 | cp >> 12);
		*o++ = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		*o++ = (unsigned char)(0x80 | (cp & 0x3f));
	} else {
		*o++ = (unsigned char)(0xf0 | cp >> 18);
		*o++ = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
		*o++ = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		*o++ = (unsigned char)(0x80 | (cp & 0x3f));
	}
	r->out = (char *)o;
}

/* \u and four hex digits (r->p past the 'u'), a surrogate pair whole: UTF-8 never outgrows its escape. */
static int unicode_escape(struct reader *r)
{
	unsigned cp, lo;

	if (hex4(r, &cp) < 0)
		return -1;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return fail(r, "lone low surrogate in a \\u escape");
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (r->end - r->p < 2 || r->p[0] != '\\' || r->p[1] != 'u')
			return fail(r, "high surrogate without its low surrogate");
		r->p += 2;
		if (hex4(r, &lo) < 0)
			return -1;
		if (lo < 0xdc00 || lo > 0xdfff)
			return fail(r, "high surrogate without its low surrogate");
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	put_utf8(r, cp);
	return 0;
}

static int escape(struct reader *r)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *k;

	if (r->p >= r->end)
		return fail(r, "unterminated string");
	if (*r->p == 'u') {
		r->p++;
		return unicode_escape(r);
	}
	if ((k = memchr(from, *r->p, sizeof(from) - 1)) == NULL)
		return fail(r, "bad escape in a string");
	*r->out++ = to[k - from];
	r->p++;
	return 0;
}

/*
 * A string (r->p on its opening quote) unescaped into the scratch, NUL
 * added: its output, NUL included, never outgrows its two quotes and body.
 */
static int string_body(struct reader *r, const char **text, size_t *len)
{
	char *start = r->out;

	r->p++;
	for (;;) {
		const char *run = r->p;

		while (r->p < r->end && *r->p != '"' && *r->p != '\\' &&
		       (unsigned char)*r->p >= 0x20)
			r->p++;
		memcpy(r->out, run, (size_t)(r->p - run));
		r->out += r->p - run;
		if (r->p >= r->end)
			return fail(r, "unterminated string");
		if (*r->p == '"')
			break;
		if (*r->p != '\\')
			return fail(r, "control character in a string (escape it)");
		r->p++;
		if (escape(r) < 0)
			return -1;
	}
	r->p++;
	*len = (size_t)(r->out - start);
	*r->out++ = '\0';
	*text = start;
	return 0;
}

/* A scalar's JSON text [from, r->p) copied to the scratch and NUL-terminated. */
static void keep_text(struct reader *r, struct usl_json_value *v, const char *from)
{
	v->len = (size_t)(r->p - from);
	memcpy(r->out, from, v->len);
	v->text = r->out;
	r->out += v->len;
	*r->out++ = '\0';
}

static size_t digits(struct reader *r)
{
	const char *from = r->p;

	while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
		r->p++;
	return (size_t)(r->p - from);
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static int number(struct reader *r, struct usl_json_value *v)
{
	const char *from = r->p;
	bool neg = false;
	uint64_t mag = 0;

	if (*r->p == '-') {
		neg = true;
		r->p++;
	}
	if (r->p < r->end && *r->p == '0') {
		r->p++;
		if (r->p < r->end && *r->p >= '0' && *r->p <= '9')
			return fail(r, "leading zero in a number");
	} else if (digits(r) == 0) {
		return fail(r, "bad number");
	}
	v->type = USL_JSON_INT;
	if (r->p < r->end && *r->p == '.') {
		r->p++;
		if (digits(r) == 0)
			return fail(r, "bad number: no digit after '.'");
		v->type = USL_JSON_NUMBER;
	}
	if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
		r->p++;
		if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
			r->p++;
		if (digits(r) == 0)
			return fail(r, "bad number: no digit in the exponent");
		v->type = USL_JSON_NUMBER;
	}
	keep_text(r, v, from);
	v->d = strtod(v->text, NULL);
	if (v->type == USL_JSON_NUMBER)
		return 0;
	v->in_range = true;
	for (const char *c = v->text + neg; *c != '\0'; c++) {
		unsigned dgt = (unsigned)(*c - '0');

		if (mag > (UINT64_MAX - dgt) / 10) {
			mag = UINT64_MAX;
			break;
		}
		mag = mag * 10 + dgt;
	}
	if (neg && mag > (uint64_t)INT64_MAX + 1) {
		v->i = INT64_MIN;
		v->in_range = false;
	} else if (neg) {
		v->i = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
	} else if (mag > INT64_MAX) {
		v->i = INT64_MAX;
		v->in_range = false;
	} else {
		v->i = (int64_t)mag;
	}
	return 0;
}

static int literal(struct reader *r, struct usl_json_value *v)
{
	static const struct {
		const char *word;
		enum usl_json_type type;
		bool b;
	} words[] = {
		{ "true", USL_JSON_BOOL, true },
		{ "false", USL_JSON_BOOL, false },
		{ "null", USL_JSON_NULL, false },
	};
	const char *from = r->p;

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t n = strlen(words[i].word);

		if ((size_t)(r->end - r->p) >= n && memcmp(r->p, words[i].word, n) == 0) {
			r->p += n;
			v->type = words[i].type;
			v->b = words[i].b;
			keep_text(r, v, from);
			return 0;
		}
	}
	return fail_unexpected(r);
}

static int value(struct reader *r, uint16_t *idx);

/* Appends the member at index m to container c, after *last. */
static void link_member(struct reader *r, struct usl_json_value *c, uint16_t *last, uint16_t m)
{
	if (*last == 0)
		c->child = m;
	else
		r->doc->v[*last].next = m;
	*last = m;
	c->n++;
}

/* An object's or array's members (r->p past its '{' or '['). */
static int members(struct reader *r, uint16_t ci, char close)
{
	struct usl_json_value *c = &r->doc->v[ci];
	uint16_t last = 0, m;

	if (++r->depth > USL_JSON_MAX_DEPTH) {
		char what[48];

		snprintf(what, sizeof(what), "nested deeper than %d", USL_JSON_MAX_DEPTH);
		return fail(r, what);
	}
	if (accept(r, close))
		goto done;
	do {
		const char *key = NULL;
		size_t keylen = 0;

		if (close == '}') {
			skip_space(r);
			if (r->p >= r->end || *r->p != '"')
				return r->p < r->end && *r->p == '}' ?
					fail(r, "trailing comma in an object") : fail_unexpected(r);
			if (string_body(r, &key, &keylen) < 0)
				return -1;
			if (!accept(r, ':'))
				return r->p < r->end ? fail(r, "expected ':' after a key") :
					fail_unexpected(r);
		}
		if (value(r, &m) < 0)
			return -1;
		r->doc->v[m].key = key;
		r->doc->v[m].key_len = key != NULL ? keylen : 0;
		link_member(r, c, &last, m);
	} while (accept(r, ','));
	if (!accept(r, close)) {
		char what[40];

		if (r->p >= r->end)
			return fail_unexpected(r);
		snprintf(what, sizeof(what), "expected ',' or '%c'", close);
		return fail(r, what);
	}
done:
	r->depth--;
	return 0;
}

static int value(struct reader *r, uint16_t *idx)
{
	struct usl_json_value *v;

	skip_space(r);
	if (r->p >= r->end)
		return fail_unexpected(r);
	if ((v = value_new(r, USL_JSON_NULL)) == NULL)
		return -1;
	*idx = (uint16_t)(v - r->doc->v);
	switch (*r->p) {
	case '{':
		v->type = USL_JSON_OBJECT;
		r->p++;
		return members(r, *idx, '}');
	case '[':
		v->type = USL_JSON_ARRAY;
		r->p++;
		return members(r, *idx, ']');
	case '"':
		v->type = USL_JSON_STRING;
		return string_body(r, &v->text, &v->len);
	case '-':
	case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9':
		return number(r, v);
	default:
		return literal(r, v);
	}
}

void usl_json_init(struct usl_json *doc)
{
	memset(doc, 0, sizeof(*doc));
}

void usl_json_free(struct usl_json *doc)
{
	free(doc->scratch);
	usl_json_init(doc);
}

/*
 * The scratch holds every scalar's text with its NUL: at most the line's
 * bytes plus one NUL per value (a string's output fits in its own span).
 */
static int scratch_fit(struct usl_json *doc, size_t len)
{
	size_t need = len + USL_JSON_MAX_VALUES + 1;
	char *s;

	if (need <= doc->scratch_size)
		return 0;
	if ((s = realloc(doc->scratch, need)) == NULL)
		return -1;
	doc->scratch = s;
	doc->scratch_size = need;
	return 0;
}

int usl_json_parse(struct usl_json *doc, const char *s, size_t len, char *err, size_t errlen)
{
	struct reader r = { .doc = doc, .start = s, .p = s, .end = s + len,
			    .err = err, .errlen = errlen };
	uint16_t root;

	doc->n = 0;
	if (scratch_fit(doc, len) < 0) {
		snprintf(err, errlen, "out of memory for a %zu-byte document", len);
		return -1;
	}
	r.out = doc->scratch;
	if (value(&r, &root) < 0)
		goto bad;
	skip_space(&r);
	if (r.p < r.end) {
		fail(&r, "data after the document");
		goto bad;
	}
	return 0;
bad:
	doc->n = 0;
	return -1;
}

const struct usl_json_value *usl_json_first(const struct usl_json *doc,
					    const struct usl_json_value *c)
{
	if (c == NULL || (c->type != USL_JSON_ARRAY && c->type != USL_JSON_OBJECT) || c->child == 0)
		return NULL;
	return &doc->v[c->child];
}

const struct usl_json_value *usl_json_next(const struct usl_json *doc,
					   const struct usl_json_value *m)
{
	return m->next == 0 ? NULL : &doc->v[m->next];
}

const struct usl_json_value *usl_json_get(const struct usl_json *doc,
					  const struct usl_json_value *o, const char *key)
{
	const struct usl_json_value *m, *found = NULL;

	if (o == NULL || o->type != USL_JSON_OBJECT)
		return NULL;
	for (m = usl_json_first(doc, o); m != NULL; m = usl_json_next(doc, m))
		if (usl_json_key_is(m, key))
			found = m;
	return found;
}

const char *usl_json_type_name(enum usl_json_type t)
{
	switch (t) {
	case USL_JSON_NULL:
		return "null";
	case USL_JSON_BOOL:
		return "true or false";
	case USL_JSON_INT:
		return "an integer";
	case USL_JSON_NUMBER:
		return "a number";
	case USL_JSON_STRING:
		return "a string";
	case USL_JSON_ARRAY:
		return "a list";
	case USL_JSON_OBJECT:
		return "an object";
	}
	return "a value";
}
