/* tests/unit/check_log.c - usl/log: sink, levels, errno, rate limiter. */
#include <check.h>
#include <sys/stat.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "usl/log.h"

enum { MAX_LINES = 64 };

static struct {
	int n;
	enum log_level lvl[MAX_LINES];
	char msg[MAX_LINES][256];
} cap;

static void sink(enum log_level lvl, const char *msg, void *arg)
{
	ck_assert_ptr_eq(arg, &cap);
	ck_assert_int_lt(cap.n, MAX_LINES);
	cap.lvl[cap.n] = lvl;
	snprintf(cap.msg[cap.n], sizeof(cap.msg[0]), "%s", msg);
	cap.n++;
}

static void setup(void)
{
	memset(&cap, 0, sizeof(cap));
	log_init("check_log", LOG_LVL_DEBUG, true);
	log_set_sink(sink, &cap);
}

static void teardown(void)
{
	log_set_sink(NULL, NULL);
}

START_TEST(test_sink_captures)
{
	log_info("tunnel %u up", 42u);
	log_warnx("bad packet from %s", "192.0.2.1");
	log_debug("detail %d", 7);
	ck_assert_int_eq(cap.n, 3);
	ck_assert_str_eq(cap.msg[0], "tunnel 42 up");
	ck_assert_int_eq(cap.lvl[0], LOG_LVL_INFO);
	ck_assert_str_eq(cap.msg[1], "bad packet from 192.0.2.1");
	ck_assert_int_eq(cap.lvl[1], LOG_LVL_WARN);
	ck_assert_int_eq(cap.lvl[2], LOG_LVL_DEBUG);
}
END_TEST

START_TEST(test_levels)
{
	log_set_level(LOG_LVL_WARN);
	ck_assert_int_eq(log_get_level(), LOG_LVL_WARN);
	log_debug("hidden");
	log_info("hidden");
	log_warnx("shown");
	ck_assert_int_eq(cap.n, 1);
	ck_assert_str_eq(cap.msg[0], "shown");
	log_set_level(LOG_LVL_ERR);
	log_warnx("hidden");
	ck_assert_int_eq(cap.n, 1);
	log_set_level(LOG_LVL_DEBUG);
	log_debug("shown too");
	ck_assert_int_eq(cap.n, 2);
}
END_TEST

START_TEST(test_warn_errno)
{
	errno = ENOENT;
	log_warn("open %s", "/nonexistent");
	ck_assert_int_eq(errno, ENOENT);	/* preserved for the caller */
	ck_assert_int_eq(cap.n, 1);
	ck_assert_str_eq(cap.msg[0], "open /nonexistent: No such file or directory");
	errno = EINVAL;
	log_warnx("no errno here");
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_str_eq(cap.msg[1], "no errno here");
}
END_TEST

START_TEST(test_long_message_truncated)
{
	char big[4000];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	errno = EIO;
	log_warn("%s", big);	/* must not overrun: truncated in the sink */
	ck_assert_int_eq(cap.n, 1);
	ck_assert_uint_eq(strlen(cap.msg[0]), sizeof(cap.msg[0]) - 1);
}
END_TEST

START_TEST(test_ratelimit)
{
	/* static: a limiter that suppressed stays listed for log_ratelimit_flush() */
	static struct log_ratelimit rl = LOG_RATELIMIT_INIT(10, 3);
	usl_time t0 = usl_time_s(100);
	int i, ok = 0;

	/* A burst of 3 passes, the rest of the window is suppressed. */
	for (i = 0; i < 10; i++)
		ok += log_ratelimit_ok(&rl, usl_time_add(t0, usl_time_ms(i)));
	ck_assert_int_eq(ok, 3);
	ck_assert_uint_eq(rl.suppressed, 7);
	ck_assert_int_eq(cap.n, 0);
	/* Still inside the window. */
	ck_assert(!log_ratelimit_ok(&rl, usl_time_add(t0, usl_time_s(9))));
	/* Next window: allowed, and the suppressed count is reported once. */
	ck_assert(log_ratelimit_ok(&rl, usl_time_add(t0, usl_time_s(10))));
	ck_assert_int_eq(cap.n, 1);
	ck_assert_str_eq(cap.msg[0], "8 messages suppressed by rate limit");
	ck_assert_uint_eq(rl.suppressed, 0);
	ck_assert(log_ratelimit_ok(&rl, usl_time_add(t0, usl_time_s(10))));
	ck_assert_int_eq(cap.n, 1);
}
END_TEST

START_TEST(test_warnx_rl)
{
	static struct log_ratelimit rl = LOG_RATELIMIT_INIT(1, 2);
	usl_time t = usl_time_s(5);
	int i;

	for (i = 0; i < 50; i++)
		log_warnx_rl(&rl, t, "bad packet %d", i);
	ck_assert_int_eq(cap.n, 2);
	ck_assert_str_eq(cap.msg[0], "bad packet 0");
	ck_assert_str_eq(cap.msg[1], "bad packet 1");
	t = usl_time_add(t, usl_time_s(1));
	log_warnx_rl(&rl, t, "bad packet %d", 50);
	ck_assert_int_eq(cap.n, 3);
	ck_assert_str_eq(cap.msg[2], "bad packet 50 (48 similar messages suppressed)");
	ck_assert_int_eq(cap.lvl[2], LOG_LVL_WARN);
	log_warnx_rl(&rl, t, "bad packet %d", 51);
	ck_assert_str_eq(cap.msg[3], "bad packet 51");
	/* Filtered out by level: neither printed nor counted. */
	log_set_level(LOG_LVL_ERR);
	log_warnx_rl(&rl, t, "hidden");
	ck_assert_int_eq(cap.n, 4);
	ck_assert_uint_eq(rl.suppressed, 0);
}
END_TEST

/* A flood that stops is still accounted for: one line per kind, once. */
START_TEST(test_ratelimit_flush)
{
	static struct log_ratelimit rl = LOG_RATELIMIT_INIT(1, 2);
	usl_time t = usl_time_s(100);
	int i;

	log_set_level(LOG_LVL_DEBUG);
	for (i = 0; i < 10; i++)
		log_warnx_rl(&rl, t, "dropped message from %s", "x");
	ck_assert_int_eq(cap.n, 2);
	log_ratelimit_flush(usl_time_add(t, usl_time_ms(500)));	/* window still open */
	ck_assert_int_eq(cap.n, 2);
	log_ratelimit_flush(usl_time_add(t, usl_time_s(1)));
	ck_assert_int_eq(cap.n, 3);
	ck_assert_str_eq(cap.msg[2],
			 "8 similar messages suppressed by rate limit: \"dropped message from ...\"");
	log_ratelimit_flush(usl_time_add(t, usl_time_s(5)));	/* reported once */
	ck_assert_int_eq(cap.n, 3);
	/* the next admitted message does not count them again */
	log_warnx_rl(&rl, usl_time_add(t, usl_time_s(6)), "dropped message from %s", "y");
	ck_assert_str_eq(cap.msg[3], "dropped message from y");
}
END_TEST

/*
 * Runs fn in a child whose stderr is a pipe (so stderr and fatalx's
 * exit(1) do not touch the test runner), and returns what it wrote.
 */
static int run_child(void (*fn)(void), char *out, size_t outlen)
{
	int pfd[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	ck_assert_int_eq(pipe(pfd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(pfd[1], STDERR_FILENO);
		log_set_sink(NULL, NULL);
		fn();
		_exit(0);
	}
	close(pfd[1]);
	/* Each line is its own write(); read until the child is gone. */
	while ((n = read(pfd[0], out + len, outlen - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(pfd[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void child_plain(void)
{
	log_init("l2tpv3d", LOG_LVL_INFO, true);
	log_info("started");
	fatalx("giving up on %s", "everything");
}

START_TEST(test_stderr_format)
{
	char out[256];

	ck_assert_int_eq(run_child(child_plain, out, sizeof(out)), 1);
	ck_assert_str_eq(out, "l2tpv3d: info: started\nl2tpv3d: error: giving up on everything\n");
}
END_TEST

/* stderr is the journal stream that JOURNAL_STREAM names */
static void child_journal(void)
{
	struct stat st;
	char js[64];

	fstat(STDERR_FILENO, &st);
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", js, 1);
	log_init("l2tpv3d", LOG_LVL_DEBUG, true);
	log_debug("tick");
	log_info("started");
	log_warnx("peer %s refused", "x");
	fatalx("giving up on %s", "everything");
}

/* stderr is the journal (JOURNAL_STREAM names it): priorities, no identifier. */
START_TEST(test_journal_format)
{
	char out[256];

	ck_assert_int_eq(run_child(child_journal, out, sizeof(out)), 1);
	ck_assert_str_eq(out, "<7>debug: tick\n<6>info: started\n<4>warning: peer x refused\n"
			 "<3>error: giving up on everything\n");
}
END_TEST

static void child_elsewhere(void)
{
	setenv("JOURNAL_STREAM", "1:1", 1);
	log_init("l2tpv3d", LOG_LVL_INFO, true);
	fatalx("bye");
}

/* A JOURNAL_STREAM inherited by something whose stderr went elsewhere: plain text. */
START_TEST(test_journal_stream_elsewhere)
{
	char out[256];

	ck_assert_int_eq(run_child(child_elsewhere, out, sizeof(out)), 1);
	ck_assert_str_eq(out, "l2tpv3d: error: bye\n");
}
END_TEST

static void child_status(void)
{
	log_init("l2tpv3d", LOG_LVL_INFO, true);
	fatalx_status(78, "bad %s", "file");
}

/* The caller's exit status, the same error line as fatalx. */
START_TEST(test_fatalx_status)
{
	char out[256];

	ck_assert_int_eq(run_child(child_status, out, sizeof(out)), 78);
	ck_assert_str_eq(out, "l2tpv3d: error: bad file\n");
}
END_TEST

static Suite *log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sink_captures);
	tcase_add_test(tc, test_levels);
	tcase_add_test(tc, test_warn_errno);
	tcase_add_test(tc, test_long_message_truncated);
	tcase_add_test(tc, test_ratelimit);
	tcase_add_test(tc, test_warnx_rl);
	tcase_add_test(tc, test_ratelimit_flush);
	tcase_add_test(tc, test_stderr_format);
	tcase_add_test(tc, test_journal_format);
	tcase_add_test(tc, test_journal_stream_elsewhere);
	tcase_add_test(tc, test_fatalx_status);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(log_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
