#!/usr/bin/env bash
# tests/adversarial/peer-strings.sh - a peer's Remote End ID is data:
# terminal escapes, an embedded newline, C1 controls and invalid
# UTF-8 sent by the LAC must reach the LNS operator only escaped, by the rule
# of doc/ctl-protocol.md "Peer-supplied strings" (usl/escape.h).
#
#   +------ ns A (LAC) ------+          +------ ns B (LNS) ------+
#   | 192.0.2.1              |--veth----| 192.0.2.2              |
#   | session create         |  ICRQ    | session show / list    |
#   |   remote-end-id EVIL   |--------->| -j session list, hook  |
#   +------------------------+          +------------------------+
#
# A NUL cannot travel through argv and the control socket (C strings), so
# the embedded-NUL case lives in tests/unit/check_escape.c.
. "$(dirname "$0")/../integration/lib.sh"
it_setup
command -v python3 >/dev/null || skip "needs python3"

# What the LAC sends, and how the LNS must show it (JSON value, text, hook).
RAW=(
	$'\e]0;pwned\a\e[2J'
	$'pw1\nFORGED-LINE: established'
	$'bad\xff\xfe'
	$'csi\xc2\x9b2J'
	'back\slash'
)
ESC=(
	'\x1b]0;pwned\x07\x1b[2J'
	'pw1\x0aFORGED-LINE: established'
	'bad\xff\xfe'
	'csi\xc2\x9b2J'
	'back\\slash'
)

HOOK=$W/session-up
cat > "$HOOK" <<EOF
#!/bin/sh
printf '%s\n' "\$L2TP_REMOTE_END_ID" > "$W/hook.\$L2TP_SESSION_ID.tmp" &&
	mv "$W/hook.\$L2TP_SESSION_ID.tmp" "$W/hook.\$L2TP_SESSION_ID"
EOF
chmod 755 "$HOOK"

write_conf b $B_ADDR "
peer_default = { accept = true; };
hooks = { session_up = \"$HOOK\"; };"
write_conf a $A_ADDR '
peer_default = { accept = true; };'
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"

out=$(ctlj a tunnel create peer $B_ADDR)
TID=$(jq -r .tunnel_id <<<"$out")
[ "$(jq -r .state <<<"$out")" = established ]
log_test $? "tunnel from the LAC established"

# has_byte HEX: stdin holds that byte
has_byte() { od -An -tx1 -v | tr -s ' \n' '\n\n' | grep -qx "$1"; }
utf8_ok() { python3 -c 'import sys; sys.stdin.buffer.read().decode("utf-8")'; }

PSIDS=()
for i in "${!RAW[@]}"; do
	what=$(printf '%q' "${RAW[$i]}")
	out=$(ctlj a session create tunnel "$TID" remote-end-id "${RAW[$i]}")
	PSID=$(jq -r .peer_session_id <<<"$out" 2>/dev/null)
	PSIDS+=("$PSID")
	[ "$(jq -r .state <<<"$out" 2>/dev/null)" = established ]
	log_test $? "session with Remote End ID $what established"

	# text: no ESC, no C1 or invalid byte, no forged line, the escaped form
	show=$(ctl b session show "$PSID")
	# (the bytes' absence means something once the value is there)
	grep -q '^ *remote_end_id: ' <<<"$show" &&
		! has_byte 1b <<<"$show" && ! has_byte 9b <<<"$show" && ! has_byte ff <<<"$show" &&
		utf8_ok <<<"$show"
	log_test $? "session show $what: no ESC, C1 or invalid UTF-8 byte"
	grep -q '^ *remote_end_id: ' <<<"$show" && ! grep -qv '^ *[a-z0-9_-]*:\( \|$\)' <<<"$show"
	log_test $? "session show $what: every line a 'key: value', none forged"
	[ "$(sed -n 's/^remote_end_id: *//p' <<<"$show")" = "${ESC[$i]}" ]
	log_test $? "session show $what: prints ${ESC[$i]}"

	# JSON: valid UTF-8, the escaped value
	json=$(ctlj b session show "$PSID")
	[ "$(jq -r .remote_end_id <<<"$json")" = "${ESC[$i]}" ]
	log_test $? "-j session show $what: remote_end_id is ${ESC[$i]}"

	# hook: the whole value, escaped the same way
	wait_until 5 test -f "$W/hook.$PSID" &&
		[ "$(cat "$W/hook.$PSID")" = "${ESC[$i]}" ]
	log_test $? "session-up hook $what: L2TP_REMOTE_END_ID=${ESC[$i]}"
done

n=${#RAW[@]}
list=$(ctl b session list)
! has_byte 1b <<<"$list" && [ "$(grep -c . <<<"$list")" = $((n + 1)) ] && utf8_ok <<<"$list"
log_test $? "session list: no ESC, a header and $n rows"

ctlj b session list | python3 -c 'import json, sys; json.loads(sys.stdin.buffer.read().decode("utf-8"))'
log_test $? "-j session list: json.loads accepts it (valid UTF-8)"
got=$(ctlj b session list | jq -r '.sessions[].remote_end_id' | sort)
want=$(printf '%s\n' "${ESC[@]}" | sort)
[ "$got" = "$want" ]
log_test $? "-j session list: every remote_end_id escaped"

# The LAC's own view of what it sent goes through the same helper.
ashow=$(ctl a session show "$(ctlj a session list | jq -r '.sessions[0].session_id')")
ctlj a session list | utf8_ok && grep -q '^ *remote_end_id: ' <<<"$ashow" && ! has_byte 1b <<<"$ashow"
log_test $? "LAC side: JSON valid UTF-8, text without ESC"

it_done
