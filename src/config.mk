# src/config.mk: the configuration parser, its unit test and its golden test.
# Included from src/local.mk after DAEMON_COMMON_SOURCES is first set (=),
# which also lists src/config.h.  Whatever links $(CONFIG_SOURCES) needs
# $(LIBCONFIG_CFLAGS), $(LIBCONFIG_LIBS) and usl/libusl.a (usl/suggest).

# The parser's files; src/config_int.h is what they share, src/config.h the API.
CONFIG_SOURCES = src/config.c src/config_value.c src/config_table.c src/config_parse.c \
	src/config_print.c src/config_int.h
DAEMON_COMMON_SOURCES += $(CONFIG_SOURCES)

# Table-driven good and bad files, inheritance, peer matching, addresses,
# print -> load -> print; loads etc/l2tpv3d.conf ($top_srcdir, else TOP_SRCDIR).
check_PROGRAMS += tests/unit/check_config
UNIT_TESTS += tests/unit/check_config
tests_unit_check_config_SOURCES = tests/unit/check_config.c $(CONFIG_SOURCES) src/config.h
tests_unit_check_config_CPPFLAGS = $(AM_CPPFLAGS) -DTOP_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_check_config_CFLAGS = $(CHECK_TEST_CFLAGS) $(LIBCONFIG_CFLAGS)
tests_unit_check_config_LDADD = usl/libusl.a $(LIBCONFIG_LIBS) $(CHECK_TEST_LIBS)

# The same suite against the parser of a build without SNMP, whatever this
# build is: such a binary must refuse snmp.enabled = true (test_snmp_enabled).
# The parser needs nothing of net-snmp, so undefining HAVE_SNMP (DEFS come
# first on the command line) is all a no-SNMP build does to it.
check_PROGRAMS += tests/unit/check_config_nosnmp
UNIT_TESTS += tests/unit/check_config_nosnmp
tests_unit_check_config_nosnmp_SOURCES = $(tests_unit_check_config_SOURCES)
tests_unit_check_config_nosnmp_CPPFLAGS = $(tests_unit_check_config_CPPFLAGS) -UHAVE_SNMP
tests_unit_check_config_nosnmp_CFLAGS = $(tests_unit_check_config_CFLAGS)
tests_unit_check_config_nosnmp_LDADD = $(tests_unit_check_config_LDADD)

# config-print FILE: what `l2tpv3d -nv` prints, without the daemon.
check_PROGRAMS += tests/config-print
tests_config_print_SOURCES = tests/config-print.c $(CONFIG_SOURCES) src/config.h
tests_config_print_CFLAGS = $(AM_CFLAGS) $(LIBCONFIG_CFLAGS)
tests_config_print_LDADD = usl/libusl.a $(LIBCONFIG_LIBS)

# tests/config/NAME.conf -> config-print -> tests/config/NAME.expected
TESTS += tests/config-golden.sh
dist_noinst_SCRIPTS += tests/config-golden.sh
EXTRA_DIST += tests/config etc/l2tpv3d.conf

# The configuration a restart carries to the next process (text that stands
# on its own: secrets and secret_file contents in it); config-print -c prints it.
DAEMON_COMMON_SOURCES += src/config_carry.c
tests_config_print_SOURCES += src/config_carry.c
