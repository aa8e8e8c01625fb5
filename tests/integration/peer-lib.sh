# tests/integration/peer-lib.sh - the scripted peer (peer.py serve) as a
# coprocess over two FIFOs, for the integration and kernel tests: sourced
# after the caller's lib.sh has set $top_srcdir, $W, $NSA and $B_ADDR.
PEER_PY=$top_srcdir/tests/integration/peer.py
# Deadlines, scaled like wait_until's ($DEADLINE_SCALE: the kernel tests'
# emulated guest, where python alone takes seconds to start): a read that
# timed out would leave the next command reading this one's late answer.
PEER_START_S=30 PEER_ANSWER_S=30
peer_start() {	# peer_start LOCAL_ADDR [serve args...]: talks to the LNS at $B_ADDR
	peer_start_at "$1" 1701 "${@:2}"
}
peer_start_at() {	# peer_start_at LOCAL_ADDR PORT [serve args...]: from another port
	local addr=$1 port=$2; shift 2
	rm -f "$W/peer.in" "$W/peer.out"
	mkfifo "$W/peer.in" "$W/peer.out"
	ip netns exec "$NSA" python3 "$PEER_PY" serve --local "$addr:$port" --remote "$B_ADDR:1701" \
		"$@" <"$W/peer.in" >"$W/peer.out" 2>>"$W/peer.log" &
	echo $! > "$W/peer.pid"
	exec {PIN}>"$W/peer.in" {POUT}<"$W/peer.out"
	local s=$((PEER_START_S * ${DEADLINE_SCALE:-1}))
	R=
	read -t "$s" -r R <&"$POUT"
	echo "< $R" >> "$W/peer.log"
	[ "$(jq -r .ready <<<"$R" 2>/dev/null)" = true ] ||
		{ echo "peer_start: the scripted peer was not ready in $s s" >&2; return 1; }
}
peer_stop() {
	echo quit >&"$PIN"
	wait "$(cat "$W/peer.pid")" 2>/dev/null
	exec {PIN}>&- {POUT}<&-
	rm -f "$W/peer.pid"
}
# P COMMAND...: one peer command; its JSON answer in $R; true when ok
P() {
	echo "$*" >&"$PIN"
	local s=$((PEER_ANSWER_S * ${DEADLINE_SCALE:-1}))
	R=
	read -t "$s" -r R <&"$POUT" || echo "P: no answer to '$*' in $s s" >&2
	echo "> $*" >> "$W/peer.log"; echo "< $R" >> "$W/peer.log"
	[ "$(jq -r .ok <<<"$R" 2>/dev/null)" = true ]
}
# J EXPR: jq on the last answer
J() { jq -r "$1" <<<"$R"; }
