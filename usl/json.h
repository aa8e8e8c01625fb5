/*
 * usl/json.h - a small reader of one JSON document, for request lines.
 *
 * The control socket reads one JSON object per line, tens of thousands a
 * second in a batch.  A general JSON library builds a tree of allocated
 * objects for each, and json-c also makes and frees a C locale on every
 * parse; this reader does neither.  It fills a caller-owned document with a
 * fixed pool of values and one scratch buffer, both reused from line to line:
 * nothing is allocated per line once the scratch is as long as the longest
 * line seen.
 *
 * It reads RFC 8259 JSON strictly: no comments, no trailing commas, no
 * leading zeros, no raw control characters or lone surrogates in strings,
 * nothing after the document but white space.  Bounds, each a clear error:
 * USL_JSON_MAX_VALUES values, USL_JSON_MAX_DEPTH levels of nesting.
 *
 * Values link as a tree by index: an object's or array's members are its
 * first child and that child's next siblings, in document order.  A member
 * given twice is kept twice; usl_json_get() finds the last, as json-c's
 * objects keep the last.
 */
#ifndef USL_JSON_H
#define USL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define USL_JSON_MAX_VALUES	256	/* values in one document, containers included */
#define USL_JSON_MAX_DEPTH	32	/* nested objects and arrays (json-c's default) */

enum usl_json_type {
	USL_JSON_NULL,
	USL_JSON_BOOL,
	USL_JSON_INT,		/* a number without fraction or exponent */
	USL_JSON_NUMBER,	/* any other number */
	USL_JSON_STRING,
	USL_JSON_ARRAY,
	USL_JSON_OBJECT,
};

struct usl_json_value {
	enum usl_json_type type;
	/*
	 * A scalar's text, NUL-terminated: a string's bytes unescaped (it may
	 * hold NULs: len counts them), any other scalar's JSON text ("true",
	 * "-12", "1e3").  NULL for an array or an object.
	 */
	const char *text;
	size_t len;
	const char *key;	/* an object member's key, unescaped, NUL-terminated; else NULL */
	size_t key_len;		/* its bytes: a key holding a NUL matches no name */
	int64_t i;		/* INT: the value, clamped to int64 (see in_range) */
	double d;		/* INT and NUMBER: the value (strtod: in the C locale) */
	bool b;			/* BOOL */
	bool in_range;		/* INT: i is exact */
	uint16_t child;		/* ARRAY, OBJECT: first member's index, 0 when empty */
	uint16_t next;		/* next member of the same container, 0 at the end */
	uint16_t n;		/* ARRAY, OBJECT: members */
};

struct usl_json {
	struct usl_json_value v[USL_JSON_MAX_VALUES];	/* v[0] is the document's root */
	unsigned n;
	char *scratch;		/* the scalars' texts; grown to fit, kept between parses */
	size_t scratch_size;
};

/* An empty document (or zero the struct). */
void usl_json_init(struct usl_json *doc);
void usl_json_free(struct usl_json *doc);

/*
 * Reads len bytes of s (no NUL needed) into doc, replacing what it held.
 * 0, or -1 with err saying what is wrong and at which byte offset (or that
 * memory ran out).
 */
int usl_json_parse(struct usl_json *doc, const char *s, size_t len, char *err, size_t errlen);

static inline const struct usl_json_value *usl_json_root(const struct usl_json *doc)
{
	return doc->n > 0 ? &doc->v[0] : NULL;
}

/* A container's first member, and the member after m; NULL at the end. */
const struct usl_json_value *usl_json_first(const struct usl_json *doc,
					    const struct usl_json_value *c);
const struct usl_json_value *usl_json_next(const struct usl_json *doc,
					   const struct usl_json_value *m);

/* Member m's key is name, whole (a key holding a NUL is no name). */
static inline bool usl_json_key_is(const struct usl_json_value *m, const char *name)
{
	return m->key != NULL && strcmp(m->key, name) == 0 && strlen(m->key) == m->key_len;
}

/* The last member of object o named key; NULL when none or o is not an object. */
const struct usl_json_value *usl_json_get(const struct usl_json *doc,
					  const struct usl_json_value *o, const char *key);

/* "null", "true or false", "an integer", "a number", "a string", "a list", "an object" */
const char *usl_json_type_name(enum usl_json_type t);

#endif
