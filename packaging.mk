# packaging.mk - what `make install` puts on a system besides the programs,
# and the tests that keep it honest.  Included from Makefile.am.
#
#   $(mandir)                     l2tpv3d(8), l2tpv3ctl(8), l2tpv3d.conf(5)
#   $(systemdsystemunitdir)       l2tpv3d.service, with this build's paths
#   $(sysusersdir)                l2tpv3d.conf: the group l2tpv3d (control socket)
#   $(sysconfdir)/l2tpv3d/        l2tpv3d.conf, the example (an existing one is kept)
#   $(sysconfdir)/default/        l2tpv3d, the service's extra options (kept too)
#   $(bashcompletiondir)          l2tpv3ctl
#   $(pkgdatadir)                 tunnel-storm, l2tpv3d-notify (keepalived)
#   $(mibsdir)                    L2TPV3D-MIB.txt, with the subagent (--with-snmp)
#
# configure sets systemdsystemunitdir and sysusersdir (from systemd.pc, or
# --with-systemdsystemunitdir=DIR / =no, --with-sysusersdir=DIR / =no).

dist_man_MANS = man/l2tpv3d.8 man/l2tpv3ctl.8 man/l2tpv3d.conf.5

# The unit names /usr/sbin/l2tpv3d, /etc/l2tpv3d and /etc/default: rewritten
# for this build's sbindir and sysconfdir, so a /usr/local install starts
# its own daemon with its own configuration.
nodist_noinst_DATA = etc/l2tpv3d.service-installed
etc/l2tpv3d.service-installed: $(top_srcdir)/etc/l2tpv3d.service Makefile
	$(AM_V_GEN)$(MKDIR_P) etc && \
	sed -e 's|/usr/sbin/l2tpv3d|$(sbindir)/l2tpv3d|g' \
	    -e 's|/usr/bin/l2tpv3ctl|$(bindir)/l2tpv3ctl|g' \
	    -e 's|/etc/l2tpv3d/|$(sysconfdir)/l2tpv3d/|g' \
	    -e 's|/etc/default/l2tpv3d|$(sysconfdir)/default/l2tpv3d|g' \
	    $(top_srcdir)/etc/l2tpv3d.service > $@.tmp && mv $@.tmp $@
CLEANFILES += etc/l2tpv3d.service-installed etc/l2tpv3d.service-installed.tmp

l2tpv3dconfdir = $(sysconfdir)/l2tpv3d
defaultdir = $(sysconfdir)/default
bashcompletiondir = $(datadir)/bash-completion/completions

# Files installed under another name than their source's, and configuration
# files: an administrator's copy is never overwritten, and uninstall removes
# only a copy identical to the example.
install-data-local: install-packaging-data
uninstall-local: uninstall-packaging-data

install-packaging-data:
if HAVE_SYSTEMDSYSTEMUNITDIR
	$(MKDIR_P) '$(DESTDIR)$(systemdsystemunitdir)'
	$(INSTALL_DATA) etc/l2tpv3d.service-installed \
		'$(DESTDIR)$(systemdsystemunitdir)/l2tpv3d.service'
endif
if HAVE_SYSUSERSDIR
	$(MKDIR_P) '$(DESTDIR)$(sysusersdir)'
	printf '%s\n' '# The group of the control socket of l2tpv3d: members may run l2tpv3ctl.' \
		'g l2tpv3d -' > '$(DESTDIR)$(sysusersdir)/l2tpv3d.conf'
endif
	$(MKDIR_P) '$(DESTDIR)$(l2tpv3dconfdir)' '$(DESTDIR)$(defaultdir)' \
		'$(DESTDIR)$(bashcompletiondir)'
	@for pair in 'l2tpv3d.conf:$(l2tpv3dconfdir)/l2tpv3d.conf' \
		     'l2tpv3d.default:$(defaultdir)/l2tpv3d'; do \
		src='$(top_srcdir)'/etc/$${pair%%:*}; dst='$(DESTDIR)'$${pair#*:}; \
		if test -f "$$dst"; then echo "keeping $$dst"; \
		else echo " $(INSTALL_DATA) $$src $$dst"; $(INSTALL_DATA) "$$src" "$$dst" || exit 1; fi; \
	done
	$(INSTALL_DATA) '$(top_srcdir)/completion/l2tpv3ctl.bash' \
		'$(DESTDIR)$(bashcompletiondir)/l2tpv3ctl'

uninstall-packaging-data:
	rm -f '$(DESTDIR)$(bashcompletiondir)/l2tpv3ctl'
if HAVE_SYSTEMDSYSTEMUNITDIR
	rm -f '$(DESTDIR)$(systemdsystemunitdir)/l2tpv3d.service'
endif
if HAVE_SYSUSERSDIR
	rm -f '$(DESTDIR)$(sysusersdir)/l2tpv3d.conf'
endif
	@for pair in 'l2tpv3d.conf:$(l2tpv3dconfdir)/l2tpv3d.conf' \
		     'l2tpv3d.default:$(defaultdir)/l2tpv3d'; do \
		src='$(top_srcdir)'/etc/$${pair%%:*}; dst='$(DESTDIR)'$${pair#*:}; \
		if cmp -s "$$src" "$$dst"; then rm -f "$$dst"; fi; \
	done
.PHONY: install-packaging-data uninstall-packaging-data

# The MIB, where net-snmp's tools look for it: $(datadir)/snmp/mibs, so
# /usr/share/snmp/mibs for the package (a /usr/local prefix needs
# `mibdirs +/usr/local/share/snmp/mibs` in snmp.conf).  Installed with the
# subagent that serves it, but in the tarball either way (automake
# distributes dist_ files of every condition), and so are doc/snmp.md and
# the SNMP tests' helpers: src/snmp.mk is read only --with-snmp.
mibsdir = $(datadir)/snmp/mibs
if WITH_SNMP
dist_mibs_DATA = mibs/L2TPV3D-MIB.txt
endif
EXTRA_DIST += doc/snmp.md tests/snmp/lib.sh tests/snmp/mibs

# The load test: finds the installed daemon and CLI on PATH.
dist_pkgdata_SCRIPTS = scripts/tunnel-storm etc/keepalived/l2tpv3d-notify

EXTRA_DIST += etc/l2tpv3d.service etc/l2tpv3d.default completion/l2tpv3ctl.bash

# distcheck installs under a scratch prefix: keep the unit and sysusers
# file there too instead of in the system's directories ($$dc_install_base
# is a variable of distcheck's shell, hence unquoted).
AM_DISTCHECK_CONFIGURE_FLAGS = \
	--with-systemdsystemunitdir=$$dc_install_base/$(systemdsystemunitdir) \
	--with-sysusersdir=$$dc_install_base/$(sysusersdir)

# Every setting the parser accepts is in l2tpv3d.conf(5), every option and
# command in l2tpv3d(8) / l2tpv3ctl(8), and the pages format without warnings.
TESTS += tests/docs/man-coverage.sh tests/docs/import-graph.sh tests/docs/monitoring.sh
dist_noinst_SCRIPTS += tests/docs/man-coverage.sh tests/docs/import-graph.sh tests/docs/monitoring.sh
EXTRA_DIST += etc/monitoring/l2tpv3d-alerts.yml etc/monitoring/l2tpv3d-dashboard.json
EXTRA_DIST += etc/keepalived/keepalived.conf.example

# The .deb built, installed in a throw-away Debian root booted with
# systemd-nspawn: ready, ctl, reload, stop.  Needs root, debootstrap,
# systemd-nspawn and dpkg-buildpackage (exit 77 otherwise); a few minutes.
# Not in `make check`: make check-package, or scripts/check.
PACKAGE_TESTS = tests/package/package-test.sh
dist_noinst_SCRIPTS += $(PACKAGE_TESTS)
check-package:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS="$(PACKAGE_TESTS)" TEST_SUITE_LOG=test-suite-package.log
.PHONY: check-package

# What a package build runs (debian/rules): no root, no namespaces.
PACKAGE_BUILD_TESTS = $(UNIT_TESTS) tests/config-golden.sh tests/docs/man-coverage.sh
check-build:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS="$(PACKAGE_BUILD_TESTS)"
.PHONY: check-build
