#!/usr/bin/env bash
# tests/package/package-test.sh - the Debian package, installed and run by a
# real systemd.
#
#   host                                 throw-away container (systemd-nspawn -b)
#   ----                                 ---------------------------------------
#   dpkg-buildpackage -b  -> .deb  --->  /debs (read-only bind)
#   debootstrap root, cached             root read-only + tmpfs overlay: nothing
#   (once per package set)               persists; its own network namespace
#                                        with only lo (192.0.2.1, 192.0.2.20)
#
# In the container: dpkg -i starts l2tpv3d.service with the packaged example
# configuration, which refuses every tunnel until its LNS part is enabled
# (the test does so, secret set).  It checks the READY=1 / RELOADING=1 /
# STOPPING=1 notifications in systemd's own debug log, the unit's state,
# l2tpv3ctl as root and as a member (and a non-member) of the l2tpv3d group,
# a second daemon (a LAC, started with systemd-run) bringing up a tunnel and a
# session to it, systemctl reload (good and bad file), a crash and the
# automatic restart, then with 5 tunnels of 2 sessions from the LAC:
# systemctl restart, an upgrade (dpkg -i of the same .deb repacked as a
# newer version) and a systemctl restart with a file the new process refuses
# (it runs the previous configuration), each a handover through systemd's
# file descriptor store that the LAC must not notice (show daemon, the journal, the store emptied,
# both sides' tunnel and session lists unchanged, no StopCCN or CDN in the
# LAC's counters); systemctl stop (StopCCN to the LAC: a stop is not taken
# for a restart), a state of another version handed to the binary (refused,
# a fresh start, the reason logged and shown), systemd-analyze verify and
# security, and dpkg --purge.  lintian checks the .deb first.
#
# SNMP: the root has snmpd (Debian's, AgentX master on /var/agentx/master)
# and its tools.  The binary accepts snmp.enabled = true, L2TPV3D-MIB is where
# snmptranslate looks (tests/snmp/mibs, bound in, stands in for the IETF
# modules it imports: Debian's are non-free), the packaged file registers
# nothing with snmpd, and once enabled the service answers snmpget by name.
#
# The kernel here may lack L2TP (no module can be loaded in the container
# anyway): then the first start must fail once, exit 69, naming the way out,
# without a restart loop; /etc/default/l2tpv3d then adds --dataplane null,
# and the output says so.
#
#   tests/package/package-test.sh [--deb FILE] [--keep]
#     --deb FILE   test this .deb instead of building one (also L2TPV3D_DEB)
#     --keep       keep the work directory (build log, journal)
#   L2TPV3D_PKGTEST_CACHE   where debootstrapped roots are kept
#                           (default /var/tmp/l2tpv3d-pkgtest)
#   L2TPV3D_PKGTEST_SUITE   Debian suite of the root (default: the host's)
#   L2TPV3D_PKGTEST_MIRROR  (default http://deb.debian.org/debian)
#
# Exit 77 (SKIPPED) without root, systemd-nspawn, nsenter, jq, debootstrap (when
# no root is cached), or dpkg-buildpackage and the build dependencies (when
# no --deb is given).  About 1.5 minutes with a cached root (the build is
# a third of it), 1 minute more the first time.
set -uo pipefail
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top_srcdir/scripts/lib.sh"

DEB=${L2TPV3D_DEB:-} KEEP=
while [ $# -gt 0 ]; do
	case $1 in
	--deb) DEB=$2; shift ;;
	--keep) KEEP=1 ;;
	-h|--help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) echo "package-test: unknown argument '$1'" >&2; exit 2 ;;
	esac
	shift
done

skip() { echo "SKIPPED: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (systemd-nspawn)"
for t in systemd-nspawn nsenter dpkg-deb jq; do
	command -v $t >/dev/null || skip "$t not installed (Debian: systemd-container, util-linux, dpkg, jq)"
done
if [ -z "$DEB" ]; then
	[ -d "$top_srcdir/debian" ] || skip "no debian/ in $top_srcdir and no --deb"
	command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null ||
		skip "dpkg-buildpackage or debhelper not installed (Debian: dpkg-dev, debhelper)"
	(cd "$top_srcdir" && dpkg-checkbuilddeps) >/dev/null 2>&1 ||
		skip "build dependencies missing: $(cd "$top_srcdir" && dpkg-checkbuilddeps 2>&1 | sed 's/.*Unmet build dependencies: //')"
else
	[ -r "$DEB" ] || { echo "package-test: $DEB: not readable" >&2; exit 2; }
	DEB=$(readlink -f "$DEB")
fi

CACHE=${L2TPV3D_PKGTEST_CACHE:-/var/tmp/l2tpv3d-pkgtest}
SUITE=${L2TPV3D_PKGTEST_SUITE:-$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")}
MIRROR=${L2TPV3D_PKGTEST_MIRROR:-http://deb.debian.org/debian}
W=$(mktemp -d /var/tmp/l2tpv3d-pkgtest.XXXXXX)
NSPID= PID1=
cleanup() {
	if [ -n "$NSPID" ] && kill -0 "$NSPID" 2>/dev/null; then
		# nspawn turns SIGTERM into a clean poweroff of the container
		kill -TERM "$NSPID" 2>/dev/null
		for _ in $(seq 100); do kill -0 "$NSPID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$NSPID" 2>/dev/null
	fi
	if [ -n "$KEEP" ] || [ "$TESTS_FAIL" != 0 ]; then
		echo "work directory kept: $W"
	else
		rm -rf "$W"
	fi
}
trap cleanup EXIT

# ---- the .deb -------------------------------------------------------------
mkdir -p "$W/debs"
if [ -z "$DEB" ]; then
	# the tracked and untracked-but-not-ignored files: no build trees, no
	# generated autotools files (dh_autoreconf makes them)
	mkdir "$W/src"
	if git -C "$top_srcdir" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$top_srcdir" ls-files -co --exclude-standard -z |
			(cd "$top_srcdir" && xargs -0 tar -cf - --no-recursion) | tar -xf - -C "$W/src"
	else
		tar -C "$top_srcdir" --exclude='./build*' -cf - . | tar -xf - -C "$W/src"
	fi
	t0=$SECONDS
	# the unit tests ran in make check already: nocheck keeps this short
	(cd "$W/src" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
		dpkg-buildpackage -us -uc -b) >"$W/build.log" 2>&1
	rc=$?
	log_test $rc "dpkg-buildpackage -b builds the package ($((SECONDS - t0)) s)"
	[ $rc = 0 ] || { tail -30 "$W/build.log"; exit 1; }
	mv "$W"/l2tpv3d_*.deb "$W/debs/"
else
	cp "$DEB" "$W/debs/"
fi
DEB=$(ls "$W"/debs/*.deb | head -1)
echo "# package: $(dpkg-deb -f "$DEB" Package) $(dpkg-deb -f "$DEB" Version) ($(du -k "$DEB" | cut -f1) KiB)"

# ---- lintian: no error; warnings and notes listed -----------------------------
if command -v lintian >/dev/null; then
	lintian --fail-on error --display-info "$DEB" 2>&1 | grep -v "root privileges" >"$W/lintian.log"
	rc=${PIPESTATUS[0]}
	sed 's/^/# lintian: /' "$W/lintian.log"
	log_test $rc "lintian: no error ($(grep -c '^W:' "$W/lintian.log") warnings, $(grep -c '^I:' "$W/lintian.log") notes)"
else
	echo "# lintian not installed: not run"
fi

# ---- the root: Debian minbase, systemd, and the package's dependencies -------
# (first alternative of each, without versions); cached per package set.
deps=$(dpkg-deb -f "$DEB" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/[[:space:]]//g' |
	grep -v '^$' | sort -u | tr '\n' ',')
# snmpd and snmp (snmpget, snmptranslate): the SNMP checks' master and tools
include="systemd,systemd-sysv,dbus,iproute2,snmpd,snmp,${deps%,}"
ROOT=$CACHE/$SUITE-$(echo "$include" | md5sum | cut -c1-12)
if [ ! -e "$ROOT/.complete" ]; then
	command -v debootstrap >/dev/null || skip "debootstrap not installed and no root cached in $CACHE"
	mkdir -p "$CACHE" && rm -rf "$ROOT.tmp"
	t0=$SECONDS
	debootstrap --variant=minbase --include="$include" "$SUITE" "$ROOT.tmp" "$MIRROR" \
		>"$W/debootstrap.log" 2>&1
	rc=$?
	[ $rc = 0 ] || { tail -5 "$W/debootstrap.log"; rm -rf "$ROOT.tmp"; skip "debootstrap $SUITE from $MIRROR failed"; }
	mv "$ROOT.tmp" "$ROOT" && touch "$ROOT/.complete"
	# roots of earlier package sets (about 250 MB each) are not needed again
	for old in "$CACHE/$SUITE"-*; do
		[ "$old" = "$ROOT" ] || [ ! -e "$old/.complete" ] || rm -rf "$old"
	done
	echo "# debootstrapped $SUITE into $ROOT ($((SECONDS - t0)) s)"
fi

# ---- boot -------------------------------------------------------------------
cp -r "$top_srcdir/tests/snmp/mibs" "$W/stand-in-mibs"
t0=$SECONDS
systemd-nspawn -q -D "$ROOT" --volatile=overlay --private-network --register=no --keep-unit \
	--machine="l2tpv3d-pkgtest-$(rand_suffix)" --bind-ro="$W/debs:/debs" \
	--bind-ro="$W/stand-in-mibs:/stand-in-mibs" \
	-b -- systemd.firstboot=off >"$W/console.log" 2>&1 &
NSPID=$!
find_pid1() { PID1=$(pgrep -P "$NSPID" -x systemd | head -1); [ -n "$PID1" ]; }
wait_until 20 find_pid1
# everything below runs inside the container
in_ct() { nsenter -t "$PID1" -a -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }
booted() {
	local s
	s=$(in_ct systemctl is-system-running 2>/dev/null)
	[ "$s" = running ] || [ "$s" = degraded ]
}
wait_until 60 booted
rc=$?
log_test $rc "the container boots systemd $(in_ct systemctl --version 2>/dev/null | awk 'NR==1{print $2}') ($((SECONDS - t0)) s)"
if [ $rc != 0 ]; then
	# nspawn itself may be what this host refuses
	kill -0 "$NSPID" 2>/dev/null || { tail -5 "$W/console.log"; skip "systemd-nspawn cannot boot a container here"; }
	tail -20 "$W/console.log"; exit 1
fi
# systemd logs every notification it receives at debug level
in_ct systemd-analyze log-level debug
journal() { in_ct journalctl -q --no-pager -o cat "$@"; }
# in_journal PATTERN: the daemon's journal has it.  Not `journal | grep -q`:
# grep leaving at the first match kills journalctl with SIGPIPE, which
# pipefail turns into a failure whenever the match is not near the end.
in_journal() { journal -u l2tpv3d.service | grep -c -- "$1" >/dev/null; }
# has GREP-ARGS: stdin matches, read to its end (for the same reason: every
# `CMD | grep -q` here is `CMD | has`)
has() { grep -c "$@" >/dev/null; }
# pid_logged PID PATTERN: PID's lines have it.  By PID, not by unit, for what
# a process logs first: journald may take the first lines of a stdout
# stream for init.scope's (the stream opened before systemd moved the
# process into the unit's cgroup: seen with systemd 252 in nspawn).
pid_logged() { journal _PID="$1" | grep -c -- "$2" >/dev/null; }
notified() {	# notified PID WHAT: systemd got WHAT from PID
	in_journal "Got notification message from PID $1 ($2"
}
prop() { in_ct systemctl show -p "$1" --value l2tpv3d.service; }
ctl() { in_ct l2tpv3ctl "$@"; }

# ---- install: as an operator would, nothing prepared -----------------------------
MODE=kernel
if [ ! -d /sys/module/l2tp_netlink ]; then
	MODE=null
	echo "# this kernel has no L2TP (l2tp_netlink not loaded): the first start fails, then --dataplane null"
else
	# the example's bridged sessions need their bridge
	in_ct ip link add br-cust type bridge
fi
# the example LNS accepts 192.0.2.0/24; the LAC below comes from .20
in_ct ip addr add 192.0.2.1/32 dev lo
in_ct ip addr add 192.0.2.20/32 dev lo
# snmpd runs from boot; what an operator adds so that a community sees the
# daemon's subtree (doc/snmp.md), in place before the daemon starts: a
# subagent that were on would register at once
in_ct sh -c 'echo "rocommunity pkgtest 127.0.0.1 .1.3.6.1.4.1.99999" > /etc/snmp/snmpd.conf.d/pkgtest.conf' &&
	in_ct systemctl restart snmpd.service && wait_until 5 in_ct test -S /var/agentx/master
log_test $? "snmpd runs, AgentX master on /var/agentx/master, a community for .1.3.6.1.4.1.99999"
# snmpget by MIB name: L2TPV3D-MIB from where net-snmp looks by default
SNMPGET=(snmpget -Oqv -v2c -c pkgtest -t 1 -r 1 -M +/stand-in-mibs -m L2TPV3D-MIB 127.0.0.1)

in_ct dpkg -i --force-confold /debs/"$(basename "$DEB")" >"$W/dpkg.log" 2>&1
log_test $? "dpkg -i installs the package"
in_ct getent group l2tpv3d >/dev/null
log_test $? "postinst created the group l2tpv3d (sysusers)"
[ "$(in_ct systemctl is-enabled l2tpv3d.service)" = enabled ]
log_test $? "l2tpv3d.service is enabled"
active() { [ "$(prop ActiveState)/$(prop SubState)" = active/running ]; }
if [ $MODE = null ]; then
	# the packaged file asks for the kernel data plane, which is missing
	failed() { [ "$(prop ActiveState)" = failed ]; }
	wait_until 10 failed && [ "$(prop ExecMainStatus)" = 69 ]
	log_test $? "no L2TP: the first start fails (status $(prop ExecMainStatus), EX_UNAVAILABLE 69)"
	sleep 7		# RestartSec=5s, and some
	[ "$(prop NRestarts)" = 0 ] && failed
	log_test $? "no restart loop: still failed, NRestarts $(prop NRestarts) after 7 s (RestartPreventExitStatus=)"
	msg=$(journal -u l2tpv3d.service | grep 'error: data plane kernel' | head -1)
	grep -qF 'dataplane = "null"' <<<"$msg" && grep -qF '/etc/default/l2tpv3d' <<<"$msg"
	log_test $? "the journal names dataplane = \"null\" and /etc/default/l2tpv3d"
	echo "# $msg"
	in_ct sh -c 'echo L2TPV3D_OPTS=\"--dataplane null\" > /etc/default/l2tpv3d' &&
		in_ct systemctl restart l2tpv3d.service
	wait_until 10 active
	log_test $? "with --dataplane null in /etc/default/l2tpv3d: active (running), READY=1"
else
	wait_until 10 active
	log_test $? "postinst started it: active (running) (Type=notify: only after READY=1)"
fi
PID=$(prop MainPID)
wait_until 5 notified "$PID" "READY=1"	# journald may lag a little
log_test $? "systemd got READY=1 from the daemon (PID $PID)"
prop StatusText | has "data plane $MODE"
log_test $? "status text from the daemon: '$(prop StatusText)'"

out=$(in_ct systemd-analyze verify --man=no /lib/systemd/system/l2tpv3d.service 2>&1)
[ -z "$out" ]
log_test $? "systemd-analyze verify: no complaint"
[ -z "$out" ] || echo "$out" | sed 's/^/  /'
nmissing=0
for f in /usr/share/man/man8/l2tpv3d.8.gz /usr/share/man/man8/l2tpv3ctl.8.gz \
	 /usr/share/man/man5/l2tpv3d.conf.5.gz /usr/share/bash-completion/completions/l2tpv3ctl \
	 /usr/share/l2tpv3d/tunnel-storm /etc/default/l2tpv3d; do
	in_ct test -e "$f" && continue
	echo "  missing: $f"
	nmissing=$((nmissing + 1))
done
[ $nmissing = 0 ]
log_test $? "man pages, completion, tunnel-storm and /etc/default/l2tpv3d installed"
# the pages README and the man pages send operators to (dh_compress gzips
# the larger ones)
ndocs=0
for f in README.md doc/kernel-dataplane.md doc/ctl-protocol.md doc/security.md doc/snmp.md; do
	d=/usr/share/doc/l2tpv3d/${f##*/}
	in_ct test -e "$d" || in_ct test -e "$d.gz" || { echo "  missing: $d"; break; }
	ndocs=$((ndocs + 1))
done
[ $ndocs = 5 ]
log_test $? "README.md and doc/*.md (kernel-dataplane.md too) in /usr/share/doc/l2tpv3d"
in_ct systemd-analyze security --no-pager l2tpv3d.service >"$W/security.txt" 2>&1
echo "# $(grep -i 'overall exposure' "$W/security.txt")"

# ---- the control socket -----------------------------------------------------------
out=$(ctl show daemon)
rc=$?
[ $rc = 0 ] && grep -q "^pid: *$PID$" <<<"$out" && grep -q "^dataplane: *$MODE$" <<<"$out" &&
	grep -q '^config: */etc/l2tpv3d/l2tpv3d.conf$' <<<"$out"
log_test $? "l2tpv3ctl show daemon answers (pid, data plane, the packaged config)"
[ "$(in_ct stat -c '%a %G' /run/l2tpv3d/l2tpv3d.ctl)" = "660 l2tpv3d" ]
log_test $? "control socket /run/l2tpv3d/l2tpv3d.ctl: mode 660, group l2tpv3d"
in_ct useradd -M -N -G l2tpv3d pkgtest-op && in_ct useradd -M -N pkgtest-other &&
	in_ct runuser -u pkgtest-op -- l2tpv3ctl show daemon >/dev/null
log_test $? "a member of the group l2tpv3d may use l2tpv3ctl"
out=$(in_ct runuser -u pkgtest-other -- l2tpv3ctl show daemon 2>&1)
[ $? = 1 ] && grep -q "Permission denied" <<<"$out"
log_test $? "anyone else is refused ($(echo "$out" | head -1 | cut -c1-60)...)"

# ---- SNMP: built in, the MIB installed, the subagent off until enabled ------------------
in_ct sh -c 'printf "snmp = {\n  enabled = true;\n};\n" > /run/snmp-on.conf'
out=$(in_ct l2tpv3d -n -f /run/snmp-on.conf 2>&1)
log_test $? "the packaged l2tpv3d has SNMP: -n accepts snmp.enabled = true ($out)"
in_ct test -f /usr/share/snmp/mibs/L2TPV3D-MIB.txt
log_test $? "L2TPV3D-MIB installed in /usr/share/snmp/mibs"
# found by module name on net-snmp's default path (the stand-ins are appended to it)
out=$(in_ct snmptranslate -M +/stand-in-mibs -m L2TPV3D-MIB -On L2TPV3D-MIB::l2tpv3dVersion 2>&1)
[ "$out" = .1.3.6.1.4.1.99999.1.1.1 ]
log_test $? "snmptranslate finds it: L2TPV3D-MIB::l2tpv3dVersion is $out"
# snmpd was there before the daemon started: a subagent that were on
# would have registered by now, and logged
out=$(in_ct "${SNMPGET[@]}" L2TPV3D-MIB::l2tpv3dVersion.0 2>&1)
# no snmp: line among the daemon's own (by PID: see pid_logged), which are there
grep -q "No Such Object" <<<"$out" && wait_until 5 pid_logged "$PID" "started: version" &&
	! pid_logged "$PID" "snmp:"
log_test $? "the packaged file leaves the subagent off: nothing registered with snmpd ('$out'), no snmp: line"

# ---- the packaged file refuses a LAC; its LNS example, enabled, accepts it ---------
in_ct sh -c 'cat > /run/lac.conf' <<'EOF'
global = { listen = []; hostname = "lac"; dataplane = "null";
           ctl_socket = "/run/lac/lac.ctl"; state_dir = "/run/lac"; };
# notice a dead LNS within seconds, not minutes
tunnel_profiles = ( { name = "default"; hello_interval = 1; retransmit_initial = 0.2;
                      retransmit_cap = 0.5; max_retries = 3;
                      digest = "sha1"; secret = "pkgtest-secret"; } );
tunnels = ( { name = "to-lns"; peer = "192.0.2.1"; local = "192.0.2.20";
              sessions = ( { name = "s1"; } ); } );
EOF
lac_start() { in_ct systemd-run -q --unit="$1" -p Type=notify /usr/sbin/l2tpv3d -F -f /run/lac.conf; }
lac() { in_ct l2tpv3ctl -s /run/lac/lac.ctl "$@"; }
lac_start pkgtest-lac0
lns_refused() { in_journal 'SCCRQ from 192\.0\.2\.20.* refused'; }
# (no tunnel established, as a count: a failing l2tpv3ctl is no absence)
wait_until 10 lns_refused && ctl -j show daemon | jq -e '.tunnels_established == 0' >/dev/null
log_test $? "the packaged file refuses every tunnel (no peers): the LAC is refused"
in_ct systemctl stop pkgtest-lac0
# what the file's header tells an LNS's operator: the #+ lines, a secret
in_ct sed -i -e '/^peers = ($/,/^);$/d' -e 's/^#+ //' \
	-e 's/secret = "";\( *\)# set it/secret = "pkgtest-secret";\1# set it/' \
	/etc/l2tpv3d/l2tpv3d.conf
in_ct systemctl reload l2tpv3d.service
log_test $? "its LNS example enabled, secret set: systemctl reload succeeds (rc 0)"
lac_start pkgtest-lac
lns_up() {
	ctl tunnel list | has ' established .*192\.0\.2\.20:' &&
		ctl session list | has ' established '
}
wait_until 10 lns_up
log_test $? "a LAC's static tunnel and session come up on it (sha1 digest)"
TID=$(ctl tunnel list | awk '/ established /{print $1; exit}')

# ---- reload ---------------------------------------------------------------------------
in_ct sed -i 's/hostname = "lns1";/hostname = "lns-reloaded";/' /etc/l2tpv3d/l2tpv3d.conf
# the reload above sent RELOADING=1 already: this one must send another
nreloading() { journal -u l2tpv3d.service | grep -c "Got notification message from PID $PID (RELOADING=1"; }
n0=$(nreloading)
in_ct systemctl reload l2tpv3d.service
rc=$?
reloaded() { ctl show daemon | has '^hostname: *lns-reloaded$'; }
[ $rc = 0 ] && wait_until 5 reloaded
log_test $? "systemctl reload: the new hostname is applied"
reload_notified() { [ "$(nreloading)" -gt "$n0" ] && active; }
wait_until 5 reload_notified && [ "$(prop MainPID)" = "$PID" ] &&
	ctl tunnel list | has "^$TID .* established "
log_test $? "RELOADING=1 then READY=1 (active again), same PID, the tunnel untouched"
in_ct cp /etc/l2tpv3d/l2tpv3d.conf /run/good.conf
in_ct sh -c 'echo "global = { udp_prot = 1; };" > /etc/l2tpv3d/l2tpv3d.conf'
in_ct systemctl reload l2tpv3d.service
rc=$?
refused() { in_journal "reload: .*udp_prot.*keeping the running configuration"; }
wait_until 5 refused && active && ctl tunnel list | has "^$TID .* established " && reloaded
log_test $? "a bad file at reload is refused, the daemon stays active with its tunnel and config"
[ $rc != 0 ]
log_test $? "systemctl reload of a refused file fails (rc $rc), through l2tpv3ctl reload"
in_ct cp /run/good.conf /etc/l2tpv3d/l2tpv3d.conf

# ---- crash: Restart=on-failure, and the state directory survives ---------------------
# Guard: with no main PID, "kill -KILL 0" would kill this test's own
# process group (nsenter keeps it) and whatever runs the test.
case $PID in ''|0|1|*[!0-9]*) echo "# no main PID ('$PID'): not killing" ;;
*) in_ct sh -c "kill -KILL $PID" ;;
esac
restarted() { active && [ "$(prop MainPID)" != "$PID" ] && [ "$(prop MainPID)" != 0 ]; }
t0=$SECONDS
wait_until 15 restarted
log_test $? "killed with SIGKILL: systemd restarts it ($((SECONDS - t0)) s, RestartSec=5s)"
PID=$(prop MainPID)
t0=$SECONDS
wait_until 40 lns_up
log_test $? "after the restart the LAC's tunnel comes back ($((SECONDS - t0)) s: its static tunnel retry)"

# ---- restart and upgrade: the pseudowires stay -----------------------------------------
# 5 tunnels of 2 sessions from the LAC: the static one gets a second
# session, 4 more come from its control socket.
{ echo "session create tunnel name to-lns name s2"
  for i in 2 3 4 5; do
	echo "tunnel create peer 192.0.2.1 local 192.0.2.20 name t$i"
	echo "session create tunnel name t$i name t$i-a"
	echo "session create tunnel name t$i name t$i-b"
  done; } | lac -q -b - >"$W/lac-batch.log"
ctlj() { ctl -j "$@"; }
lacj() { lac -j "$@"; }
lns_all_up() {
	ctlj show daemon | jq -e '.tunnels_established == 5 and .sessions_established == 10' >/dev/null
}
wait_until 10 lns_all_up
log_test $? "the LAC adds 4 tunnels and 3 sessions: 5 tunnels, 10 sessions on the LNS"
# What a restart must not move: everything but uptimes and counters.
snapshot() {	# snapshot CTL: its tunnel and session lists, sorted by ID
	{ $1 tunnel list | jq -S '.tunnels | sort_by(.tunnel_id)'
	  $1 session list | jq -S '.sessions | sort_by(.session_id)'; } |
		jq -S 'walk(if type == "object" then del(.uptime, .counters) else . end)'
}
# The descriptors systemd holds for the unit (NFileDescriptorStore from
# systemd 254 on; before, only systemd-analyze dump says it).
fdstore_count() {
	local n
	n=$(prop NFileDescriptorStore)
	[ -n "$n" ] || n=$(in_ct systemd-analyze dump | awk '/^-> Unit /{u = $3 == "l2tpv3d.service:"}
		u && /File Descriptor Store Current:/{n = $NF} END{print n}')
	echo "$n"
}
# The LAC's count of message type $2 received (or sent, $3 = msgs_out) on
# tunnel $1; nothing when it cannot say.
lac_msgs() { lacj tunnel show "$1" | jq ".counters.${3:-msgs_in}.$2 // 0"; }
jcount() { journal -u l2tpv3d.service | grep -c -- "$1"; }
# the daemon's and systemd's lines of one handover
HANDOVER_LINES=("restart: handing over 5 tunnels, 10 sessions (systemd's file descriptor store)"
	"restart: state stored; exiting for the next process"
	"Added fd .* (l2tpv3d-state) to fd store" "Added fd .* (l2tpv3d-bundle) to fd store")
SEEN=()		# their counts before a handover
journal_moved() {	# one more of each line than before
	local i
	for i in "${!HANDOVER_LINES[@]}"; do
		[ "$(jcount "${HANDOVER_LINES[$i]}")" -gt "${SEEN[$i]}" ] || return 1
	done
}
LAC_ST=$(lacj tunnel show name to-lns | jq -r .tunnel_id)
lac_hellos_past() { [ "$(lac_msgs "$LAC_ST" HELLO msgs_out)" -gt "$1" ]; }
# handed_over WHAT: WHAT (a command in the container) restarts the LNS;
# every tunnel and session must be adopted, the LAC must not notice.
handed_over() {
	local what=$1 pid0 r0 hello0 n t l bad=
	snapshot ctlj >"$W/lns-before.json"
	snapshot lacj >"$W/lac-before.json"
	jq -se 'map(length) == [5, 10]' "$W/lns-before.json" >/dev/null &&
		jq -se 'map(length) == [5, 10]' "$W/lac-before.json" >/dev/null
	log_test $? "$what: before, both sides list 5 tunnels and 10 sessions"
	pid0=$(prop MainPID)
	r0=$(ctlj show daemon | jq .start.restarts)
	hello0=$(lac_msgs "$LAC_ST" HELLO msgs_out)
	SEEN=()
	for l in "${HANDOVER_LINES[@]}"; do SEEN+=("$(jcount "$l")"); done
	t0=$(date +%s%N)
	in_ct sh -c "$what" >>"$W/restart.log" 2>&1
	rc=$?
	log_test $rc "$what (rc $rc, $((($(date +%s%N) - t0) / 1000000)) ms)"
	wait_until 5 restarted
	log_test $? "$what: active again, PID $pid0 -> $(prop MainPID)"
	n=$((r0 + 1))
	ctlj show daemon | jq -e --argjson n $n '.start | .start == "restarted" and .via == "systemd" and
		.restarts == $n and .tunnels_adopted == 5 and .sessions_adopted == 10 and
		.tunnels_dropped == 0 and .restarting == false' >/dev/null
	log_test $? "$what: show daemon says restarted via systemd (restart $n), 5 tunnels, 10 sessions adopted"
	# journald may lag a little
	wait_until 5 journal_moved &&
		pid_logged "$(prop MainPID)" "restart: adopted 5 tunnels, 10 sessions (systemd, restart $n)"
	log_test $? "$what: the journal says 'handing over', 'state stored', 'adopted'; systemd 'Added fd' twice"
	# after the presence of both in the store (above): its absence
	[ "$(fdstore_count)" = 0 ]
	log_test $? "$what: the new process took both out of systemd's store (now $(fdstore_count))"
	snapshot ctlj >"$W/lns-after.json"
	diff "$W/lns-before.json" "$W/lns-after.json" >"$W/diff.txt"
	log_test $? "$what: the LNS's tunnel and session lists as they were $(head -c 300 "$W/diff.txt")"
	# the LAC gives up on a silent LNS within 2 s (max_retries 3), and
	# sends no new HELLO while one is unacknowledged (msgs_out counts no
	# retransmission): 3 more HELLOs, 3 s, prove the new process answers
	wait_until 10 lac_hellos_past $((hello0 + 3))
	log_test $? "$what: the LAC's HELLOs go on being acknowledged ($hello0 -> $(lac_msgs "$LAC_ST" HELLO msgs_out) sent)"
	snapshot lacj >"$W/lac-after.json"
	diff "$W/lac-before.json" "$W/lac-after.json" >"$W/diff.txt"
	log_test $? "$what: the LAC's 5 tunnels and 10 sessions still established, same IDs $(head -c 300 "$W/diff.txt")"
	# presence first: every tunnel's counters, with the ICRPs of its sessions
	n=0
	for t in $(jq -rs '.[0][].tunnel_id' "$W/lac-after.json"); do
		n=$((n + 1))
		[ "$(lac_msgs "$t" ICRP)" -gt 0 ] && [ "$(lac_msgs "$t" StopCCN)" = 0 ] &&
			[ "$(lac_msgs "$t" CDN)" = 0 ] && continue
		echo "  LAC tunnel $t received: $(lacj tunnel show "$t" | jq -c .counters.msgs_in)"
		bad=1
	done
	[ $n = 5 ] && [ -z "$bad" ]
	log_test $? "$what: the LAC received ICRPs but no StopCCN and no CDN on its $n tunnels"
}
handed_over "systemctl restart l2tpv3d.service"
PID=$(prop MainPID)

# An upgrade: the same files as a newer version (dpkg-deb -R/-b, no
# rebuild); dh_installsystemd's postinst restarts the unit.
V1=$(dpkg-deb -f "$DEB" Version)
V2=$V1+1
rm -rf "$W/upgrade" && dpkg-deb -R "$DEB" "$W/upgrade" &&
	sed -i "s/^Version: .*/Version: $V2/" "$W/upgrade/DEBIAN/control" &&
	dpkg-deb -b "$W/upgrade" "$W/debs/upgrade.deb" >/dev/null
log_test $? "an upgrade package: $V1 repacked as $V2"
handed_over "dpkg -i --force-confold /debs/upgrade.deb"
[ "$(in_ct dpkg-query -W -f '${Version}' l2tpv3d)" = "$V2" ] && [ "$(prop MainPID)" != "$PID" ]
log_test $? "after the upgrade dpkg-query says $(in_ct dpkg-query -W -f '${Version}' l2tpv3d), the PID changed ($PID -> $(prop MainPID))"
PID=$(prop MainPID)

# ---- a restart with a file the new process refuses: the tunnels stay ----------------------
# (no l2tpv3d -n first: systemd checks nothing) the new process runs the
# configuration the previous one ran, says so, and a reload of the fixed file ends it
CONF=/etc/l2tpv3d/l2tpv3d.conf
in_ct cp "$CONF" /run/good.conf &&
	in_ct sed -i 's/^global = {$/global = { no_such_setting = 1;/' "$CONF" &&
	! in_ct l2tpv3d -n -f "$CONF" >/dev/null 2>&1
log_test $? "$CONF broken: an unknown setting (l2tpv3d -n refuses it)"
handed_over "systemctl restart l2tpv3d.service"
# (journald writes what it is sent a moment later: its line is waited for)
refused_at_err() { journal -u l2tpv3d.service -p err | has "configuration file $CONF refused: .*no_such_setting"; }
ctlj show daemon | jq -e --arg f "$CONF" '.config_source == "previous" and
	(.config_refused | startswith($f + ":") and test("no_such_setting"))' >/dev/null &&
	ctl metrics | has -x 'l2tpv3d_config_file_refused 1' &&
	wait_until 30 refused_at_err &&
	[ "$(prop ActiveState)" = active ]
log_test $? "the refused file: show daemon config_source previous ($(ctlj show daemon | jq -c '[.config_source, .config_refused]')), the metric $(ctl metrics | grep '^l2tpv3d_config_file_refused '), the journal at err; the unit active"
in_ct cp /run/good.conf "$CONF" && in_ct systemctl reload l2tpv3d.service &&
	ctlj show daemon | jq -e '.config_source == "file" and (has("config_refused") | not)' >/dev/null &&
	ctl metrics | has -x 'l2tpv3d_config_file_refused 0' && lns_all_up
log_test $? "the file fixed, systemctl reload: config_source file, the metric 0, 5 tunnels and 10 sessions on"
PID=$(prop MainPID)

# ---- stop -------------------------------------------------------------------------------
LAC_PID=$(in_ct systemctl show -p MainPID --value pkgtest-lac.service)
# the LAC's tunnels closed by a StopCCN: its peer's result code 6
lac_stopccns() { journal _PID="$LAC_PID" | grep -c "down: peer 192\.0\.2\.1, result 6 (requester shutting down)"; }
stopccns0=$(lac_stopccns) handovers0=$(jcount "restart: handing over")
t0=$SECONDS
in_ct systemctl stop l2tpv3d.service
rc=$?
[ $rc = 0 ] && [ "$(prop ActiveState)" = inactive ] && [ "$(prop Result)" = success ]
log_test $? "systemctl stop: inactive, result success ($((SECONDS - t0)) s)"
wait_until 5 notified "$PID" "STOPPING=1"
log_test $? "systemd got STOPPING=1"
lac_down() { lac -j show daemon | jq -e '.tunnels_established == 0' >/dev/null; }
logged_stop() { in_journal "info: stopped"; }
wait_until 5 lac_down && wait_until 5 logged_stop
log_test $? "the daemon closed its tunnel (the LAC's is down) and logged 'stopped'"
lac_got_stopccns() { [ "$(lac_stopccns)" -ge $((stopccns0 + 5)) ]; }
wait_until 5 lac_got_stopccns && pid_logged "$PID" "signal 15: closing 5 tunnels" &&
	[ "$(jcount "restart: handing over")" = "$handovers0" ]
log_test $? "a stop is no restart: 'closing 5 tunnels', each a StopCCN to the LAC (result 6), no handover"
in_ct test -d /run/l2tpv3d && ! in_ct test -e /run/l2tpv3d/l2tpv3d.ctl
log_test $? "/run/l2tpv3d kept (RuntimeDirectoryPreserve), control socket removed"

# ---- a state it cannot read: a fresh start, the reason logged ------------------------------
# No way to put a state of our making in systemd's store: the other way in,
# $L2TPV3D_HANDOVER (l2tpv3ctl restart's exec), with a header of version 99
# ("l2tpv3d" 0x01, u32 version, u32 descriptors, u64 body length, body, CRC).
printf 'l2tpv3d\001\143\000\000\000\000\000\000\000\004\000\000\000\000\000\000\000abcd\000\000\000\000' |
	in_ct sh -c 'cat > /run/v99.state && : > /run/empty.bundle'
in_ct sh -c 'cat > /run/v99.conf' <<'EOF'
global = { listen = []; hostname = "v99"; dataplane = "null";
           ctl_socket = "/run/v99/v99.ctl"; state_dir = "/run/v99"; };
EOF
in_ct systemd-run -q --unit=pkgtest-v99 -p Type=notify -E L2TPV3D_HANDOVER=7,8 sh -c \
	'exec /usr/sbin/l2tpv3d -F -f /run/v99.conf 7</run/v99.state 8</run/empty.bundle'
log_test $? "the binary started with a state of version 99 (\$L2TPV3D_HANDOVER): READY=1"
v99() { in_ct l2tpv3ctl -s /run/v99/v99.ctl -j show daemon; }
wait_until 5 pid_logged "$(in_ct systemctl show -p MainPID --value pkgtest-v99.service)" \
	"restart: the handed-over state is not used (state format version 99, this binary reads 1 to 3)"
log_test $? "the journal: 'the handed-over state is not used (state format version 99, this binary reads 1 to 3)'"
v99 | jq -e '.start | .start == "fell-back" and .via == "exec" and .fallbacks == 1 and
	(.reason | test("state format version 99, this binary reads 1 to 3"))' >/dev/null
log_test $? "show daemon: fell-back, the reason given ($(v99 | jq -c .start.reason))"
[ "$(in_ct systemctl is-active pkgtest-v99.service)" = active ] && v99 | jq -e '.pid > 0' >/dev/null
log_test $? "and it runs on as a fresh start (active, answering)"
in_ct systemctl stop pkgtest-v99.service

# ---- SNMP enabled: the service registers with snmpd -------------------------------------
in_ct sed -i '/^snmp = {$/,/^};$/s/enabled = false;/enabled = true;/' /etc/l2tpv3d/l2tpv3d.conf &&
	in_ct grep -q "^  enabled = true;" /etc/l2tpv3d/l2tpv3d.conf && in_ct systemctl start l2tpv3d.service
log_test $? "snmp.enabled = true in /etc/l2tpv3d/l2tpv3d.conf: systemctl start succeeds"
PID=$(prop MainPID)
snmp_version() { [ "$(in_ct "${SNMPGET[@]}" L2TPV3D-MIB::l2tpv3dVersion.0 2>/dev/null)" = "$1" ]; }
version=$(ctl -j show daemon | jq -r .version)
wait_until 10 snmp_version "$version"
log_test $? "snmpget L2TPV3D-MIB::l2tpv3dVersion.0 through snmpd: $version, as show daemon says"
out=$(in_ct "${SNMPGET[@]}" L2TPV3D-MIB::l2tpv3dHostName.0 2>&1)
[ "$out" = "$(ctl -j show daemon | jq -r .hostname)" ]
log_test $? "l2tpv3dHostName.0 is the configured host name ($out)"
wait_until 5 pid_logged "$PID" "snmp: .*AgentX subagent connected"
log_test $? "the journal: '$(journal _PID="$PID" | grep -m1 'snmp:')'"

# ---- purge -------------------------------------------------------------------------------
in_ct systemctl start l2tpv3d.service && in_ct dpkg --purge l2tpv3d >>"$W/dpkg.log" 2>&1 &&
	! in_ct test -e /etc/l2tpv3d/l2tpv3d.conf && ! in_ct test -e /usr/sbin/l2tpv3d &&
	[ "$(prop LoadState)" = not-found ]
log_test $? "dpkg --purge stops the running service and removes everything"

journal -b >"$W/journal.txt" 2>&1
in_ct journalctl -q --no-pager -o short-precise -u l2tpv3d.service -u pkgtest-lac0.service \
	-u pkgtest-lac.service -u pkgtest-v99.service >"$W/daemons.log" 2>&1
[ "$TESTS_FAIL" = 0 ] || { echo "--- daemons' log (last 30 lines)"; grep -v 'debug:' "$W/daemons.log" | tail -30; }
echo "$TESTS_OK passed, $TESTS_FAIL failed"
[ "$TESTS_FAIL" = 0 ]
