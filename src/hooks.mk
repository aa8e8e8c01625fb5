# src/hooks.mk: the id allocator, hook scripts and the child registry (child.h),
# with their unit tests.

DAEMON_COMMON_SOURCES += \
	src/idalloc.c \
	src/hooks.c src/child.h

check_PROGRAMS += tests/unit/check_idalloc tests/unit/check_hooks
UNIT_TESTS += tests/unit/check_idalloc tests/unit/check_hooks

tests_unit_check_idalloc_SOURCES = tests/unit/check_idalloc.c src/idalloc.c src/idalloc.h
tests_unit_check_idalloc_CFLAGS = $(CHECK_TEST_CFLAGS) $(LIBEVENT_CFLAGS) $(JSONC_CFLAGS)
tests_unit_check_idalloc_LDADD = $(PROTO_LIBS) $(CHECK_TEST_LIBS) $(JSONC_LIBS)

# check_hooks.c defines the few daemon/engine functions hooks.c calls, so
# nothing is pulled from libl2tpproto.a; it runs real scripts under /tmp.
tests_unit_check_hooks_SOURCES = tests/unit/check_hooks.c src/hooks.c src/child.h src/event.c
tests_unit_check_hooks_CFLAGS = $(CHECK_TEST_CFLAGS) $(LIBEVENT_CFLAGS) $(JSONC_CFLAGS)
tests_unit_check_hooks_LDADD = $(PROTO_LIBS) $(CHECK_TEST_LIBS) $(JSONC_LIBS)
