#!/usr/bin/env bash
# Incoming sessions tied to customers by Remote End ID,
# as operators coming from xconnect expect: B's peer entry lists Remote End
# IDs, exact and as patterns, each with a session profile, an interface name
# ("%r": the ID itself) and a bridge; unknown IDs are refused with a CDN
# that says why; an ID that cannot name an interface is refused too; the
# names stay the same when a session comes back; A's static sessions set
# their own interface names.
. "$(dirname "$0")/lib.sh"
it_setup

write_conf b $B_ADDR "session_profiles = ( { name = \"gold\"; cookie_len = 8; } );
peers = ( { name = \"lac-a\"; match = \"$A_ADDR/32\"; accept = true; refuse_unknown_sessions = true;
            sessions = ( { remote_end_id = \"cust-a\"; profile = \"gold\"; ifname = \"cust-a\"; bridge = \"br-a\"; },
                         { remote_end_id = \"pw-*\"; ifname = \"x-%r\"; bridge = \"br-pw\"; } ); } );
peer_default = { accept = false; };"
write_conf a $A_ADDR "peer_default = { accept = true; };
tunnels = ( { name = \"t\"; peer = \"$B_ADDR\";
              sessions = ( { name = \"a\"; remote_end_id = \"cust-a\"; ifname = \"mine-a\"; },
                           { name = \"p7\"; remote_end_id = \"pw-7\"; },
                           { name = \"odd\"; remote_end_id = \"pw-a b\"; },
                           { name = \"who\"; remote_end_id = \"stranger\"; } ); } );"
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start (B with a session list for peer lac-a)"

# bsess REID: B's session with that Remote End ID, as JSON
bsess() {
	local id
	id=$(ctlj b session list | jq -r --arg r "$1" '.sessions[] | select(.remote_end_id == $r) | .session_id' | head -1)
	[ -n "$id" ] && ctlj b session show "$id"
}
wait_until 10 expect_count 2 count_sessions b established
log_test $? "B accepts exactly the two configured sessions"

out=$(bsess cust-a)
[ "$(jq -r .ifname <<<"$out")" = cust-a ] && [ "$(jq -r .profile <<<"$out")" = gold ] &&
	[ "$(jq -r .bridge <<<"$out")" = br-a ] && [ "$(jq -r .cookie_len <<<"$out")" = 8 ]
rc=$?; log_test $rc "exact match cust-a: interface cust-a, profile gold (8-byte cookie), bridge br-a"
[ $rc = 0 ] || echo "$out"
out=$(bsess pw-7)
[ "$(jq -r .ifname <<<"$out")" = x-pw-7 ] && [ "$(jq -r .profile <<<"$out")" = default ] &&
	[ "$(jq -r .bridge <<<"$out")" = br-pw ]
rc=$?; log_test $rc "pattern pw-*: interface x-pw-7 from the ID, the peer's profile, bridge br-pw"
[ $rc = 0 ] || echo "$out"

wait_until 5 grep -q 'session who ([0-9]*): failed: tunnel t ([0-9]*), CDN result 5 .*Remote End ID "stranger" is not configured' "$W/a.log"
rc=$?; log_test $rc "an unknown Remote End ID is refused: A's session gets a CDN that says why"
[ $rc = 0 ] || grep "who\|stranger" "$W/a.log" | head -5
grep -q 'session odd ([0-9]*): failed: .*Remote End ID "pw-a b" cannot name an interface by "x-%r"' "$W/a.log" &&
	grep -q 'refusing session: Remote End ID "pw-a b" cannot name an interface' "$W/b.log"
rc=$?; log_test $rc "an ID unfit for an interface name (a space) is refused, not used"
[ $rc = 0 ] || grep "odd\|pw-a" "$W/a.log" "$W/b.log" | head -5

# a session with no Remote End ID at all (the CLI sends none unless asked)
out=$(ctl a session create tunnel name t 2>&1)
[ $? != 0 ] && grep -q 'Remote End ID \\"\\" is not configured\|Remote End ID "" is not configured' <<<"$out" &&
	grep -q 'refusing session: Remote End ID "" is not configured' "$W/b.log"
rc=$?; log_test $rc "a session without a Remote End ID is refused as unknown, the CLI says why"
[ $rc = 0 ] || echo "$out"

[ "$(ctlj a session show name a | jq -r .ifname)" = mine-a ] &&
	[ "$(ctlj a session show name p7 | jq -r .ifname)" != mine-a ]
log_test $? "A's static session a has the interface name it sets (mine-a)"

# the same names after a flap: B clears cust-a, A's static session comes back
old=$(bsess cust-a | jq -r .session_id)
ctl b session delete "$old" >/dev/null
wait_until 15 sh -c "[ \"\$('$C' -s '$W/b.ctl' -j session list | jq -r '.sessions[] | select(.remote_end_id == \"cust-a\" and .state == \"established\") | .session_id')\" != '' ] &&
	[ \"\$('$C' -s '$W/b.ctl' -j session list | jq -r '.sessions[] | select(.remote_end_id == \"cust-a\") | .session_id')\" != $old ]"
out=$(bsess cust-a)
[ "$(jq -r .ifname <<<"$out")" = cust-a ] && [ "$(jq -r .session_id <<<"$out")" != "$old" ] &&
	[ "$(ctlj a session show name a | jq -r .ifname)" = mine-a ]
rc=$?; log_test $rc "after a flap the new session has the same names (B cust-a, A mine-a)"
[ $rc = 0 ] || echo "$out"

# a catch-all entry names interfaces by the ID itself ("%r"): an ID may not
# make a name that begins with '-', nor one the configuration gives another
# session (the profile's "uplink0" here); an ordinary ID still gets its name
sed -i 's|{ remote_end_id = "pw-\*"; ifname = "x-%r"; bridge = "br-pw"; }|&,\n { remote_end_id = "*"; ifname = "%r"; }|; s|{ name = "gold"; cookie_len = 8; }|&, { name = "up"; ifname = "uplink0"; }|' "$W/b.conf"
ctl b reload >/dev/null && grep -q 'remote_end_id = "\*"' "$W/b.conf"
log_test $? "B reloaded with a catch-all Remote End ID entry (ifname \"%r\") and a profile naming uplink0"
out=$(ctl a session create tunnel name t remote-end-id -evil 2>&1)
[ $? != 0 ] && grep -q "begin an interface name with '-'" <<<"$out" && grep -q "Remote End ID \"-evil\" would begin" "$W/b.log"
rc=$?; log_test $rc "Remote End ID -evil: refused, the name would begin with '-'"
[ $rc = 0 ] || echo "$out"
out=$(ctl a session create tunnel name t remote-end-id uplink0 2>&1)
[ $? != 0 ] && grep -q "configuration gives another session" <<<"$out"
rc=$?; log_test $rc "Remote End ID uplink0: refused, the configuration reserves that name"
[ $rc = 0 ] || echo "$out"
ctl a session create tunnel name t remote-end-id ok-1 >/dev/null && [ "$(bsess ok-1 | jq -r .ifname)" = ok-1 ]
log_test $? "Remote End ID ok-1: accepted as interface ok-1"

# config errors name the setting
printf 'peers = ( { name = "p"; match = "any"; sessions = ( { remote_end_id = "x"; ifname = "a%%q"; } ); } );\n' > "$W/bad.conf"
out=$("$D" -n -f "$W/bad.conf" 2>&1)
[ $? != 0 ] && grep -q "peers.sessions.ifname" <<<"$out" && grep -q "'%' must be followed by 'r'" <<<"$out"
rc=$?; log_test $rc "a bad ifname template is refused naming peers.sessions.ifname"
[ $rc = 0 ] || echo "$out"
printf 'peers = ( { name = "p"; match = "any"; sessions = ( { remote_end_id = "x"; profile = "nope"; } ); } );\n' > "$W/bad.conf"
out=$("$D" -n -f "$W/bad.conf" 2>&1)
[ $? != 0 ] && grep -q "peers.sessions.profile" <<<"$out"
rc=$?; log_test $rc "an unknown session profile in the list is refused naming peers.sessions.profile"
[ $rc = 0 ] || echo "$out"
it_done
