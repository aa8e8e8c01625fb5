/*
 * usl/buf.h - bounds-checked readers and writers for packet buffers.
 * Getters return -1 when the buffer is short and leave the reader where it
 * was, so a parser chains them into one error label and can never read past
 * the end.  Writers set an overflow flag instead of writing past capacity.
 * All multi-byte values are network byte order.
 */
#ifndef USL_BUF_H
#define USL_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

struct usl_rbuf {
	const uint8_t *p;
	size_t len;
	size_t off;
};

static inline void usl_rbuf_init(struct usl_rbuf *r, const void *p, size_t len)
{
	r->p = p; r->len = len; r->off = 0;
}
static inline size_t usl_rbuf_left(const struct usl_rbuf *r) { return r->len - r->off; }
int usl_rbuf_u8(struct usl_rbuf *r, uint8_t *v);
int usl_rbuf_u16(struct usl_rbuf *r, uint16_t *v);
int usl_rbuf_u32(struct usl_rbuf *r, uint32_t *v);
int usl_rbuf_u64(struct usl_rbuf *r, uint64_t *v);
int usl_rbuf_copy(struct usl_rbuf *r, void *out, size_t n);
/* Returns a pointer to the next n bytes and consumes them, or NULL. */
const uint8_t *usl_rbuf_take(struct usl_rbuf *r, size_t n);
int usl_rbuf_skip(struct usl_rbuf *r, size_t n);

struct usl_wbuf {
	uint8_t *p;
	size_t cap;
	size_t len;
	bool overflow;
};

static inline void usl_wbuf_init(struct usl_wbuf *w, void *p, size_t cap)
{
	w->p = p; w->cap = cap; w->len = 0; w->overflow = false;
}
int usl_wbuf_u8(struct usl_wbuf *w, uint8_t v);
int usl_wbuf_u16(struct usl_wbuf *w, uint16_t v);
int usl_wbuf_u32(struct usl_wbuf *w, uint32_t v);
int usl_wbuf_u64(struct usl_wbuf *w, uint64_t v);
int usl_wbuf_put(struct usl_wbuf *w, const void *src, size_t n);
/* Reserves n bytes and returns where to write them, or NULL (overflow set). */
uint8_t *usl_wbuf_reserve(struct usl_wbuf *w, size_t n);
/* Overwrites a u16 already written at off (length fields). */
void usl_wbuf_patch_u16(struct usl_wbuf *w, size_t off, uint16_t v);

/* Unaligned big-endian access for fixed offsets. */
static inline uint16_t usl_get_be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t usl_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void usl_put_be16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void usl_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

#endif
