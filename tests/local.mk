# tests/local.mk - test plumbing shared by every suite.
#
# Unit test programs add themselves to UNIT_TESTS (they run in `make check`
# and again under valgrind in `make check-valgrind`); shell tests add to
# TESTS directly.  A shell test exits 77 to report SKIP.

TESTS += $(UNIT_TESTS)
# TEST_EXTENSIONS (.sh) and SH_LOG_COMPILER are set in src/proto/codec.mk.
# CK_DEFAULT_TIMEOUT: a check test case without its own timeout gets 60 s,
# not libcheck's 4 s (a deadline, not a measure: check_dp_state's
# test_writer_full_tmpfs ran over 4 s beside two other test runs).
AM_TESTS_ENVIRONMENT = \
	top_srcdir='$(abs_top_srcdir)'; top_builddir='$(abs_top_builddir)'; \
	CK_DEFAULT_TIMEOUT=$${CK_DEFAULT_TIMEOUT:-60}; \
	export top_srcdir top_builddir CK_DEFAULT_TIMEOUT;
EXTRA_DIST += tests/valgrind-wrap
EXTRA_DIST += tests/fixtures/pcap/README.md tests/fixtures/pcap/cisco-rfgw10-l2tpv3-ip.pcap

check-valgrind:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS="$(UNIT_TESTS)" \
		LOG_COMPILER="$(abs_top_srcdir)/tests/valgrind-wrap" \
		TEST_SUITE_LOG=test-suite-valgrind.log
.PHONY: check-valgrind

# Two daemons in network namespaces (root; exit 77 = skipped otherwise).
INTEGRATION_TESTS = \
	tests/integration/basic.sh \
	tests/integration/ctl.sh \
	tests/integration/reload.sh \
	tests/integration/scale.sh \
	tests/integration/peer-death.sh \
	tests/integration/loss.sh \
	tests/integration/storm-smoke.sh \
	tests/integration/metrics.sh \
	tests/integration/ports.sh \
	tests/integration/ports-reserve.sh \
	tests/integration/probe-busy.sh \
	tests/integration/hold.sh \
	tests/integration/static.sh \
	tests/integration/confd.sh \
	tests/integration/xconnect.sh \
	tests/integration/restart.sh \
	tests/integration/demo.sh \
	tests/integration/interop.sh \
	tests/integration/ip-encap.sh \
	tests/integration/trust.sh \
	tests/integration/restart-busy.sh \
	tests/integration/send-window.sh \
	tests/integration/rcvbuf.sh \
	tests/integration/malformed-log.sh \
	tests/integration/retrying.sh \
	tests/integration/dup-reid.sh \
	tests/integration/peer-limits.sh \
	tests/integration/refusal-auth.sh \
	tests/integration/forgotten-ccid.sh \
	tests/integration/handover.sh \
	tests/integration/handover-badconf.sh \
	tests/integration/failover.sh \
	tests/integration/failover-auth.sh \
	tests/integration/ha-pair.sh \
	tests/integration/pwred.sh \
	tests/integration/reload-peers.sh \
	tests/integration/reload-live.sh \
	tests/integration/peer-names.sh \
	tests/integration/debug.sh \
	tests/integration/pool.sh \
	tests/integration/log-severity.sh \
	tests/integration/transport-opts.sh
TESTS += $(INTEGRATION_TESTS)
EXTRA_DIST += tests/integration/lib.sh $(INTEGRATION_TESTS) scripts/lib.sh scripts/demo \
	tests/integration/promcheck.py tests/integration/peer.py tests/integration/peer-lib.sh \
	tests/integration/ha-lib.sh

# Attacks on an LNS in network namespaces (forged sources: raw sockets):
# each asserts the daemon is alive, back to its baseline, the victim tunnel
# intact and its replies bounded (doc/security.md).
ADVERSARIAL_TESTS = \
	tests/adversarial/tie-break.sh \
	tests/adversarial/auth-flood.sh \
	tests/adversarial/refuse-flood.sh \
	tests/adversarial/predictable-ids.sh \
	tests/adversarial/spoof.sh \
	tests/adversarial/ctl-fd-exhaustion.sh \
	tests/adversarial/peer-strings.sh \
	tests/adversarial/hide-avps.sh \
	tests/adversarial/ctl-slow-reader.sh \
	tests/adversarial/half-open.sh \
	tests/adversarial/misc.sh \
	tests/adversarial/first-answer.sh \
	tests/adversarial/ctl-idle.sh \
	tests/adversarial/metrics-endpoint.sh \
	tests/adversarial/listener-path.sh
TESTS += $(ADVERSARIAL_TESTS)
EXTRA_DIST += tests/adversarial/lib.sh tests/adversarial/forge.py \
	tests/adversarial/predict-ids.py $(ADVERSARIAL_TESTS)

check-adversarial:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS="$(ADVERSARIAL_TESTS)"
.PHONY: check-adversarial

check-integration:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS="$(INTEGRATION_TESTS)"
.PHONY: check-integration
