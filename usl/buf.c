/*
 * usl/buf.c - bounds-checked packet readers and writers.
 *
 * Every getter checks the length first and only then moves the offset, so
 * a failed read leaves the reader untouched.  Writers make overflow sticky:
 * once a write did not fit, later ones are refused too, so a truncated
 * message can never look complete.
 */
#include <string.h>

#include "buf.h"

/* Returns the next n bytes and consumes them, or NULL when fewer are left. */
const uint8_t *usl_rbuf_take(struct usl_rbuf *r, size_t n)
{
	const uint8_t *p;

	if (usl_rbuf_left(r) < n)
		return NULL;
	p = r->p + r->off;
	r->off += n;
	return p;
}

int usl_rbuf_skip(struct usl_rbuf *r, size_t n)
{
	return usl_rbuf_take(r, n) ? 0 : -1;
}

int usl_rbuf_u8(struct usl_rbuf *r, uint8_t *v)
{
	const uint8_t *p = usl_rbuf_take(r, 1);

	if (p == NULL)
		return -1;
	*v = p[0];
	return 0;
}

int usl_rbuf_u16(struct usl_rbuf *r, uint16_t *v)
{
	const uint8_t *p = usl_rbuf_take(r, 2);

	if (p == NULL)
		return -1;
	*v = usl_get_be16(p);
	return 0;
}

int usl_rbuf_u32(struct usl_rbuf *r, uint32_t *v)
{
	const uint8_t *p = usl_rbuf_take(r, 4);

	if (p == NULL)
		return -1;
	*v = usl_get_be32(p);
	return 0;
}

int usl_rbuf_u64(struct usl_rbuf *r, uint64_t *v)
{
	const uint8_t *p = usl_rbuf_take(r, 8);

	if (p == NULL)
		return -1;
	*v = (uint64_t)usl_get_be32(p) << 32 | usl_get_be32(p + 4);
	return 0;
}

int usl_rbuf_copy(struct usl_rbuf *r, void *out, size_t n)
{
	const uint8_t *p = usl_rbuf_take(r, n);

	if (p == NULL)
		return -1;
	if (n)
		memcpy(out, p, n);
	return 0;
}

uint8_t *usl_wbuf_reserve(struct usl_wbuf *w, size_t n)
{
	uint8_t *p;

	if (w->overflow || w->cap - w->len < n) {
		w->overflow = true;
		return NULL;
	}
	p = w->p + w->len;
	w->len += n;
	return p;
}

int usl_wbuf_u8(struct usl_wbuf *w, uint8_t v)
{
	uint8_t *p = usl_wbuf_reserve(w, 1);

	if (p == NULL)
		return -1;
	p[0] = v;
	return 0;
}

int usl_wbuf_u16(struct usl_wbuf *w, uint16_t v)
{
	uint8_t *p = usl_wbuf_reserve(w, 2);

	if (p == NULL)
		return -1;
	usl_put_be16(p, v);
	return 0;
}

int usl_wbuf_u32(struct usl_wbuf *w, uint32_t v)
{
	uint8_t *p = usl_wbuf_reserve(w, 4);

	if (p == NULL)
		return -1;
	usl_put_be32(p, v);
	return 0;
}

int usl_wbuf_u64(struct usl_wbuf *w, uint64_t v)
{
	uint8_t *p = usl_wbuf_reserve(w, 8);

	if (p == NULL)
		return -1;
	usl_put_be32(p, (uint32_t)(v >> 32));
	usl_put_be32(p + 4, (uint32_t)v);
	return 0;
}

int usl_wbuf_put(struct usl_wbuf *w, const void *src, size_t n)
{
	uint8_t *p = usl_wbuf_reserve(w, n);

	if (p == NULL)
		return -1;
	if (n)
		memcpy(p, src, n);
	return 0;
}

/* Patching outside what was written is a caller bug: flag it, write nothing. */
void usl_wbuf_patch_u16(struct usl_wbuf *w, size_t off, uint16_t v)
{
	if (off > w->len || w->len - off < 2) {
		w->overflow = true;
		return;
	}
	usl_put_be16(w->p + off, v);
}
