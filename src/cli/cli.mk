# src/cli/cli.mk: l2tpv3ctl, the control-socket client, and its tests.
# Included from the top Makefile.am (non-recursive build).

bin_PROGRAMS += src/cli/l2tpv3ctl
src_cli_l2tpv3ctl_SOURCES = \
	src/cli/l2tpv3ctl.c src/cli/cli.h src/cli/util.c \
	src/cli/parse.c \
	src/cli/conn.c \
	src/cli/batch.c \
	src/cli/output.c \
	src/cli/output_json.c \
	src/ctl_proto.h usl/escape.c usl/escape.h
src_cli_l2tpv3ctl_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
src_cli_l2tpv3ctl_LDADD = $(JSONC_LIBS)

# Against a fake daemon (python3 + jq; skipped without them).
TESTS += tests/cli/cli-test.sh
EXTRA_DIST += tests/cli/cli-test.sh tests/cli/fake-ctl.py
