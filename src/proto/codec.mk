# src/proto/codec.mk: the control-message codec, authentication, and their tests.

src_proto_libl2tpproto_a_SOURCES += \
	src/proto/avp.c src/proto/avp.h \
	src/proto/msg.c src/proto/msg.h \
	src/proto/auth.c src/proto/auth.h

# Shell tests (tests/unit/*.sh) run through $(SHELL); this fragment owns these two.
TEST_EXTENSIONS = .sh
SH_LOG_COMPILER = $(SHELL)

CODEC_CHECKS = \
	tests/unit/check_codec \
	tests/unit/check_malformed \
	tests/unit/check_auth \
	tests/unit/check_capture

check_PROGRAMS += $(CODEC_CHECKS) tests/unit/wire-oracle-gen
UNIT_TESTS += $(CODEC_CHECKS)
TESTS += tests/unit/wire-oracle.sh

# one sample message of each type, shared by the tests, the oracle and the fuzz seeds
ORACLE_SAMPLES = tests/unit/wire-oracle-samples.c tests/unit/wire-oracle-samples.h

# the real captures: tests/fixtures (vendored from ../shared/fixtures)
CODEC_TEST_CFLAGS = $(CHECK_TEST_CFLAGS) $(CRYPTO_CFLAGS) \
	-DFIXTURES_DIR=\"$(abs_top_srcdir)/tests/fixtures\"

tests_unit_check_codec_SOURCES = tests/unit/check_codec.c $(ORACLE_SAMPLES)
tests_unit_check_codec_CFLAGS = $(CODEC_TEST_CFLAGS)
tests_unit_check_codec_LDADD = $(PROTO_LIBS) $(CHECK_TEST_LIBS)

tests_unit_check_malformed_SOURCES = tests/unit/check_malformed.c $(ORACLE_SAMPLES)
tests_unit_check_malformed_CFLAGS = $(CODEC_TEST_CFLAGS)
tests_unit_check_malformed_LDADD = $(PROTO_LIBS) $(CHECK_TEST_LIBS)

tests_unit_check_auth_SOURCES = tests/unit/check_auth.c
tests_unit_check_auth_CFLAGS = $(CODEC_TEST_CFLAGS)
tests_unit_check_auth_LDADD = $(PROTO_LIBS) $(CHECK_TEST_LIBS)

tests_unit_check_capture_SOURCES = tests/unit/check_capture.c
tests_unit_check_capture_CFLAGS = $(CODEC_TEST_CFLAGS)
tests_unit_check_capture_LDADD = $(PROTO_LIBS) $(CHECK_TEST_LIBS)

# Builds every message type with our encoder into pcaps for tshark (wire-oracle.sh).
tests_unit_wire_oracle_gen_SOURCES = tests/unit/wire-oracle-gen.c $(ORACLE_SAMPLES)
tests_unit_wire_oracle_gen_CFLAGS = $(AM_CFLAGS) $(CRYPTO_CFLAGS)
tests_unit_wire_oracle_gen_LDADD = $(PROTO_LIBS)

EXTRA_DIST += \
	tests/unit/wire-oracle.sh \
	tests/fuzz/fuzz_msg.c \
	tests/fuzz/fuzz_restore.c \
	tests/fuzz/restore-seed.c \
	tests/fuzz/run.sh \
	tests/fuzz/README
