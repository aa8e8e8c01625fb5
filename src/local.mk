# src/local.mk - the daemon.
#
# DAEMON_COMMON_SOURCES: every daemon module but main.c (fragments add
# theirs), so tests can link modules without the entry point.

DAEMON_COMMON_SOURCES = \
	src/l2tpv3d.h src/config.h src/ctl_proto.h src/dp.h src/idalloc.h \
	src/util.c src/sdnotify.c src/peer.c src/tunnel.c src/session.c \
	src/transport.c src/ctl.c src/objref.c src/reload.c src/statics.c src/pool.c src/dp_null.c \
	src/profile.c src/profile.h src/metrics.c src/acceptor.c src/acceptor.h src/event.c src/event.h src/state.c \
	src/handover.c src/failover.c src/ha.c src/pwred.c

include src/config.mk
include src/hooks.mk
include src/dp_kernel.mk
include src/cli/cli.mk

sbin_PROGRAMS += src/l2tpv3d
src_l2tpv3d_SOURCES = src/main.c $(DAEMON_COMMON_SOURCES)
src_l2tpv3d_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(JSONC_CFLAGS) $(LIBCONFIG_CFLAGS) \
	$(LIBMNL_CFLAGS) $(LIBNL_CFLAGS)
src_l2tpv3d_LDADD = $(PROTO_LIBS) $(JSONC_LIBS) $(LIBCONFIG_LIBS) $(LIBMNL_LIBS) $(LIBNL_LIBS) \
	$(ZLIB_LIBS)

EXTRA_DIST += doc/ctl-protocol.md

# the control protocol's shared header (the status line the daemon and the CLI write by hand)
check_PROGRAMS += tests/unit/check_ctl_proto
UNIT_TESTS += tests/unit/check_ctl_proto
tests_unit_check_ctl_proto_SOURCES = tests/unit/check_ctl_proto.c src/ctl_proto.h
tests_unit_check_ctl_proto_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_ctl_proto_LDADD = $(CHECK_TEST_LIBS)
include src/systemd.mk

if WITH_SNMP
include src/snmp.mk
endif
