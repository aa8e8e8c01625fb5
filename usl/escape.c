/*
 * usl/escape.c - peer byte strings as printable, valid UTF-8 text (the rule
 * is in escape.h).  Each input unit - one byte, or one whole UTF-8 sequence -
 * becomes one output unit, and a unit is written whole or not at all.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

/*
 * Length of the well-formed UTF-8 sequence at p (at most n bytes), or 0 when
 * the lead byte starts none.  The second byte's range is what excludes
 * overlongs (E0, F0), surrogates (ED) and code points above U+10FFFF (F4);
 * C0, C1 and F5-FF never lead.  Table 3-7 of the Unicode standard.
 */
static size_t utf8_len(const uint8_t *p, size_t n)
{
	uint8_t lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return len;
}

/*
 * The bidirectional formatting characters, which reorder what a terminal or
 * an editor shows (a peer's string could make a log line read otherwise):
 * U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069.
 */
static bool bidi_control(const uint8_t *p, size_t len)
{
	if (len == 2)
		return p[0] == 0xd8 && p[1] == 0x9c;
	if (len != 3 || p[0] != 0xe2)
		return false;
	return (p[1] == 0x80 && (p[2] == 0x8e || p[2] == 0x8f || (p[2] >= 0xaa && p[2] <= 0xae))) ||
	       (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9);
}

size_t usl_str_escape_flags(char *out, size_t outlen, const void *in, size_t inlen,
			    unsigned flags)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *p = in;
	size_t need = 0, used = 0, i = 0;
	bool full = outlen == 0;

	while (i < inlen) {
		char unit[8];
		size_t n = 0, len = utf8_len(p + i, inlen - i);

		if ((len == 2 && p[i] == 0xc2 && p[i + 1] <= 0x9f) || (len > 0 && bidi_control(p + i, len)))
			len = 0;		/* C1 or bidi control: byte by byte below */
		if (len > 0) {
			memcpy(unit, p + i, len);
			n = len;
			i += len;
		} else if (p[i] == '\\' && !(flags & USL_ESCAPE_KEEP_BACKSLASH)) {
			unit[n++] = '\\';
			unit[n++] = '\\';
			i++;
		} else if (p[i] >= 0x20 && p[i] <= 0x7e) {
			unit[n++] = (char)p[i++];
		} else {
			unit[n++] = '\\';
			unit[n++] = 'x';
			unit[n++] = hex[p[i] >> 4];
			unit[n++] = hex[p[i] & 0xf];
			i++;
		}
		need += n;
		/* once a unit did not fit, later (shorter) ones must not either */
		if (!full && used + n < outlen) {
			memcpy(out + used, unit, n);
			used += n;
		} else {
			full = true;
		}
	}
	if (outlen > 0)
		out[used] = '\0';
	return need;
}

size_t usl_str_escape(char *out, size_t outlen, const void *in, size_t inlen)
{
	return usl_str_escape_flags(out, outlen, in, inlen, 0);
}

char *usl_str_escape_dup(const void *in, size_t inlen)
{
	size_t need = usl_str_escape(NULL, 0, in, inlen);
	char *out = malloc(need + 1);

	if (out == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	usl_str_escape(out, need + 1, in, inlen);
	return out;
}
