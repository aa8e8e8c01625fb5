/*
 * tests/fuzz/fuzz_json.c - libFuzzer target for usl/json, the control
 * socket's request reader.  Besides the sanitizers, an oracle: a document
 * read is written back as JSON and read again, and must give the same tree
 * (types, keys, texts, values, shape); a document refused leaves none.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "usl/json.h"

static struct usl_json doc, again;
static char out[1 << 20];
static size_t olen;

static void put(const char *s, size_t n)
{
	if (olen + n > sizeof(out))
		abort();
	memcpy(out + olen, s, n);
	olen += n;
}

static void put_string(const char *s, size_t n)
{
	put("\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[8];

		if (c < 0x20 || c == '"' || c == '\\') {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			put(esc, 6);
		} else {
			put((const char *)&c, 1);
		}
	}
	put("\"", 1);
}

static void write_value(const struct usl_json *d, const struct usl_json_value *v)
{
	const struct usl_json_value *m;
	bool obj = v->type == USL_JSON_OBJECT;

	if (v->type != USL_JSON_ARRAY && !obj) {
		if (v->text == NULL || v->text[v->len] != '\0')
			abort();	/* a scalar's text is NUL-terminated */
		if (v->type == USL_JSON_STRING)
			put_string(v->text, v->len);
		else
			put(v->text, v->len);
		return;
	}
	put(obj ? "{" : "[", 1);
	for (m = usl_json_first(d, v); m != NULL; m = usl_json_next(d, m)) {
		if (m != usl_json_first(d, v))
			put(",", 1);
		if ((m->key != NULL) != obj)
			abort();	/* keys exactly on objects' members */
		if (obj) {
			put_string(m->key, m->key_len);
			put(":", 1);
		}
		write_value(d, m);
	}
	put(obj ? "}" : "]", 1);
}

static void same(const struct usl_json_value *a, const struct usl_json_value *b)
{
	if (a->type != b->type || a->n != b->n || a->len != b->len || a->key_len != b->key_len ||
	    (a->key != NULL) != (b->key != NULL) ||
	    (a->key != NULL && memcmp(a->key, b->key, a->key_len) != 0) ||
	    (a->text != NULL && memcmp(a->text, b->text, a->len) != 0) ||
	    (a->type == USL_JSON_INT && (a->i != b->i || a->in_range != b->in_range)) ||
	    (a->type == USL_JSON_BOOL && a->b != b->b))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[160];
	unsigned k = 0;

	if (usl_json_parse(&doc, (const char *)data, size, err, sizeof(err)) < 0) {
		if (usl_json_root(&doc) != NULL || strstr(err, " at offset ") == NULL)
			abort();
		return 0;
	}
	if (doc.n == 0 || doc.n > USL_JSON_MAX_VALUES)
		abort();
	olen = 0;
	write_value(&doc, usl_json_root(&doc));
	if (usl_json_parse(&again, out, olen, err, sizeof(err)) < 0 || again.n != doc.n)
		abort();
	/* both pools hold the values in document order */
	for (k = 0; k < doc.n; k++)
		same(&doc.v[k], &again.v[k]);
	return 0;
}
