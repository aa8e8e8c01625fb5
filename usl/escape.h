/*
 * usl/escape.h - byte strings from the outside (a peer, a socket) made safe
 * to print on a terminal, write to a log, put in JSON or in an environment
 * variable.  The output is always printable ASCII plus well-formed UTF-8, so
 * it can neither drive a terminal nor make a JSON document unparseable, and
 * the input can be read back from it exactly.
 *
 * The rule, applied from the first byte to the last (NUL is just a byte):
 *   - '\' (0x5c) becomes "\\" (two backslashes);
 *   - printable ASCII 0x20-0x7e is kept;
 *   - a well-formed UTF-8 sequence of 2 to 4 bytes (RFC 3629: no overlong
 *     form, no surrogate U+D800-U+DFFF, nothing above U+10FFFF) is kept,
 *     except the C1 controls U+0080-U+009F and the bidirectional formatting
 *     characters (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069),
 *     whose bytes are escaped;
 *   - every other byte becomes "\xNN", two lowercase hex digits: C0 controls
 *     0x00-0x1f (NUL, ESC, newline...), DEL 0x7f, and each byte of an invalid,
 *     overlong or truncated sequence (the next byte is examined afresh).
 * So ESC is "\x1b", a newline "\x0a", "\xff\xfe" stays "\xff\xfe" in text.
 */
#ifndef USL_ESCAPE_H
#define USL_ESCAPE_H

#include <stddef.h>

/* Leave '\' as is: for text that was already escaped (the CLI's output). */
#define USL_ESCAPE_KEEP_BACKSLASH	0x1u

/*
 * Escapes inlen bytes of in into out, which it always NUL-terminates when
 * outlen > 0 (out may be NULL when outlen is 0).  When out is too small it
 * stops before the first escape or UTF-8 sequence that does not fit whole,
 * so a truncated result is still a valid prefix.  Returns the length the
 * whole result needs, without the NUL, like snprintf(): the output was
 * truncated when the return value is >= outlen.
 */
size_t usl_str_escape(char *out, size_t outlen, const void *in, size_t inlen);
size_t usl_str_escape_flags(char *out, size_t outlen, const void *in, size_t inlen,
			    unsigned flags);

/* The whole escaped string in malloc'd memory, or NULL (errno ENOMEM). */
char *usl_str_escape_dup(const void *in, size_t inlen);

#endif
