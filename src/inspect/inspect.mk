# src/inspect/inspect.mk - l2tpv3-inspect: decodes and lints the L2TPv3
# control messages of pcap/pcapng captures with the daemon's own codec.
# Needs libpcap (configure.ac: PKG_CHECK_MODULES([LIBPCAP], [libpcap])).

bin_PROGRAMS += src/inspect/l2tpv3-inspect
src_inspect_l2tpv3_inspect_SOURCES = \
	src/inspect/inspect.h src/inspect/conn.h src/inspect/main.c src/inspect/pkt.c \
	src/inspect/conn.c src/inspect/seq.c src/inspect/state.c src/inspect/avp.c \
	src/inspect/out.c
src_inspect_l2tpv3_inspect_CFLAGS = $(AM_CFLAGS) $(LIBPCAP_CFLAGS) $(CRYPTO_CFLAGS)
src_inspect_l2tpv3_inspect_LDADD = $(PROTO_LIBS) $(LIBPCAP_LIBS)
dist_man1_MANS = src/inspect/l2tpv3-inspect.1

# cisco/crafted/badinput need no privileges (tshark, python3, jq or skip);
# daemons/loss run two daemons in namespaces (root, else skipped).
INSPECT_TESTS = \
	tests/inspect/cisco.sh \
	tests/inspect/crafted.sh \
	tests/inspect/badinput.sh \
	tests/inspect/daemons.sh \
	tests/inspect/loss.sh \
	tests/inspect/shared-port.sh
TESTS += $(INSPECT_TESTS)
EXTRA_DIST += $(INSPECT_TESTS) tests/inspect/lib.sh tests/inspect/mkpcap.py \
	doc/l2tpv3-inspect.md

check-inspect:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS="$(INSPECT_TESTS)"
.PHONY: check-inspect
