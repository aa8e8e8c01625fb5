/*
 * usl/pack.h - a growable writer and a sticky-error reader for serialised
 * state (the daemon's restart handover), little-endian.
 *
 * The writer grows as needed; a failed allocation sets `failed` and every
 * later call does nothing, so a long field list is checked once at the end.
 * The reader is bounded the same way: once a read runs past the end (or a
 * string is malformed) `bad` is set and every later read yields 0/NULL, so
 * a decoder reads a whole record and checks `bad` once before using it.
 */
#ifndef USL_PACK_H
#define USL_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct usl_pack {
	uint8_t *p;
	size_t len, cap;
	bool failed;
};

void usl_pack_init(struct usl_pack *w);
void usl_pack_free(struct usl_pack *w);
void usl_pack_u8(struct usl_pack *w, uint8_t v);
void usl_pack_u16(struct usl_pack *w, uint16_t v);
void usl_pack_u32(struct usl_pack *w, uint32_t v);
void usl_pack_u64(struct usl_pack *w, uint64_t v);
void usl_pack_bytes(struct usl_pack *w, const void *src, size_t n);
/* A u32 length and the bytes. */
void usl_pack_blob(struct usl_pack *w, const void *src, size_t n);
/* A string, NULL included (length 0xffffffff). */
void usl_pack_str(struct usl_pack *w, const char *s);
/* Reserves n bytes, returns their offset (to patch later), or 0 with failed set. */
size_t usl_pack_reserve(struct usl_pack *w, size_t n);
void usl_pack_patch_u32(struct usl_pack *w, size_t off, uint32_t v);

struct usl_unpack {
	const uint8_t *p;
	size_t len, off;
	bool bad;
	/*
	 * The format version of what is read, for nested readers of a format
	 * that grew: 0 (what usl_unpack_init sets) means the current one.
	 */
	uint32_t version;
};

void usl_unpack_init(struct usl_unpack *r, const void *p, size_t len);
static inline size_t usl_unpack_left(const struct usl_unpack *r) { return r->len - r->off; }
uint8_t usl_unpack_u8(struct usl_unpack *r);
uint16_t usl_unpack_u16(struct usl_unpack *r);
uint32_t usl_unpack_u32(struct usl_unpack *r);
uint64_t usl_unpack_u64(struct usl_unpack *r);
bool usl_unpack_bool(struct usl_unpack *r);	/* 0 or 1, anything else is bad */
void usl_unpack_bytes(struct usl_unpack *r, void *out, size_t n);
/* A blob written by usl_pack_blob: points into the input, *n its length; NULL when bad. */
const uint8_t *usl_unpack_blob(struct usl_unpack *r, size_t *n);
/*
 * A string written by usl_pack_str, copied (malloc) and NUL-terminated, at
 * most max bytes and without a NUL inside; NULL for a NULL string (*was_null
 * set when given) and when bad (out of memory counts as bad).
 */
char *usl_unpack_str(struct usl_unpack *r, size_t max, bool *was_null);
/* The same into a fixed buffer of cap bytes (NUL included); false when bad or too long. */
bool usl_unpack_str_to(struct usl_unpack *r, char *out, size_t cap);

#endif
