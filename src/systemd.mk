# src/systemd.mk - what the daemon asks of systemd beyond readiness: the file
# descriptor store and the descriptors passed at start (no library), and,
# over D-Bus, whether a SIGTERM is a restart (libsystemd, --with-systemd;
# without it $(LIBSYSTEMD_*) are empty and the answer is "cannot tell").
# Included from src/local.mk after src_l2tpv3d_CFLAGS and _LDADD are set.
# src/sdnotify.c is in DAEMON_COMMON_SOURCES: whatever links it needs
# $(LIBSYSTEMD_CFLAGS) and $(LIBSYSTEMD_LIBS).

src_l2tpv3d_CFLAGS += $(LIBSYSTEMD_CFLAGS)
src_l2tpv3d_LDADD += $(LIBSYSTEMD_LIBS)

# The store's datagrams against a fake $NOTIFY_SOCKET, and $LISTEN_* parsing
# in children whose descriptors 3.. are set up as systemd would.
check_PROGRAMS += tests/unit/check_sdnotify
UNIT_TESTS += tests/unit/check_sdnotify
tests_unit_check_sdnotify_SOURCES = tests/unit/check_sdnotify.c src/sdnotify.c src/sdnotify.h
tests_unit_check_sdnotify_CFLAGS = $(CHECK_TEST_CFLAGS) $(LIBEVENT_CFLAGS) $(JSONC_CFLAGS) \
	$(LIBSYSTEMD_CFLAGS)
tests_unit_check_sdnotify_LDADD = $(USL_LIBS) $(CHECK_TEST_LIBS) $(LIBSYSTEMD_LIBS)
