# src/dp_kernel.mk - the Linux kernel data plane (generic netlink "l2tp" via
# libmnl, interfaces via libnl-route, pppd for PPP pseudowires), its raw
# netlink benchmark and its test suite, which runs in a QEMU guest.
# Included from src/local.mk after DAEMON_COMMON_SOURCES is first set (=).
# Whatever links these sources needs $(LIBMNL_*), $(LIBNL_*) and $(ZLIB_LIBS)
# (the state file's CRC-32).

DAEMON_COMMON_SOURCES += \
	src/dp.c src/dp_kernel.c src/dp_kernel_int.h src/dp_kernel_nl.c src/dp_kernel_owned.c \
	src/dp_kernel_stats.c src/dp_kernel_lost.c src/dp_kernel_handover.c \
	src/dp_state.c src/dp_state.h src/dp_watch.c src/dp_watch.h src/link.c src/link.h src/pppd.c

# The state file's record format and writer, on the host: torn, joined and
# garbled lines, and a full tmpfs (in a private mount namespace, as root).
check_PROGRAMS += tests/unit/check_dp_state
UNIT_TESTS += tests/unit/check_dp_state
tests_unit_check_dp_state_SOURCES = tests/unit/check_dp_state.c src/dp_state.c src/dp_state.h
tests_unit_check_dp_state_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_dp_state_LDADD = $(CHECK_TEST_LIBS) $(ZLIB_LIBS)

# The kernel's own create/delete rate, without the control protocol.
check_PROGRAMS += tests/bench/nl-create-rate
tests_bench_nl_create_rate_SOURCES = tests/bench/nl-create-rate.c
tests_bench_nl_create_rate_CFLAGS = $(AM_CFLAGS) $(LIBMNL_CFLAGS)
tests_bench_nl_create_rate_LDADD = $(LIBMNL_LIBS)

KERNEL_TESTS = \
	tests/kernel/pseudowire.sh tests/kernel/cookies.sh tests/kernel/prepared.sh tests/kernel/lifecycle.sh \
	tests/kernel/lost.sh tests/kernel/forged-notices.sh tests/kernel/xconnect.sh tests/kernel/ppp.sh tests/kernel/overrun.sh tests/kernel/statefile.sh \
	tests/kernel/scale.sh tests/kernel/restart.sh tests/kernel/transport-opts.sh tests/kernel/metrics.sh \
	tests/kernel/crash.sh tests/kernel/ha-pair.sh
EXTRA_DIST += tests/kernel/vm-run tests/kernel/suite.sh tests/kernel/lib.sh \
	$(KERNEL_TESTS) doc/kernel-dataplane.md

# The whole suite in ONE guest boot (vm-run exits 77, "SKIPPED: ...", when
# qemu, static busybox or a Debian kernel with L2TP are missing:
# scripts/deps --kernel).  KERNEL_TESTS_ONLY="ppp cookies" picks scripts;
# L2TP_VM_ACCEL=kvm|tcg overrides the accelerator.  The timeout is a safety
# net for a guest that hangs: the suite takes about 15 min under emulation
# on a quiet 2-core host, and scripts/check runs it beside the host's tests.
KERNEL_VM_TIMEOUT = 3600
check-kernel: src/l2tpv3d$(EXEEXT) src/cli/l2tpv3ctl$(EXEEXT) tests/bench/nl-create-rate$(EXEEXT)
	$(abs_top_srcdir)/tests/kernel/vm-run --timeout $(KERNEL_VM_TIMEOUT) \
		--share $(abs_top_srcdir) -- \
		env top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(abs_top_srcdir)/tests/kernel/suite.sh $(KERNEL_TESTS_ONLY)
.PHONY: check-kernel
