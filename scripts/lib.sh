# scripts/lib.sh - shell helpers shared by demo, check, tunnel-storm and the
# integration tests.  Source it; it defines functions only.

# Prints to stderr and exits.
die() { echo "${0##*/}: $*" >&2; exit 1; }

# wait_until TIMEOUT_S CMD...: polls CMD every 50 ms until it succeeds, for
# at most TIMEOUT_S times $DEADLINE_SCALE seconds (the kernel tests, in an
# emulated guest, scale every deadline; a wait on a condition costs nothing
# more when it is met).
wait_until() {
	local deadline=$(( $(date +%s%N) + ${1} * ${DEADLINE_SCALE:-1} * 1000000000 )); shift
	while ! "$@" >/dev/null 2>&1; do
		[ "$(date +%s%N)" -lt "$deadline" ] || return 1
		sleep 0.05
	done
}

# need_root: integration tests and the demo create network namespaces.
need_root() { [ "$(id -u)" = 0 ] || die "must run as root (network namespaces)"; }

# setup_ns_pair NS_A NS_B ADDR_A ADDR_B [ADDR6_A ADDR6_B]: two namespaces
# joined by a veth pair, addresses on /24 (and /64).
setup_ns_pair() {
	local a=$1 b=$2
	ip netns add "$a" && ip netns add "$b" || return 1
	ip link add veth0 netns "$a" type veth peer name veth1 netns "$b" || return 1
	ip -n "$a" addr add "$3/24" dev veth0 && ip -n "$b" addr add "$4/24" dev veth1 || return 1
	if [ -n "${5:-}" ]; then
		ip -n "$a" addr add "$5/64" dev veth0 nodad && ip -n "$b" addr add "$6/64" dev veth1 nodad || return 1
	fi
	ip -n "$a" link set lo up && ip -n "$b" link set lo up &&
	ip -n "$a" link set veth0 up && ip -n "$b" link set veth1 up
}

# cleanup_ns NS...: kills everything inside and deletes the namespaces.
# Never fails: it runs from EXIT traps, some under set -e, when part of what
# it removes may already be gone.
cleanup_ns() {
	local ns pid
	for ns in "$@"; do
		[ -n "$ns" ] || continue
		ip netns list 2>/dev/null | awk '{ print $1 }' | grep -qxF -- "$ns" || continue
		for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
		ip netns del "$ns" 2>/dev/null || true
	done
	return 0
}

# kill_pidfiles SIGNAL FILE...: signals the process named in each pid file.
# Never fails (see cleanup_ns): a missing file or a process already gone is
# what a cleanup expects.
kill_pidfiles() {
	local sig=$1 p; shift
	for p in "$@"; do
		[ -f "$p" ] || continue
		kill -"$sig" "$(cat "$p" 2>/dev/null)" 2>/dev/null || true
	done
	return 0
}

# pidfiles_gone FILE...: true when no pid file names a live process.
pidfiles_gone() {
	local p
	for p in "$@"; do
		[ -f "$p" ] || continue
		! kill -0 "$(cat "$p" 2>/dev/null)" 2>/dev/null || return 1
	done
	return 0
}

# rand_suffix: a short random tag so parallel runs never share namespace names.
rand_suffix() { head -c4 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

# Test result lines in the style of the kernel's l2tp selftest.
TESTS_OK=0 TESTS_FAIL=0
# write_pw_batch N PEER FILE: an l2tpv3ctl batch of N tunnels towards PEER
# (t1...), each followed by its session (s1...), as tunnel-storm writes it
write_pw_batch() {
	local i
	for i in $(seq 1 "$1"); do
		echo "tunnel create peer $2 name t$i"
		echo "session create tunnel name t$i name s$i"
	done > "$3"
}

# daemon_count NAME FIELD: a count from daemon NAME's `show daemon`, through
# the test library's ctl (no jq: under emulation a process less counts)
daemon_count() {
	[[ $(ctl "$1" -j show daemon) =~ \"$2\":\ *([0-9]+) ]] && echo "${BASH_REMATCH[1]}"
}

# state_is NAME STATE SHOW...: the object daemon NAME shows for `SHOW...`
# (tunnel show ID, session show name N) is in STATE, through the test
# library's ctlj
state_is() { [ "$(ctlj "$1" "${@:3}" 2>/dev/null | jq -r .state)" = "$2" ]; }

log_test() {	# log_test RC DESCRIPTION
	if [ "$1" = 0 ]; then
		TESTS_OK=$((TESTS_OK + 1)); printf 'TEST: %-60s [ OK ]\n' "$2"
	else
		TESTS_FAIL=$((TESTS_FAIL + 1)); printf 'TEST: %-60s [FAIL]\n' "$2"
		TESTS_FAILED+=("$2")
	fi
}
TESTS_FAILED=()
