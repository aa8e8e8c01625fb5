# tests/local.mk - test plumbing shared by every suite.
#
# Unit test programs add themselves to UNIT_TESTS (they run in `make check`
# and again under valgrind in `make check-valgrind`); shell tests add to
# TESTS directly.  A shell test exits 77 to report SKIP.

TESTS += $(UNIT_TESTS)
# TEST_EXTENSIONS (.sh) and SH_LOG_COMPILER are set in src/proto/codec.mk.
AM_TESTS_ENVIRONMENT = \
	top_srcdir='$(abs_top_srcdir)'; top_builddir='$(abs_top_builddir)'; \
	export top_srcdir top_builddir;
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
	tests/integration/reload.sh \
	tests/integration/scale.sh \
	tests/integration/peer-death.sh \
	tests/integration/loss.sh \
	tests/integration/storm-smoke.sh
TESTS += $(INTEGRATION_TESTS)
EXTRA_DIST += tests/integration/lib.sh $(INTEGRATION_TESTS) scripts/lib.sh

check-integration:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS="$(INTEGRATION_TESTS)"
.PHONY: check-integration
