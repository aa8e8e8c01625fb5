#!/usr/bin/env bash
# Debugging one tunnel or one peer at run time, the daemon at log level info:
# `debug on tunnel REF` traces that tunnel's control messages in the log
# (decoded: type, CCID, Ns, Nr, every AVP with its value) and logs the
# debug lines of its handling; other tunnels stay quiet; `debug off` stops
# it; `debug on peer ADDR` covers that peer's tunnels, new ones from their
# SCCRQ on.
. "$(dirname "$0")/lib.sh"
it_setup

write_conf b $B_ADDR 'peers = ( { name = "lacs"; match = "192.0.2.0/24"; accept = true; } );'
sed -i 's/log_level = "debug";/log_level = "info";/' "$W/b.conf"
write_conf a $A_ADDR 'peer_default = { accept = true; };'
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start (B at log level info)"

ctl a tunnel create peer $B_ADDR name t1 >/dev/null && ctl a tunnel create peer $B_ADDR name t2 >/dev/null
log_test $? "two tunnels from A"
traces() { grep -c "info: trace tunnel $1 " "$W/b.log"; }

out=$(ctlj b debug on tunnel name lacs/a)
jq -e '.tunnels | length == 1' <<<"$out" >/dev/null && ctlj b tunnel show name lacs/a | jq -e .debug >/dev/null
log_test $? "debug on tunnel lacs/a: shown as debugged"
ctl a session create tunnel name t1 name s1 remote-end-id 'pw-1' >/dev/null
grep -q "info: trace tunnel lacs/a ([0-9]*): rx ICRQ ccid [0-9]* Ns [0-9]* Nr [0-9]*: Message Type, .*Remote End ID \"pw-1\"" "$W/b.log" &&
	grep -q "info: trace tunnel lacs/a ([0-9]*): tx ICRP " "$W/b.log" &&
	grep -q "debug: .*idle -> wait-connect" "$W/b.log"
log_test $? "a session on it: its ICRQ and ICRP traced, decoded; the debug lines of its handling logged"

# A's create returns once A sent its ICCN: B's session is up when B has read it
b_logged() { grep -q "$1" "$W/b.log"; }
ctl a session create tunnel name t2 name s2 remote-end-id pw-2 >/dev/null &&
	wait_until 20 b_logged "info: session lacs/pw-2 ([0-9]*): up: tunnel lacs/a:2" &&
	[ "$(traces 'lacs/a:2')" = 0 ]
log_test $? "a session on the other tunnel: up, and nothing of it traced"

# the delayed ZLB that acknowledges s1's ICCN is traced too: counted once it went
last_trace_is_tx() {
	grep -q "info: trace tunnel lacs/a ([0-9]*): rx ICCN " "$W/b.log" &&
		grep "info: trace tunnel lacs/a (" "$W/b.log" | tail -1 | grep -q "): tx "
}
wait_until 20 last_trace_is_tx
log_test $? "B traced s1's ICCN and acknowledged it"
n=$(traces lacs/a)
ctl b debug off tunnel name lacs/a >/dev/null &&
	ctl a session create tunnel name t1 name s3 remote-end-id pw-3 >/dev/null &&
	wait_until 20 b_logged "info: session lacs/pw-3 ([0-9]*): up" && [ "$(traces lacs/a)" = "$n" ]
log_test $? "debug off: the next session on lacs/a comes up untraced ($n trace lines before and after)"

ctl b debug on peer $A_ADDR >/dev/null && ctl a tunnel create peer $B_ADDR name t3 >/dev/null &&
	grep -q "info: trace tunnel [0-9]*: rx SCCRQ ccid 0 Ns 0 Nr 0: Message Type, .*Host Name \"a\"" "$W/b.log" &&
	ctlj b tunnel show name lacs/a:3 | jq -e .debug >/dev/null
log_test $? "debug on peer: its new tunnel is debugged and traced from its SCCRQ on"
ctlj b debug off peer $A_ADDR | jq -e '.peers == [] and .tunnels == []' >/dev/null
log_test $? "debug off peer: nothing debugged any more"

it_done
