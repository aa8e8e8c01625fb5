# usl/local.mk: the utility library, its unit tests and its benchmark.

usl_libusl_a_SOURCES += \
	usl/buf.c usl/buf.h \
	usl/escape.c usl/escape.h \
	usl/hash.c usl/hash.h \
	usl/json.c usl/json.h \
	usl/list.h \
	usl/log.c usl/log.h \
	usl/pack.c usl/pack.h \
	usl/loop.c usl/loop.h \
	usl/rbtree.c usl/rbtree.h \
	usl/suggest.c usl/suggest.h \
	usl/time.c usl/time.h \
	usl/timer.c usl/timer.h

USL_CHECKS = \
	tests/unit/check_rbtree \
	tests/unit/check_hash \
	tests/unit/check_list \
	tests/unit/check_timer \
	tests/unit/check_loop \
	tests/unit/check_buf \
	tests/unit/check_escape \
	tests/unit/check_json \
	tests/unit/check_suggest \
	tests/unit/check_log

# UNIT_TESTS run in `make check` and again in `make check-valgrind`.
check_PROGRAMS += $(USL_CHECKS)
UNIT_TESTS += $(USL_CHECKS)

tests_unit_check_rbtree_SOURCES = tests/unit/check_rbtree.c
tests_unit_check_rbtree_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_rbtree_LDADD = $(USL_LIBS) $(CHECK_TEST_LIBS)

tests_unit_check_hash_SOURCES = tests/unit/check_hash.c
tests_unit_check_hash_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_hash_LDADD = $(USL_LIBS) $(CHECK_TEST_LIBS)

tests_unit_check_list_SOURCES = tests/unit/check_list.c
tests_unit_check_list_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_list_LDADD = $(USL_LIBS) $(CHECK_TEST_LIBS)

tests_unit_check_timer_SOURCES = tests/unit/check_timer.c
tests_unit_check_timer_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_timer_LDADD = $(USL_LIBS) $(CHECK_TEST_LIBS)

tests_unit_check_loop_SOURCES = tests/unit/check_loop.c
tests_unit_check_loop_CFLAGS = $(CHECK_TEST_CFLAGS) $(LIBEVENT_CFLAGS)
tests_unit_check_loop_LDADD = $(USL_LIBS) $(CHECK_TEST_LIBS)

tests_unit_check_buf_SOURCES = tests/unit/check_buf.c
tests_unit_check_buf_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_buf_LDADD = $(USL_LIBS) $(CHECK_TEST_LIBS)

tests_unit_check_escape_SOURCES = tests/unit/check_escape.c
tests_unit_check_escape_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_escape_LDADD = $(USL_LIBS) $(CHECK_TEST_LIBS)

tests_unit_check_json_SOURCES = tests/unit/check_json.c
tests_unit_check_json_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_json_LDADD = $(USL_LIBS) $(CHECK_TEST_LIBS)

tests_unit_check_suggest_SOURCES = tests/unit/check_suggest.c
tests_unit_check_suggest_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_suggest_LDADD = $(USL_LIBS) $(CHECK_TEST_LIBS)

tests_unit_check_log_SOURCES = tests/unit/check_log.c
tests_unit_check_log_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_log_LDADD = $(USL_LIBS) $(CHECK_TEST_LIBS)

# Timer set benchmark: usl rbtree vs a sorted list (tests/bench/usl-bench -o DIR).
noinst_PROGRAMS += tests/bench/usl-bench
tests_bench_usl_bench_SOURCES = tests/bench/usl-bench.c
tests_bench_usl_bench_CPPFLAGS = $(AM_CPPFLAGS) \
	-DUSL_BENCH_GP='"$(abs_top_srcdir)/tests/bench/usl-bench.gp"'
tests_bench_usl_bench_LDADD = $(USL_LIBS)
EXTRA_DIST += tests/bench/usl-bench.gp
