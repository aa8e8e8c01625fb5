/*
 * src/dp_state.c - the state file's record format and its writer
 * (dp_state.h): one self-checking record per line, appended in batches,
 * rewritten from the live set when it grows or when a write failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "dp_state.h"

/* Dead lines allowed beyond twice the live ones before compacting. */
#define DPS_SLACK 1024

/* CRC-32 (IEEE 802.3): zlib's. */
uint32_t dps_crc32(const void *data, size_t len)
{
	return (uint32_t)crc32(0L, data, (uInt)len);
}

size_t dps_encode(char buf[DPS_LINE_MAX], char op, uint32_t id)
{
	int n = snprintf(buf, DPS_LINE_MAX, "%c%" PRIu32, op, id);

	n += snprintf(buf + n, DPS_LINE_MAX - (size_t)n, " %08" PRIx32 "\n",
		      dps_crc32(buf, (size_t)n));
	return (size_t)n;
}

/* 1 to 10 digits, no leading zero, 1..UINT32_MAX: what PRIu32 writes for an id. */
static bool parse_id(const char *s, size_t len, uint32_t *id)
{
	uint64_t v = 0;

	if (len == 0 || len > 10 || s[0] == '0')
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > UINT32_MAX)
		return false;
	*id = (uint32_t)v;
	return true;
}

/* Exactly 8 lowercase hex digits, as dps_encode() writes them. */
static bool parse_crc(const char *s, size_t len, uint32_t *crc)
{
	uint32_t v = 0;

	if (len != 8)
		return false;
	for (size_t i = 0; i < len; i++) {
		int d = s[i] >= '0' && s[i] <= '9' ? s[i] - '0' :
			s[i] >= 'a' && s[i] <= 'f' ? s[i] - 'a' + 10 : -1;

		if (d < 0)
			return false;
		v = v << 4 | (uint32_t)d;
	}
	*crc = v;
	return true;
}

/*
 * The old format is accepted because it stays unambiguous under the
 * whole-line rule: every line begins with an op character, so a torn line
 * joined to the next one holds two of them (or a stray one) and is refused,
 * and a torn last line has no newline.
 */
enum dps_line dps_parse(const char *line, size_t len, char *op, uint32_t *id)
{
	const char *sp = memchr(line, ' ', len);
	size_t head = sp != NULL ? (size_t)(sp - line) : len;
	uint32_t crc;

	if (len < 2 || (line[0] != '+' && line[0] != '-') || !parse_id(line + 1, head - 1, id))
		return DPS_BAD;
	*op = line[0];
	if (sp == NULL)
		return DPS_LEGACY;
	if (!parse_crc(sp + 1, len - head - 1, &crc) || crc != dps_crc32(line, head))
		return DPS_BAD;
	return DPS_RECORD;
}

static void load_line(const char *line, size_t len, dps_apply_fn *apply, void *arg,
		      struct dps_load_stats *st)
{
	uint32_t id;
	char op;

	switch (dps_parse(line, len, &op, &id)) {
	case DPS_RECORD:
		st->records++;
		apply(arg, op, id);
		break;
	case DPS_LEGACY:
		st->legacy++;
		apply(arg, op, id);
		break;
	case DPS_BAD:
		st->bad++;
		break;
	}
}

int dps_load(const char *path, dps_apply_fn *apply, void *arg, struct dps_load_stats *st)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;

	memset(st, 0, sizeof(*st));
	if (f == NULL) {
		rc = errno == ENOENT ? 0 : -errno;
		if (fd >= 0)
			close(fd);
		return rc;
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] != '\n') {
			st->torn++;
			break;
		}
		load_line(line, (size_t)n - 1, apply, arg, st);
	}
	if (ferror(f))
		rc = -(errno != 0 ? errno : EIO);
	free(line);
	fclose(f);
	return rc;
}

void dps_init(struct dps_writer *w, const char *path)
{
	memset(w, 0, sizeof(*w));
	w->fd = -1;
	snprintf(w->path, sizeof(w->path), "%s", path);
}

static int fail(struct dps_writer *w, const char *what);

int dps_open(struct dps_writer *w)
{
	w->fd = open(w->path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (w->fd < 0)
		return fail(w, "open");
	w->stale = true;
	return 0;
}

/*
 * Writes all of p, or says why not with the real errno: a short write is
 * followed by another, which reports what stopped the first (ENOSPC).
 */
static int write_all(struct dps_writer *w, int fd, const char *what, const char *p, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = write(fd, p + done, len - done);
		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			snprintf(w->why, sizeof(w->why), "%s: short write, %zu of %zu bytes",
				 what, done, len);
			return -EIO;
		}
		snprintf(w->why, sizeof(w->why), "%s: %s (%zu of %zu bytes written)", what,
			 strerror(errno), done, len);
		return -errno;
	}
	return 0;
}

int dps_flush(struct dps_writer *w)
{
	int rc;

	if (w->fd < 0 || w->stale || w->len == 0) {
		w->len = 0;
		return 0;
	}
	rc = write_all(w, w->fd, "write", w->buf, w->len);
	w->len = 0;
	if (rc < 0) {
		w->stale = true;
		w->failures++;
	}
	return rc;
}

void dps_append(struct dps_writer *w, char op, uint32_t id)
{
	if (w->fd < 0 || w->stale)
		return;
	if (w->len + DPS_LINE_MAX > sizeof(w->buf))
		dps_flush(w);
	if (w->stale)
		return;
	w->len += dps_encode(w->buf + w->len, op, id);
	w->lines++;
}

bool dps_want_rewrite(const struct dps_writer *w, size_t live)
{
	return w->stale || w->lines > 2 * live + DPS_SLACK;
}

static int fail(struct dps_writer *w, const char *what)
{
	int err = errno;

	snprintf(w->why, sizeof(w->why), "%s: %s", what, strerror(err));
	return -err;
}

static char *render(const uint32_t *ids, size_t n, size_t *len)
{
	char *text = malloc(n * DPS_LINE_MAX + 1);

	*len = 0;
	for (size_t i = 0; text != NULL && i < n; i++)
		*len += dps_encode(text + *len, '+', ids[i]);
	return text;
}

/* Points w->fd at the (new) file at w->path. */
static int reopen(struct dps_writer *w)
{
	int fd = open(w->path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		int rc = fail(w, "reopen");

		/* the old fd names the replaced file: appending there is lost */
		if (w->fd >= 0)
			close(w->fd);
		w->fd = -1;
		return rc;
	}
	if (w->fd >= 0)
		close(w->fd);
	w->fd = fd;
	return 0;
}

static int rewrite_renamed(struct dps_writer *w, const char *text, size_t len)
{
	char tmp[sizeof(w->path) + 8];
	int fd, rc;

	snprintf(tmp, sizeof(tmp), "%s.new", w->path);
	/* never through a link planted in the state directory */
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return fail(w, "create temporary file");
	rc = write_all(w, fd, "write temporary file", text, len);
	if (close(fd) < 0 && rc == 0)
		rc = fail(w, "close temporary file");
	if (rc == 0 && rename(tmp, w->path) < 0)
		rc = fail(w, "rename");
	if (rc < 0) {
		unlink(tmp);
		return rc;
	}
	return reopen(w);
}

static int rewrite_in_place(struct dps_writer *w, const char *text, size_t len)
{
	if (ftruncate(w->fd, 0) < 0)
		return fail(w, "truncate");
	return write_all(w, w->fd, "rewrite in place", text, len);
}

int dps_rewrite(struct dps_writer *w, const uint32_t *ids, size_t n)
{
	size_t len;
	char *text = render(ids, n, &len);
	int rc;

	if (text == NULL) {
		rc = fail(w, "rewrite");
	} else {
		rc = rewrite_renamed(w, text, len);
		if (rc < 0 && w->stale && w->fd >= 0)
			rc = rewrite_in_place(w, text, len);
	}
	free(text);
	if (rc < 0) {
		w->failures++;
		if (w->fd < 0)
			w->stale = true;
		return rc;
	}
	w->stale = false;
	w->len = 0;	/* the live set includes whatever was buffered */
	w->lines = n;
	return 0;
}

void dps_close(struct dps_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}
