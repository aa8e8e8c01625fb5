/*
 * usl/log.h - levelled logging to stderr or syslog, with a rate limiter
 * for per-packet messages (so a flood of bad packets cannot flood the log).
 */
#ifndef USL_LOG_H
#define USL_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include "time.h"

enum log_level { LOG_LVL_ERR, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

/* to_stderr: true for foreground/systemd-journal, false for syslog. */
void log_init(const char *ident, enum log_level level, bool to_stderr);
void log_set_level(enum log_level level);
enum log_level log_get_level(void);
/*
 * Debug lines pass whatever the level while on (one object's debugging:
 * the caller turns it on around that object's work and restores what it
 * returns).  Returns the previous setting.
 */
bool log_debug_force(bool on);

#define USL_PRINTF(a, b) __attribute__((format(printf, a, b)))
void log_warn(const char *fmt, ...) USL_PRINTF(1, 2);	/* appends ": strerror(errno)" */
void log_warnx(const char *fmt, ...) USL_PRINTF(1, 2);
void log_info(const char *fmt, ...) USL_PRINTF(1, 2);
void log_debug(const char *fmt, ...) USL_PRINTF(1, 2);
/* At a level the caller decides (an outage is a warning, the same line planned is info). */
void log_at(enum log_level lvl, const char *fmt, ...) USL_PRINTF(2, 3);
void fatal(const char *fmt, ...) USL_PRINTF(1, 2) __attribute__((noreturn));
void fatalx(const char *fmt, ...) USL_PRINTF(1, 2) __attribute__((noreturn));
/*
 * fatalx with the exit status chosen by the caller: a service manager can
 * then tell a failure that a restart will not cure (a bad configuration, a
 * missing kernel feature) from one that may pass.
 */
void fatalx_status(int status, const char *fmt, ...) USL_PRINTF(2, 3) __attribute__((noreturn));

/*
 * Rate limiter: at most burst messages per interval; the first message after
 * a suppressed stretch says how many were dropped.
 */
struct log_ratelimit {
	usl_time interval;
	unsigned burst;
	usl_time window_start;
	unsigned printed;
	unsigned suppressed;
	/* log_ratelimit_flush(): what was suppressed, and the pending list */
	const char *what;
	struct log_ratelimit *next_pending;
	bool pending;
};
#define LOG_RATELIMIT_INIT(interval_s, burst_n) \
	{ { (int64_t)(interval_s) * 1000000000 }, (burst_n), { 0 }, 0, 0, NULL, NULL, false }

/*
 * The limiter alone, for anything that must not happen more than burst
 * times per interval: true when admitted (*dropped: how many were refused
 * since the last admission), false when refused (counted).
 */
bool log_ratelimit_admit(struct log_ratelimit *rl, usl_time now, unsigned *dropped);

/* Returns true when a message may be printed now; it reports suppressed counts. */
bool log_ratelimit_ok(struct log_ratelimit *rl, usl_time now);
void log_warnx_rl(struct log_ratelimit *rl, usl_time now, const char *fmt, ...) USL_PRINTF(3, 4);
void log_info_rl(struct log_ratelimit *rl, usl_time now, const char *fmt, ...) USL_PRINTF(3, 4);

/*
 * Reports every log limiter (log_ratelimit_ok, log_warnx_rl) that suppressed
 * messages and has had no admitted message since its window closed: one
 * line per kind saying how many, so a flood that stops is still accounted
 * for.  Call it periodically (the daemon: every few seconds).
 */
void log_ratelimit_flush(usl_time now);

/* Captures log lines in memory instead of printing (unit tests); NULL to stop. */
void log_set_sink(void (*sink)(enum log_level lvl, const char *msg, void *arg), void *arg);

#endif
