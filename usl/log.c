/*
 * usl/log.c - levelled logging to stderr or syslog, and a rate limiter.
 *
 * Messages are formatted once into a bounded buffer, then handed to the
 * test sink, stderr or syslog.  A message that does not fit is truncated:
 * logging must never fail or allocate.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

#define LOG_MSG_MAX	1024

static struct {
	char ident[32];
	enum log_level level;
	bool to_stderr;
	bool journal;		/* stderr is systemd's journal stream */
	void (*sink)(enum log_level lvl, const char *msg, void *arg);
	void *sink_arg;
	bool debug_forced;	/* log_debug_force(): debug lines pass whatever the level */
} log_state = { "usl", LOG_LVL_INFO, true, false, NULL, NULL, false };

static const char *const level_names[] = {
	[LOG_LVL_ERR] = "error",
	[LOG_LVL_WARN] = "warning",
	[LOG_LVL_INFO] = "info",
	[LOG_LVL_DEBUG] = "debug",
};

static const int level_prio[] = {
	[LOG_LVL_ERR] = LOG_ERR,
	[LOG_LVL_WARN] = LOG_WARNING,
	[LOG_LVL_INFO] = LOG_INFO,
	[LOG_LVL_DEBUG] = LOG_DEBUG,
};

/*
 * systemd connects stderr to the journal and says so in JOURNAL_STREAM
 * ("device:inode" of that stream, sd_journal_stream_fd(3)): when stderr is
 * still that stream, lines carry sd-daemon priority prefixes ("<4>") so
 * `journalctl -p warning` finds our warnings, and no identifier (the
 * journal adds its own).
 */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (js == NULL || sscanf(js, "%llu:%llu", &dev, &ino) != 2)
		return false;
	return fstat(STDERR_FILENO, &st) == 0 && (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

void log_init(const char *ident, enum log_level level, bool to_stderr)
{
	snprintf(log_state.ident, sizeof(log_state.ident), "%s", ident ? ident : "usl");
	log_state.level = level;
	log_state.to_stderr = to_stderr;
	log_state.journal = to_stderr && stderr_is_journal();
	if (!to_stderr)
		openlog(log_state.ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void log_set_level(enum log_level level)
{
	log_state.level = level;
}

bool log_debug_force(bool on)
{
	bool was = log_state.debug_forced;

	log_state.debug_forced = on;
	return was;
}

enum log_level log_get_level(void)
{
	return log_state.level;
}

void log_set_sink(void (*sink)(enum log_level lvl, const char *msg, void *arg), void *arg)
{
	log_state.sink = sink;
	log_state.sink_arg = arg;
}

/* Appends a and b at line + len (the buffer has room: both are short names). */
static size_t log_put(char *line, size_t len, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	memcpy(line + len, a, la);
	memcpy(line + len + la, b, lb);
	return len + la + lb;
}

/*
 * The whole line, prefix and newline included, in one write(2): not
 * fprintf() on the unbuffered stderr, which formats it a second time
 * through a temporary buffer.  A line is one write, so lines from several
 * processes sharing the stream never interleave.
 */
static void log_write_stderr(enum log_level lvl, const char *msg)
{
	char line[LOG_MSG_MAX + 64];
	size_t len = 0, mlen = strlen(msg);
	ssize_t n;

	if (log_state.journal)
		line[len++] = '<', line[len++] = (char)('0' + level_prio[lvl]), line[len++] = '>';
	else
		len = log_put(line, len, log_state.ident, ": ");
	len = log_put(line, len, level_names[lvl], ": ");
	if (mlen > sizeof(line) - len - 1)
		mlen = sizeof(line) - len - 1;
	memcpy(line + len, msg, mlen);
	len += mlen;
	line[len++] = '\n';
	do
		n = write(STDERR_FILENO, line, len);
	while (n < 0 && errno == EINTR);
}

static void log_emit(enum log_level lvl, const char *msg)
{
	if (log_state.sink)
		log_state.sink(lvl, msg, log_state.sink_arg);
	else if (log_state.to_stderr)
		log_write_stderr(lvl, msg);
	else
		syslog(level_prio[lvl], "%s", msg);
}

/*
 * Formats and emits one message.  errnum >= 0 appends its strerror; suffix,
 * when set, is appended after that.  errno is preserved for the caller.
 */
static void log_vemit(enum log_level lvl, int errnum, const char *suffix,
		      const char *fmt, va_list ap)
{
	char msg[LOG_MSG_MAX];
	int saved = errno;
	int n;

	if (lvl > log_state.level && !(lvl == LOG_LVL_DEBUG && log_state.debug_forced))
		return;
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(msg))
		n = sizeof(msg) - 1;
	if (errnum >= 0)
		n += snprintf(msg + n, sizeof(msg) - (size_t)n, ": %s", strerror(errnum));
	if (suffix && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - (size_t)n, "%s", suffix);
	log_emit(lvl, msg);
	errno = saved;
}

void log_warn(const char *fmt, ...)
{
	int errnum = errno;
	va_list ap;

	va_start(ap, fmt);
	log_vemit(LOG_LVL_WARN, errnum, NULL, fmt, ap);
	va_end(ap);
}

void log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit(LOG_LVL_WARN, -1, NULL, fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit(LOG_LVL_INFO, -1, NULL, fmt, ap);
	va_end(ap);
}

void log_at(enum log_level lvl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit(lvl, -1, NULL, fmt, ap);
	va_end(ap);
}

void log_debug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit(LOG_LVL_DEBUG, -1, NULL, fmt, ap);
	va_end(ap);
}

void fatal(const char *fmt, ...)
{
	int errnum = errno;
	va_list ap;

	va_start(ap, fmt);
	log_vemit(LOG_LVL_ERR, errnum, NULL, fmt, ap);
	va_end(ap);
	exit(1);
}

void fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit(LOG_LVL_ERR, -1, NULL, fmt, ap);
	va_end(ap);
	exit(1);
}

void fatalx_status(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit(LOG_LVL_ERR, -1, NULL, fmt, ap);
	va_end(ap);
	exit(status);
}

/*
 * Admits a message into the current window, opening a new window when the
 * interval has passed.  On admission *dropped gets the number suppressed
 * since the last admitted message, which the caller then reports.
 */
bool log_ratelimit_admit(struct log_ratelimit *rl, usl_time now, unsigned *dropped)
{
	if (rl->printed == 0 ||
	    usl_time_cmp(usl_time_sub(now, rl->window_start), rl->interval) >= 0) {
		rl->window_start = now;
		rl->printed = 0;
	}
	if (rl->printed >= rl->burst) {
		rl->suppressed++;
		return false;
	}
	rl->printed++;
	*dropped = rl->suppressed;
	rl->suppressed = 0;
	return true;
}

/* Limiters of log lines with suppressed messages not yet reported. */
static struct log_ratelimit *pending_head;

static void ratelimit_note(struct log_ratelimit *rl, const char *what)
{
	rl->what = what;
	if (!rl->pending) {
		rl->pending = true;
		rl->next_pending = pending_head;
		pending_head = rl;
	}
}

bool log_ratelimit_ok(struct log_ratelimit *rl, usl_time now)
{
	unsigned dropped;

	if (!log_ratelimit_admit(rl, now, &dropped)) {
		ratelimit_note(rl, NULL);
		return false;
	}
	if (dropped)
		log_warnx("%u messages suppressed by rate limit", dropped);
	return true;
}

static void log_vemit_rl(enum log_level level, struct log_ratelimit *rl, usl_time now, const char *fmt,
			 va_list ap)
{
	char suffix[64] = "";
	unsigned dropped;

	if (level > log_state.level)
		return;
	if (!log_ratelimit_admit(rl, now, &dropped)) {
		ratelimit_note(rl, fmt);
		return;
	}
	if (dropped)
		snprintf(suffix, sizeof(suffix), " (%u similar messages suppressed)", dropped);
	log_vemit(level, -1, suffix, fmt, ap);
}

void log_warnx_rl(struct log_ratelimit *rl, usl_time now, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit_rl(LOG_LVL_WARN, rl, now, fmt, ap);
	va_end(ap);
}

void log_info_rl(struct log_ratelimit *rl, usl_time now, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit_rl(LOG_LVL_INFO, rl, now, fmt, ap);
	va_end(ap);
}

/* The constant start of a format (up to its first conversion), for a report. */
static int fmt_prefix_len(const char *fmt)
{
	const char *pc = strchr(fmt, '%');

	return pc ? (int)(pc - fmt) : (int)strlen(fmt);
}

void log_ratelimit_flush(usl_time now)
{
	struct log_ratelimit **pp = &pending_head, *rl;

	while ((rl = *pp) != NULL) {
		bool closed = usl_time_cmp(usl_time_sub(now, rl->window_start), rl->interval) >= 0;

		if (rl->suppressed > 0 && !closed) {
			pp = &rl->next_pending;
			continue;
		}
		if (rl->suppressed > 0) {
			if (rl->what != NULL)
				log_warnx("%u similar messages suppressed by rate limit: \"%.*s...\"",
					  rl->suppressed, fmt_prefix_len(rl->what), rl->what);
			else
				log_warnx("%u messages suppressed by rate limit", rl->suppressed);
			rl->suppressed = 0;
		}
		rl->pending = false;
		*pp = rl->next_pending;
		rl->next_pending = NULL;
	}
}
