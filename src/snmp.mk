# src/snmp.mk: the AgentX subagent (--with-snmp) and its tests.  The MIB
# is installed by packaging.mk.
#
# Included from the end of src/local.mk inside `if WITH_SNMP`, after
# src_l2tpv3d_LDADD is set.  snmp.c is built as its own small library so
# that net-snmp's compiler flags (net-snmp-config --cflags brings -I., its
# own -D and -f options) reach that file only.  The library comes before a
# second copy of $(PROTO_LIBS) because static libraries are searched in
# order and snmp.c calls into the engine and usl.

noinst_LIBRARIES += src/libsnmpagent.a
src_libsnmpagent_a_SOURCES = src/snmp.c src/snmp.h src/agentx_probe.c src/agentx_probe.h
src_libsnmpagent_a_CFLAGS = $(AM_CFLAGS) $(SNMP_CFLAGS) $(LIBEVENT_CFLAGS) $(JSONC_CFLAGS) \
	$(LIBCONFIG_CFLAGS)
src_l2tpv3d_LDADD += src/libsnmpagent.a $(PROTO_LIBS) $(SNMP_LIBS)

# A real snmpd as AgentX master on a private socket and port (exit 77 when
# snmpd, snmpwalk or root are missing); alone: make check TESTS=tests/snmp/snmp.sh.
# walk-bench.sh is a benchmark, not a test.
SNMP_TESTS = tests/snmp/snmp.sh tests/snmp/stall.sh
TESTS += $(SNMP_TESTS)
dist_noinst_SCRIPTS += $(SNMP_TESTS) tests/snmp/walk-bench.sh
