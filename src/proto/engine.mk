# src/proto/engine.mk - the protocol engine: reliable delivery, control
# connection and session FSMs (pure: driven by a transport callback and a
# usl timerset), and their unit tests with a back-to-back harness.

src_proto_libl2tpproto_a_SOURCES += \
	src/proto/engine.h \
	src/proto/rd.c src/proto/rd.h \
	src/proto/cc.c src/proto/cc.h \
	src/proto/sess.c src/proto/sess.h

ENGINE_TEST_SOURCES = tests/unit/engine_harness.c tests/unit/engine_harness.h

check_PROGRAMS += tests/unit/check_rd tests/unit/check_cc tests/unit/check_sess \
	tests/unit/check_handover
UNIT_TESTS += tests/unit/check_rd tests/unit/check_cc tests/unit/check_sess \
	tests/unit/check_handover

tests_unit_check_rd_SOURCES = tests/unit/check_rd.c $(ENGINE_TEST_SOURCES)
tests_unit_check_rd_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_rd_LDADD = $(PROTO_LIBS) $(CHECK_TEST_LIBS)

tests_unit_check_cc_SOURCES = tests/unit/check_cc.c $(ENGINE_TEST_SOURCES)
tests_unit_check_cc_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_cc_LDADD = $(PROTO_LIBS) $(CHECK_TEST_LIBS)

tests_unit_check_sess_SOURCES = tests/unit/check_sess.c $(ENGINE_TEST_SOURCES)
tests_unit_check_sess_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_sess_LDADD = $(PROTO_LIBS) $(CHECK_TEST_LIBS)

tests_unit_check_handover_SOURCES = tests/unit/check_handover.c $(ENGINE_TEST_SOURCES)
tests_unit_check_handover_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_handover_LDADD = $(PROTO_LIBS) $(CHECK_TEST_LIBS)
