/*
 * tests/unit/check_dp_state.c - the state file (src/dp_state.c): a line is
 * taken whole or not at all (torn, joined, garbled lines yield no id), and
 * the writer on a full 64 KiB tmpfs reports the real errno, never leaves a
 * dead id on file, and after space is freed writes exactly the live set.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "dp_state.h"

static char dir[64];
static char path[256];

/* A fresh template each time: without fork (valgrind), setup runs again. */
static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_dp_state.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/kernel-tunnels.1", dir);
}

static void teardown(void)
{
	char cmd[300];

	umount2(dir, MNT_DETACH);	/* test_writer_full_tmpfs; harmless elsewhere */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup of %s failed\n", dir);
}

/* ---- the line format --------------------------------------------------- */

START_TEST(test_crc32_vector)
{
	ck_assert_uint_eq(dps_crc32("123456789", 9), 0xcbf43926u);
}
END_TEST

START_TEST(test_round_trip)
{
	static const uint32_t ids[] = { 1, 9, 10, 2485, 65535, 4294967295u };
	char line[DPS_LINE_MAX];
	uint32_t id;
	char op;

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		for (int k = 0; k < 2; k++) {
			size_t n = dps_encode(line, "+-"[k], ids[i]);

			ck_assert_uint_lt(n, DPS_LINE_MAX);
			ck_assert_int_eq(line[n - 1], '\n');
			ck_assert_int_eq(dps_parse(line, n - 1, &op, &id), DPS_RECORD);
			ck_assert_int_eq(op, "+-"[k]);
			ck_assert_uint_eq(id, ids[i]);
		}
	}
}
END_TEST

START_TEST(test_legacy_line)
{
	uint32_t id;
	char op;

	ck_assert_int_eq(dps_parse("-2485", 5, &op, &id), DPS_LEGACY);
	ck_assert_int_eq(op, '-');
	ck_assert_uint_eq(id, 2485);
}
END_TEST

/* Complete lines that are not records: none may yield an id. */
START_TEST(test_garbled_lines)
{
	static const char *const bad[] = {
		"", "+", "-", "2485", "x2485", "+0", "+01", "+4294967296", "+99999999999",
		"+12+77", "-2485+77", "++77", "+12 ", "+12 1234567", "+12 123456789",
		"+12 DEADBEEF", "+12 deadbeef", "+12  deadbeef", " +12", "+12\r", "+1 2",
	};
	uint32_t id;
	char op;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(dps_parse(bad[i], strlen(bad[i]), &op, &id) == DPS_BAD,
			      "\"%s\" taken", bad[i]);
	ck_assert_int_eq(dps_parse("+12\0", 4, &op, &id), DPS_BAD);
}
END_TEST

/* Every single-bit error in a record: the CRC refuses all of them. */
START_TEST(test_bit_flips)
{
	char line[DPS_LINE_MAX];
	size_t n = dps_encode(line, '+', 2485);
	uint32_t id;
	char op;

	for (size_t i = 0; i < n - 1; i++) {
		for (int b = 0; b < 8; b++) {
			enum dps_line r;

			line[i] ^= (char)(1 << b);
			r = dps_parse(line, n - 1, &op, &id);
			ck_assert_msg(r == DPS_BAD, "flip %zu/%d taken: %.*s", i, b, (int)n - 1, line);
			line[i] ^= (char)(1 << b);
		}
	}
}
END_TEST

/*
 * Every torn prefix of a record joined to the next record (what a short
 * write followed by an append leaves), in both formats: never taken.
 */
START_TEST(test_joined_lines)
{
	char first[DPS_LINE_MAX], next[DPS_LINE_MAX], line[2 * DPS_LINE_MAX];
	size_t nf = dps_encode(first, '-', 1234567), nn = dps_encode(next, '+', 77);
	static const char lf[] = "-1234567", ln[] = "+77";
	uint32_t id;
	char op;

	for (size_t cut = 1; cut < nf - 1; cut++) {
		memcpy(line, first, cut);
		memcpy(line + cut, next, nn - 1);
		ck_assert_msg(dps_parse(line, cut + nn - 1, &op, &id) == DPS_BAD,
			      "joined at %zu taken: %.*s", cut, (int)(cut + nn - 1), line);
	}
	for (size_t cut = 1; cut < sizeof(lf) - 1; cut++) {
		memcpy(line, lf, cut);
		memcpy(line + cut, ln, sizeof(ln) - 1);
		ck_assert_int_eq(dps_parse(line, cut + sizeof(ln) - 1, &op, &id), DPS_BAD);
	}
}
END_TEST

/* ---- loading a file ---------------------------------------------------- */

enum { MAX_ID = 4096 };

struct model {
	bool on_file[MAX_ID];
	bool foreign;		/* an id out of range was applied */
};

static void apply(void *arg, char op, uint32_t id)
{
	struct model *m = arg;

	if (id >= MAX_ID) {
		m->foreign = true;
		return;
	}
	m->on_file[id] = op == '+';
}

static void put_file(const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(text, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

static size_t cat_record(char *buf, size_t at, char op, uint32_t id)
{
	return at + dps_encode(buf + at, op, id);
}

/* A damaged file: a short write left "-2485" torn, later lines joined. */
START_TEST(test_load_torn_and_joined)
{
	static struct model m;
	struct dps_load_stats st;
	char text[512];
	size_t len = 0;

	len = cat_record(text, len, '+', 2485);
	len = cat_record(text, len, '+', 12);
	len += (size_t)sprintf(text + len, "+7\n");			/* old format */
	len += (size_t)sprintf(text + len, "-12+77\n");			/* old, joined */
	len += (size_t)sprintf(text + len, "-24");			/* torn ... */
	len = cat_record(text, len, '+', 3000);				/* ... joined */
	len = cat_record(text, len, '+', 100);
	len += (size_t)sprintf(text + len, "-2485");			/* torn, last */
	put_file(text, len);
	memset(&m, 0, sizeof(m));
	ck_assert_int_eq(dps_load(path, apply, &m, &st), 0);
	ck_assert_uint_eq(st.records, 3);
	ck_assert_uint_eq(st.legacy, 1);
	ck_assert_uint_eq(st.bad, 2);
	ck_assert_uint_eq(st.torn, 1);
	ck_assert(m.on_file[2485] && m.on_file[12] && m.on_file[7] && m.on_file[100]);
	ck_assert(!m.on_file[77] && !m.on_file[3000] && !m.on_file[24] && !m.foreign);
}
END_TEST

START_TEST(test_load_missing_file)
{
	static struct model m;
	struct dps_load_stats st;

	ck_assert_int_eq(dps_load(path, apply, &m, &st), 0);
	ck_assert_uint_eq(st.records + st.legacy + st.bad + st.torn, 0);
}
END_TEST

/* ---- the writer -------------------------------------------------------- */

/* What the daemon keeps in memory: the ids it owns. */
struct owner {
	bool live[MAX_ID];
	uint32_t ids[MAX_ID];
	size_t n;
};

static size_t live_ids(struct owner *o)
{
	o->n = 0;
	for (uint32_t id = 1; id < MAX_ID; id++)
		if (o->live[id])
			o->ids[o->n++] = id;
	return o->n;
}

static void own(struct dps_writer *w, struct owner *o, char op, uint32_t id)
{
	o->live[id] = op == '+';
	dps_append(w, op, id);
}

/* The daemon's rec_flush(): append, then compact or repair. */
static int sync_file(struct dps_writer *w, struct owner *o)
{
	int rc = dps_flush(w);

	if (dps_want_rewrite(w, live_ids(o))) {
		int rrc = dps_rewrite(w, o->ids, o->n);

		if (rc == 0)
			rc = rrc;
	}
	return rc;
}

static void load_model(struct model *m, struct dps_load_stats *st)
{
	memset(m, 0, sizeof(*m));
	ck_assert_int_eq(dps_load(path, apply, m, st), 0);
	ck_assert(!m->foreign);
}

/* Every id on file is one we own: a restart deletes nobody else's tunnel. */
static void assert_file_subset(const struct owner *o)
{
	static struct model m;
	struct dps_load_stats st;

	load_model(&m, &st);
	for (uint32_t id = 1; id < MAX_ID; id++)
		ck_assert_msg(!m.on_file[id] || o->live[id], "id %u on file, not ours", id);
}

static void assert_file_exact(const struct owner *o)
{
	static struct model m;
	struct dps_load_stats st;

	load_model(&m, &st);
	ck_assert_uint_eq(st.bad + st.torn, 0);
	for (uint32_t id = 1; id < MAX_ID; id++)
		ck_assert_msg(m.on_file[id] == o->live[id], "id %u: file %d, ours %d", id,
			      m.on_file[id], o->live[id]);
}

START_TEST(test_writer_appends_and_compacts)
{
	static struct dps_writer w;
	static struct owner o;

	dps_init(&w, path);
	ck_assert_int_eq(dps_open(&w), 0);
	ck_assert(dps_want_rewrite(&w, 0));	/* the previous run's file */
	ck_assert_int_eq(sync_file(&w, &o), 0);
	for (uint32_t id = 1; id < 3000; id++) {
		own(&w, &o, '+', id);
		if (id % 3 == 0)
			own(&w, &o, '-', id - 1);
		if (id % 50 == 0)
			ck_assert_int_eq(sync_file(&w, &o), 0);
	}
	ck_assert_int_eq(sync_file(&w, &o), 0);
	ck_assert(!w.stale);
	ck_assert_uint_eq(w.failures, 0);
	assert_file_exact(&o);
	dps_close(&w);
}
END_TEST

/* A private mount namespace with a 64 KiB tmpfs on dir; false if not root. */
static bool small_tmpfs(void)
{
	if (unshare(CLONE_NEWNS) < 0) {
		fprintf(stderr, "check_dp_state: no mount namespace (%s): full-disk test not run\n",
			strerror(errno));
		return false;
	}
	/* "none", not NULL: valgrind checks the strings the kernel ignores here */
	ck_assert_int_eq(mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL), 0);
	ck_assert_int_eq(mount("tmpfs", dir, "tmpfs", 0, "size=64k"), 0);
	return true;
}

static void fill_disk(const char *filler)
{
	static char block[4096];
	int fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert_int_ge(fd, 0);
	while (write(fd, block, sizeof(block)) > 0)
		;
	ck_assert_int_eq(errno, ENOSPC);
	close(fd);
}

/*
 * A full disk on the host (tmpfs): creates continue, each
 * failure says ENOSPC (not "Success"), the file never names an id that is
 * not ours, and once space is freed it holds exactly our ids again.
 */
START_TEST(test_writer_full_tmpfs)
{
	static struct dps_writer w;
	static struct owner o;
	char filler[300];
	unsigned failed = 0;

	if (!small_tmpfs())
		return;
	snprintf(filler, sizeof(filler), "%s/filler", dir);
	dps_init(&w, path);
	ck_assert_int_eq(dps_open(&w), 0);
	for (uint32_t id = 1; id <= 40; id++)
		own(&w, &o, '+', id);
	ck_assert_int_eq(sync_file(&w, &o), 0);
	fill_disk(filler);

	for (uint32_t id = 41; id < 1500; id++) {
		own(&w, &o, '+', id);
		if (id % 4 == 0)
			own(&w, &o, '-', id - 40);
		if (id % 16 == 0) {
			int rc = sync_file(&w, &o);

			if (rc < 0) {
				ck_assert_int_eq(rc, -ENOSPC);
				ck_assert_msg(strstr(w.why, "No space left on device") != NULL &&
					      strstr(w.why, "Success") == NULL, "why: %s", w.why);
				failed++;
				assert_file_subset(&o);
			}
		}
	}
	ck_assert_uint_gt(failed, 10);	/* every failure reported, not just the first */
	ck_assert(w.stale);
	ck_assert_uint_ge(w.failures, failed);
	assert_file_subset(&o);

	ck_assert_int_eq(unlink(filler), 0);
	ck_assert_int_eq(sync_file(&w, &o), 0);
	ck_assert(!w.stale);
	assert_file_exact(&o);
	/* and appending works again */
	own(&w, &o, '+', 4000);
	own(&w, &o, '-', 1499);
	ck_assert_int_eq(sync_file(&w, &o), 0);
	assert_file_exact(&o);
	dps_close(&w);
}
END_TEST

static Suite *dp_state_suite(void)
{
	Suite *s = suite_create("dp_state");
	TCase *fmt = tcase_create("format");
	TCase *io = tcase_create("file");

	tcase_add_test(fmt, test_crc32_vector);
	tcase_add_test(fmt, test_round_trip);
	tcase_add_test(fmt, test_legacy_line);
	tcase_add_test(fmt, test_garbled_lines);
	tcase_add_test(fmt, test_bit_flips);
	tcase_add_test(fmt, test_joined_lines);
	suite_add_tcase(s, fmt);
	tcase_add_checked_fixture(io, setup, teardown);
	tcase_add_test(io, test_load_torn_and_joined);
	tcase_add_test(io, test_load_missing_file);
	tcase_add_test(io, test_writer_appends_and_compacts);
	tcase_add_test(io, test_writer_full_tmpfs);
	suite_add_tcase(s, io);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(dp_state_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
