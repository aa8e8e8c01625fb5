/*
 * src/dp_state.h - the kernel data plane's state file: the kernel tunnel
 * ids this daemon owns, so that a start after a crash deletes exactly
 * those and nobody else's.
 *
 * One record per line, "<op><id> <crc32>\n" ('+' created, '-' deleted; the
 * CRC-32 in 8 hex digits covers "<op><id>").  A line is taken or ignored as
 * a whole: a torn last line (no newline) or a line joined to the next one
 * after a short write never yields an id.  Lines of the old format
 * ("<op><id>\n", no checksum) are read too, with the same whole-line
 * rule; see dps_parse().
 *
 * The writer never prints: it returns -errno and keeps the failure in
 * dps_writer.why for the caller to log (rate-limited).
 */
#ifndef L2TPD_DP_STATE_H
#define L2TPD_DP_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "+4294967295 ffffffff\n" and a NUL */
enum { DPS_LINE_MAX = 24 };

uint32_t dps_crc32(const void *data, size_t len);

/* Writes one record line (with its newline) into buf; returns its length. */
size_t dps_encode(char buf[DPS_LINE_MAX], char op, uint32_t id);

enum dps_line {
	DPS_RECORD,	/* checksummed record */
	DPS_LEGACY,	/* old format, no checksum, otherwise well-formed */
	DPS_BAD,	/* garbled, joined or wrong checksum: ignored */
};

/* Classifies one line given without its newline; *op, *id set unless DPS_BAD. */
enum dps_line dps_parse(const char *line, size_t len, char *op, uint32_t *id);

struct dps_load_stats {
	unsigned records, legacy;	/* lines taken */
	unsigned bad;			/* complete lines ignored */
	unsigned torn;			/* last line without newline, ignored */
};

typedef void dps_apply_fn(void *arg, char op, uint32_t id);

/*
 * Feeds every valid record of path to apply, in file order.  A missing file
 * is an empty one.  Returns 0 or -errno.
 */
int dps_load(const char *path, dps_apply_fn *apply, void *arg, struct dps_load_stats *st);

/*
 * The appending writer.  Records are buffered (dps_append) and written in
 * one write per flush.  When a write fails the file is "stale": it lacks
 * records, and until dps_rewrite() succeeds nothing more is appended, so a
 * torn line is never followed by another.
 */
struct dps_writer {
	int fd;			/* O_APPEND; -1 when closed */
	char path[4096];
	char buf[16384];
	size_t len;		/* buffered bytes */
	size_t lines;		/* records on file, for compaction */
	bool stale;
	uint64_t failures;	/* failed writes and rewrites */
	char why[160];		/* last failure: "write: No space left on device" */
};

void dps_init(struct dps_writer *w, const char *path);

/*
 * Opens (creates) the file for appending, as stale: what it holds is the
 * previous run's until the first dps_rewrite().  0 or -errno with w->why.
 */
int dps_open(struct dps_writer *w);

/* Buffers a record; flushes first when the buffer is full. */
void dps_append(struct dps_writer *w, char op, uint32_t id);

/*
 * Writes the buffered records; 0, or -errno with w->why set and the file
 * stale (the buffer is dropped: a rewrite from the live set replaces it).
 * Does nothing on a stale or closed file.
 */
int dps_flush(struct dps_writer *w);

/* True when the file should be rewritten from the live set of n ids. */
bool dps_want_rewrite(const struct dps_writer *w, size_t live);

/*
 * Replaces the file by the n live ids: atomically through "<path>.new" and
 * rename; when that fails on a stale file, in place (truncate, then write),
 * which needs no extra space and leaves at worst a prefix of the live ids:
 * a crash then leaks tunnels but never names one that is not ours.
 * Reopens w->fd.  Returns 0 (not stale any more) or -errno with w->why.
 */
int dps_rewrite(struct dps_writer *w, const uint32_t *ids, size_t n);

void dps_close(struct dps_writer *w);

#endif
