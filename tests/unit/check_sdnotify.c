/*
 * tests/unit/check_sdnotify.c - systemd's protocols as src/sdnotify.c speaks
 * them, without systemd.
 *
 * The store: a bound AF_UNIX datagram socket in a temp dir stands for
 * $NOTIFY_SOCKET and receives what systemd would: the text of each
 * datagram, and descriptors that must be the very files sent (same device
 * and inode), in order, at most SCM_MAX_FD a datagram.
 *
 * Passed descriptors: each case runs in a child of its own (the parsing is
 * done once per process) whose descriptors 3.. are memfds of sizes 1, 2,
 * 3..., so a descriptor's size says which one it is; the child reports the
 * first failed check through a pipe above that range.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sdnotify.h"

enum { MAX_RECV_FDS = 300 };

static char dir[64];
static char sockpath[128];
static int receiver = -1;

/* ---- the fake service manager ------------------------------------------- */

static int bind_receiver(const struct sockaddr_un *sun, socklen_t len)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (const struct sockaddr *)sun, len), 0);
	return fd;
}

static void store_setup(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	snprintf(dir, sizeof(dir), "/tmp/check_sdnotify.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sockpath, sizeof(sockpath), "%s/notify", dir);
	ck_assert_uint_lt(strlen(sockpath), sizeof(sun.sun_path));
	memcpy(sun.sun_path, sockpath, strlen(sockpath) + 1);
	receiver = bind_receiver(&sun, sizeof(sun));
	ck_assert_int_eq(setenv("NOTIFY_SOCKET", sockpath, 1), 0);
}

static void store_teardown(void)
{
	close(receiver);
	receiver = -1;
	unlink(sockpath);
	rmdir(dir);
	unsetenv("NOTIFY_SOCKET");
}

/*
 * One datagram: its text (NUL-terminated) and descriptors.  -1 with errno
 * EAGAIN when none is queued.  A truncated text or control part fails.
 */
static ssize_t receive(char *text, size_t len, int *fds, unsigned *nfds)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * MAX_RECV_FDS)];
	} control;
	struct iovec iov = { .iov_base = text, .iov_len = len - 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control.buf, .msg_controllen = sizeof(control.buf),
	};
	struct cmsghdr *cm;
	ssize_t n;

	*nfds = 0;
	n = recvmsg(receiver, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -1;
	ck_assert_int_eq(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC), 0);
	text[n] = '\0';
	for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm)) {
		ck_assert_int_eq(cm->cmsg_level, SOL_SOCKET);
		ck_assert_int_eq(cm->cmsg_type, SCM_RIGHTS);
		*nfds = (unsigned)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		memcpy(fds, CMSG_DATA(cm), *nfds * sizeof(int));
	}
	return n;
}

static void assert_nothing_queued(void)
{
	char text[64];
	unsigned n;
	int fds[MAX_RECV_FDS];

	ck_assert_int_eq(receive(text, sizeof(text), fds, &n), -1);
	ck_assert_int_eq(errno, EAGAIN);
}

static void assert_same_file(int a, int b)
{
	struct stat sa, sb;

	ck_assert_int_eq(fstat(a, &sa), 0);
	ck_assert_int_eq(fstat(b, &sb), 0);
	ck_assert_uint_eq(sa.st_dev, sb.st_dev);
	ck_assert_uint_eq(sa.st_ino, sb.st_ino);
}

static int new_memfd(off_t size)
{
	int fd = memfd_create("check_sdnotify", MFD_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, size), 0);
	return fd;
}

/* ---- the store ---------------------------------------------------------- */

START_TEST(test_put_splits_in_datagrams)
{
	enum { N = 600 };
	static const unsigned expect[] = { 253, 253, 94 };
	int sent[N], got[MAX_RECV_FDS];
	unsigned k = 0, n;
	char text[512], err[256];

	for (unsigned i = 0; i < N; i++)
		sent[i] = new_memfd(0);
	ck_assert_int_eq(sd_fdstore_put("l2tpv3d-bundle", sent, N, err, sizeof(err)), 0);
	for (unsigned d = 0; d < 3; d++) {
		ck_assert_int_gt(receive(text, sizeof(text), got, &n), 0);
		ck_assert_str_eq(text, "FDSTORE=1\nFDNAME=l2tpv3d-bundle\nFDPOLL=0");
		ck_assert_uint_eq(n, expect[d]);
		for (unsigned i = 0; i < n; i++, k++) {
			assert_same_file(got[i], sent[k]);
			close(got[i]);
		}
	}
	ck_assert_uint_eq(k, N);
	assert_nothing_queued();
	for (unsigned i = 0; i < N; i++)
		close(sent[i]);
}
END_TEST

/* A '@' in $NOTIFY_SOCKET: the abstract namespace, as systemd in containers uses. */
START_TEST(test_put_abstract_socket)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = new_memfd(7), got[MAX_RECV_FDS], abstract;
	char name[64], text[512], err[256];
	unsigned n;

	snprintf(name, sizeof(name), "@check_sdnotify.%d.%ld", (int)getpid(), (long)time(NULL));
	memcpy(sun.sun_path + 1, name + 1, strlen(name) - 1);
	abstract = bind_receiver(&sun, (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
						   strlen(name)));
	close(receiver);
	receiver = abstract;
	ck_assert_int_eq(setenv("NOTIFY_SOCKET", name, 1), 0);
	ck_assert_int_eq(sd_fdstore_put("l2tpv3d-state", &fd, 1, err, sizeof(err)), 0);
	ck_assert_int_gt(receive(text, sizeof(text), got, &n), 0);
	ck_assert_str_eq(text, "FDSTORE=1\nFDNAME=l2tpv3d-state\nFDPOLL=0");
	ck_assert_uint_eq(n, 1);
	assert_same_file(got[0], fd);
	close(got[0]);
	close(fd);
}
END_TEST

/* Names systemd refuses are refused here, before anything is sent. */
START_TEST(test_put_bad_names)
{
	static const char *const bad[] = {
		"", "a:b", "a\nb", "tab\there", "del\x7f", "\xc3\xa9t\xc3\xa9", ":",
	};
	char longest[257], err[256];
	int fd = new_memfd(0);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ck_assert_int_eq(sd_fdstore_put(bad[i], &fd, 1, err, sizeof(err)), -EINVAL);
		ck_assert_msg(strstr(err, "name") != NULL, "case %zu: err '%s'", i, err);
		ck_assert_int_eq(sd_fdstore_remove(bad[i], err, sizeof(err)), -EINVAL);
	}
	ck_assert_int_eq(sd_fdstore_put(NULL, &fd, 1, err, sizeof(err)), -EINVAL);
	memset(longest, 'a', 256);
	longest[256] = '\0';
	ck_assert_int_eq(sd_fdstore_put(longest, &fd, 1, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(sd_fdstore_put("x", &fd, 0, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(sd_fdstore_put("x", NULL, 1, err, sizeof(err)), -EINVAL);
	assert_nothing_queued();
	close(fd);
}
END_TEST

/* The longest name and one with blanks are systemd's to accept. */
START_TEST(test_put_edge_names)
{
	char longest[256], text[512], expect[512], err[256];
	int fd = new_memfd(0), got[MAX_RECV_FDS];
	unsigned n;

	memset(longest, 'z', 255);
	longest[255] = '\0';
	ck_assert_int_eq(sd_fdstore_put(longest, &fd, 1, err, sizeof(err)), 0);
	ck_assert_int_gt(receive(text, sizeof(text), got, &n), 0);
	snprintf(expect, sizeof(expect), "FDSTORE=1\nFDNAME=%s\nFDPOLL=0", longest);
	ck_assert_str_eq(text, expect);
	close(got[0]);
	ck_assert_int_eq(sd_fdstore_put("a b~!", &fd, 1, err, sizeof(err)), 0);
	ck_assert_int_gt(receive(text, sizeof(text), got, &n), 0);
	ck_assert_str_eq(text, "FDSTORE=1\nFDNAME=a b~!\nFDPOLL=0");
	close(got[0]);
	close(fd);
}
END_TEST

START_TEST(test_remove)
{
	char text[512], err[256];
	int got[MAX_RECV_FDS];
	unsigned n;

	ck_assert_int_eq(sd_fdstore_remove("l2tpv3d-bundle", err, sizeof(err)), 0);
	ck_assert_int_gt(receive(text, sizeof(text), got, &n), 0);
	ck_assert_str_eq(text, "FDSTOREREMOVE=1\nFDNAME=l2tpv3d-bundle");
	ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(test_not_under_systemd)
{
	char err[256] = "";
	int fd = new_memfd(0);

	unsetenv("NOTIFY_SOCKET");
	ck_assert_int_eq(sd_fdstore_put("l2tpv3d-state", &fd, 1, err, sizeof(err)), -ENOTSUP);
	ck_assert_ptr_nonnull(strstr(err, "not under systemd"));
	setenv("NOTIFY_SOCKET", "", 1);
	ck_assert_int_eq(sd_fdstore_remove("l2tpv3d-state", err, sizeof(err)), -ENOTSUP);
	close(fd);
}
END_TEST

/* A socket nobody listens on: the errno, and the path in the reason. */
START_TEST(test_manager_gone)
{
	char err[256] = "";
	int fd = new_memfd(0);

	unlink(sockpath);
	ck_assert_int_eq(sd_fdstore_put("l2tpv3d-state", &fd, 1, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, sockpath) != NULL, "err '%s'", err);
	close(fd);
}
END_TEST

/* ---- passed descriptors ------------------------------------------------- */

/* What a child's environment and descriptors 3.. look like. */
struct passing {
	const char *pid;	/* NULL: the child's own; "parent": another process's */
	const char *fds;	/* $LISTEN_FDS, NULL: unset */
	const char *names;	/* $LISTEN_FDNAMES, NULL: unset */
	unsigned files;		/* memfds at 3.., then a sentinel not passed */
};

static int report_fd = -1;

#define CHILD_CHECK(cond) do { if (!(cond)) child_fail(__LINE__, #cond); } while (0)

static void child_fail(int line, const char *what)
{
	dprintf(report_fd, "line %d: %s", line, what);
	_exit(1);
}

static off_t fd_size(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? st.st_size : -1;
}

static bool fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/* memfd i (size i + 1) at 3 + i, and /dev/null right after them. */
static void child_setup(const struct passing *p)
{
	char pid[32];
	int high;

	for (unsigned i = 0; i <= p->files; i++) {
		high = i < p->files ? memfd_create("passed", 0) : open("/dev/null", O_RDONLY);
		CHILD_CHECK(high >= 0);
		CHILD_CHECK(i == p->files || ftruncate(high, i + 1) == 0);
		CHILD_CHECK(dup2(high, 3 + (int)i) == 3 + (int)i);
		if (high != 3 + (int)i)
			close(high);
	}
	if (p->pid == NULL)
		snprintf(pid, sizeof(pid), "%d", (int)getpid());
	else if (strcmp(p->pid, "parent") == 0)
		snprintf(pid, sizeof(pid), "%d", (int)getppid());
	else
		snprintf(pid, sizeof(pid), "%s", p->pid);
	setenv("LISTEN_PID", pid, 1);
	if (p->fds)
		setenv("LISTEN_FDS", p->fds, 1);
	if (p->names)
		setenv("LISTEN_FDNAMES", p->names, 1);
}

static void run_child(const struct passing *p, void (*body)(const struct passing *p))
{
	char msg[256];
	int pipefd[2], status;
	ssize_t n;
	pid_t pid;

	ck_assert_int_eq(pipe(pipefd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* Above whatever the case passes, and never passed itself. */
		report_fd = fcntl(pipefd[1], F_DUPFD_CLOEXEC, 900);
		close(pipefd[0]);
		close(pipefd[1]);
		child_setup(p);
		body(p);
		_exit(0);
	}
	close(pipefd[1]);
	n = read(pipefd[0], msg, sizeof(msg) - 1);
	msg[n > 0 ? n : 0] = '\0';
	close(pipefd[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "child (LISTEN_PID %s, LISTEN_FDS %s, LISTEN_FDNAMES %s): %s (status 0x%x)",
		      p->pid ? p->pid : "self", p->fds ? p->fds : "unset",
		      p->names ? p->names : "unset", msg, status);
}

static void assert_env_cleared(void)
{
	CHILD_CHECK(getenv("LISTEN_PID") == NULL);
	CHILD_CHECK(getenv("LISTEN_FDS") == NULL);
	CHILD_CHECK(getenv("LISTEN_FDNAMES") == NULL);
}

static void body_names(const struct passing *p)
{
	int bundle, state;

	CHILD_CHECK(sd_listen_count() == 3);
	state = sd_listen_take("l2tpv3d-state");
	CHILD_CHECK(state == 5 && fd_size(state) == 3);
	CHILD_CHECK(fcntl(state, F_GETFD) == FD_CLOEXEC);
	CHILD_CHECK(sd_listen_take("l2tpv3d-state") == -1);
	bundle = sd_listen_take("l2tpv3d-bundle");
	CHILD_CHECK(bundle == 3 && fd_size(bundle) == 1);
	CHILD_CHECK(fcntl(bundle, F_GETFD) == FD_CLOEXEC);
	CHILD_CHECK(sd_listen_take("nope") == -1);
	CHILD_CHECK(sd_listen_take("") == -1);
	CHILD_CHECK(sd_listen_take(NULL) == -1);
	/* not taken yet, but not inheritable either */
	CHILD_CHECK(fcntl(4, F_GETFD) == FD_CLOEXEC);
	sd_listen_close_rest();
	CHILD_CHECK(!fd_open(4));
	CHILD_CHECK(fd_open(3) && fd_open(5) && fd_open(6));	/* taken, and the sentinel */
	assert_env_cleared();
	CHILD_CHECK(sd_listen_take("stale") == -1);
	CHILD_CHECK(sd_listen_count() == 3);
	sd_listen_close_rest();			/* twice: nothing more is closed */
	CHILD_CHECK(fd_open(3) && fd_open(5) && fd_open(6));
}

START_TEST(test_listen_names)
{
	static const struct passing p = {
		.fds = "3", .names = "l2tpv3d-bundle:stale:l2tpv3d-state", .files = 3,
	};

	run_child(&p, body_names);
}
END_TEST

/* A duplicate name (a store with a stale entry): the first is handed out, once. */
static void body_duplicate(const struct passing *p)
{
	CHILD_CHECK(sd_listen_take("l2tpv3d-state") == 3);
	CHILD_CHECK(sd_listen_take("l2tpv3d-state") == -1);
	sd_listen_close_rest();
	CHILD_CHECK(fd_open(3) && !fd_open(4));
}

START_TEST(test_listen_duplicate)
{
	static const struct passing p = {
		.fds = "2", .names = "l2tpv3d-state:l2tpv3d-state", .files = 2,
	};

	run_child(&p, body_duplicate);
}
END_TEST

/* Nothing was passed to this process: take nothing, close nothing, clear all. */
static void body_nothing(const struct passing *p)
{
	CHILD_CHECK(sd_listen_count() == 0);
	CHILD_CHECK(sd_listen_take("a") == -1);
	CHILD_CHECK(sd_listen_take("b") == -1);
	sd_listen_close_rest();
	for (unsigned i = 0; i <= p->files; i++)
		CHILD_CHECK(fd_open(3 + (int)i));
	assert_env_cleared();
}

static const struct passing nothing_passed[] = {
	{ .pid = "parent", .fds = "2", .names = "a:b", .files = 2 },	/* inherited */
	{ .pid = "1", .fds = "2", .names = "a:b", .files = 2 },
	{ .pid = "", .fds = "2", .names = "a:b", .files = 2 },
	{ .pid = "12abc", .fds = "2", .names = "a:b", .files = 2 },
	{ .pid = "-1", .fds = "2", .names = "a:b", .files = 2 },
	{ .pid = "99999999999999999999999", .fds = "2", .names = "a:b", .files = 2 },
	{ .fds = NULL, .names = "a:b", .files = 2 },
	{ .fds = "", .names = "a:b", .files = 2 },
	{ .fds = "two", .names = "a:b", .files = 2 },
	{ .fds = "2x", .names = "a:b", .files = 2 },
	{ .fds = " 2", .names = "a:b", .files = 2 },
	{ .fds = "+2", .names = "a:b", .files = 2 },
	{ .fds = "-2", .names = "a:b", .files = 2 },
	{ .fds = "0", .names = "", .files = 2 },
	{ .fds = "4294967298", .names = "a:b", .files = 2 },	/* 2 modulo 2^32 */
	{ .fds = "99999999999999999999999", .names = "a:b", .files = 2 },
	{ .fds = "2147483647", .names = "a:b", .files = 2 },	/* past any fd limit */
};

START_TEST(test_listen_nothing_passed)
{
	run_child(&nothing_passed[_i], body_nothing);
}
END_TEST

/* Descriptors passed, names unusable: none can be taken, all are closed. */
static void body_unnamed(const struct passing *p)
{
	CHILD_CHECK(sd_listen_count() == 2);
	CHILD_CHECK(sd_listen_take("a") == -1);
	CHILD_CHECK(sd_listen_take("b") == -1);
	CHILD_CHECK(sd_listen_take("c") == -1);
	sd_listen_close_rest();
	CHILD_CHECK(!fd_open(3) && !fd_open(4) && fd_open(5));
	assert_env_cleared();
}

static const struct passing unnamed[] = {
	{ .fds = "2", .names = NULL, .files = 2 },
	{ .fds = "2", .names = "a", .files = 2 },
	{ .fds = "2", .names = "a:b:c", .files = 2 },
};

START_TEST(test_listen_names_mismatch)
{
	run_child(&unnamed[_i], body_unnamed);
}
END_TEST

/* ---- restart or stop ---------------------------------------------------- */

/* Here no unit of ours has a job: never "restarting", and quickly. */
START_TEST(test_restart_pending_here)
{
	struct timespec t0, t1;
	char why[256] = "";
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = sd_restart_pending(why, sizeof(why));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_msg(rc == 0 || rc == -1, "rc %d", rc);
	ck_assert_msg(rc == 0 || why[0] != '\0', "no reason given");
	ck_assert_int_le(t1.tv_sec - t0.tv_sec, 3);
}
END_TEST

static Suite *sdnotify_suite(void)
{
	Suite *s = suite_create("sdnotify");
	TCase *store = tcase_create("fdstore");
	TCase *listen = tcase_create("listen");
	TCase *restart = tcase_create("restart");

	tcase_add_checked_fixture(store, store_setup, store_teardown);
	tcase_add_test(store, test_put_splits_in_datagrams);
	tcase_add_test(store, test_put_abstract_socket);
	tcase_add_test(store, test_put_bad_names);
	tcase_add_test(store, test_put_edge_names);
	tcase_add_test(store, test_remove);
	tcase_add_test(store, test_not_under_systemd);
	tcase_add_test(store, test_manager_gone);
	suite_add_tcase(s, store);
	tcase_add_test(listen, test_listen_names);
	tcase_add_test(listen, test_listen_duplicate);
	tcase_add_loop_test(listen, test_listen_nothing_passed, 0,
			    sizeof(nothing_passed) / sizeof(nothing_passed[0]));
	tcase_add_loop_test(listen, test_listen_names_mismatch, 0,
			    sizeof(unnamed) / sizeof(unnamed[0]));
	suite_add_tcase(s, listen);
	tcase_add_test(restart, test_restart_pending_here);
	tcase_set_timeout(restart, 10);
	suite_add_tcase(s, restart);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sdnotify_suite());
	struct rlimit rl;
	int failed;

	/* 600 descriptors sent and 600 received, all open at once. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
