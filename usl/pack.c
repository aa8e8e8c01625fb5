/*
 * usl/pack.c - see pack.h.
 */
#include <stdlib.h>
#include <string.h>
#include "pack.h"

#define PACK_NULL_STR	0xffffffffu

void usl_pack_init(struct usl_pack *w)
{
	memset(w, 0, sizeof(*w));
}

void usl_pack_free(struct usl_pack *w)
{
	free(w->p);
	usl_pack_init(w);
}

static uint8_t *pack_room(struct usl_pack *w, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (w->failed)
		return NULL;
	if (n > SIZE_MAX / 2 - w->len) {
		w->failed = true;
		return NULL;
	}
	if (w->len + n > w->cap) {
		cap = w->cap ? w->cap : 4096;
		while (cap < w->len + n)
			cap *= 2;
		p = realloc(w->p, cap);
		if (p == NULL) {
			w->failed = true;
			return NULL;
		}
		w->p = p;
		w->cap = cap;
	}
	p = w->p + w->len;
	w->len += n;
	return p;
}

static void pack_le(struct usl_pack *w, uint64_t v, size_t n)
{
	uint8_t *p = pack_room(w, n);

	for (size_t i = 0; p != NULL && i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

void usl_pack_u8(struct usl_pack *w, uint8_t v) { pack_le(w, v, 1); }
void usl_pack_u16(struct usl_pack *w, uint16_t v) { pack_le(w, v, 2); }
void usl_pack_u32(struct usl_pack *w, uint32_t v) { pack_le(w, v, 4); }
void usl_pack_u64(struct usl_pack *w, uint64_t v) { pack_le(w, v, 8); }

void usl_pack_bytes(struct usl_pack *w, const void *src, size_t n)
{
	uint8_t *p = pack_room(w, n);

	if (p != NULL && n > 0)
		memcpy(p, src, n);
}

void usl_pack_blob(struct usl_pack *w, const void *src, size_t n)
{
	if (n >= PACK_NULL_STR) {
		w->failed = true;
		return;
	}
	usl_pack_u32(w, (uint32_t)n);
	usl_pack_bytes(w, src, n);
}

void usl_pack_str(struct usl_pack *w, const char *s)
{
	if (s == NULL)
		usl_pack_u32(w, PACK_NULL_STR);
	else
		usl_pack_blob(w, s, strlen(s));
}

size_t usl_pack_reserve(struct usl_pack *w, size_t n)
{
	uint8_t *p = pack_room(w, n);

	if (p == NULL)
		return 0;
	memset(p, 0, n);
	return (size_t)(p - w->p);
}

void usl_pack_patch_u32(struct usl_pack *w, size_t off, uint32_t v)
{
	if (w->failed || off + 4 > w->len)
		return;
	for (size_t i = 0; i < 4; i++)
		w->p[off + i] = (uint8_t)(v >> (8 * i));
}

void usl_unpack_init(struct usl_unpack *r, const void *p, size_t len)
{
	r->p = p;
	r->len = len;
	r->off = 0;
	r->bad = false;
	r->version = 0;
}

static const uint8_t *unpack_take(struct usl_unpack *r, size_t n)
{
	const uint8_t *p;

	if (r->bad || n > r->len - r->off) {
		r->bad = true;
		return NULL;
	}
	p = r->p + r->off;
	r->off += n;
	return p;
}

static uint64_t unpack_le(struct usl_unpack *r, size_t n)
{
	const uint8_t *p = unpack_take(r, n);
	uint64_t v = 0;

	for (size_t i = 0; p != NULL && i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

uint8_t usl_unpack_u8(struct usl_unpack *r) { return (uint8_t)unpack_le(r, 1); }
uint16_t usl_unpack_u16(struct usl_unpack *r) { return (uint16_t)unpack_le(r, 2); }
uint32_t usl_unpack_u32(struct usl_unpack *r) { return (uint32_t)unpack_le(r, 4); }
uint64_t usl_unpack_u64(struct usl_unpack *r) { return unpack_le(r, 8); }

bool usl_unpack_bool(struct usl_unpack *r)
{
	uint8_t v = usl_unpack_u8(r);

	if (v > 1)
		r->bad = true;
	return v == 1;
}

void usl_unpack_bytes(struct usl_unpack *r, void *out, size_t n)
{
	const uint8_t *p = unpack_take(r, n);

	if (p != NULL && n > 0)
		memcpy(out, p, n);
	else if (p == NULL)
		memset(out, 0, n);
}

const uint8_t *usl_unpack_blob(struct usl_unpack *r, size_t *n)
{
	uint32_t len = usl_unpack_u32(r);
	const uint8_t *p;

	*n = 0;
	if (len == PACK_NULL_STR) {
		r->bad = true;
		return NULL;
	}
	p = unpack_take(r, len);
	if (p != NULL)
		*n = len;
	return p;
}

/* The string's bytes (not terminated) and length; NULL for a NULL string or when bad. */
static const uint8_t *unpack_str_bytes(struct usl_unpack *r, size_t max, size_t *n,
				       bool *was_null)
{
	uint32_t len = usl_unpack_u32(r);
	const uint8_t *p;

	*n = 0;
	if (was_null != NULL)
		*was_null = !r->bad && len == PACK_NULL_STR;
	if (r->bad || len == PACK_NULL_STR)
		return NULL;
	if (len > max) {
		r->bad = true;
		return NULL;
	}
	p = unpack_take(r, len);
	if (p != NULL && memchr(p, '\0', len) != NULL) {
		r->bad = true;
		return NULL;
	}
	*n = len;
	return p;
}

char *usl_unpack_str(struct usl_unpack *r, size_t max, bool *was_null)
{
	size_t n;
	const uint8_t *p = unpack_str_bytes(r, max, &n, was_null);
	char *s;

	if (p == NULL)
		return NULL;
	s = malloc(n + 1);
	if (s == NULL) {
		r->bad = true;
		return NULL;
	}
	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

bool usl_unpack_str_to(struct usl_unpack *r, char *out, size_t cap)
{
	size_t n;
	bool was_null;
	const uint8_t *p = unpack_str_bytes(r, cap ? cap - 1 : 0, &n, &was_null);

	if (cap > 0)
		out[0] = '\0';
	if (r->bad || cap == 0)
		return false;
	if (p != NULL)
		memcpy(out, p, n);
	out[n] = '\0';
	return !was_null;
}
