#!/usr/bin/env bash
# responder_port = "listener": the LNS answers every tunnel from its
# listener's port, one tunnel per peer address and port.  A forged SCCRQ
# from the LAC's address and port 1701 makes a half-open connection on that
# path; the real LAC's SCCRQ from the same port takes the path from it at
# once instead of being refused until the forged one's SCCRPs run out.  A
# path held by an established tunnel is refused with a hint for this mode.
. "$(dirname "$0")/lib.sh"
adv_setup
ADV_PROFILE='udp_src_port = "1701";'
adv_conf_b 'peer_default = { accept = true; };'
sed -i 's|ctl_socket|responder_port = "listener"; ctl_socket|' "$W/b.conf"
adv_start

n0=$(count_tunnels b)
adv_forge_seen 1 sccrq --dst $B_ADDR --src $A_ADDR --sport 1701
half_open() { expect_count $((n0 + 1)) count_tunnels b wait-ctl-conn; }
wait_until 10 half_open
log_test $? "a forged SCCRQ from $A_ADDR:1701 holds a half-open connection on B's port 1701"

out=$(ctlj a tunnel create peer $B_ADDR name real 2>&1)
# A's create returns once A sent its SCCCN: B's tunnel is up when B has read it
real_up_at_b() { expect_count 0 count_tunnels b wait-ctl-conn && expect_count 1 count_tunnels b established; }
[ "$(jq -r .state <<<"$out" 2>/dev/null)" = established ] && wait_until 20 real_up_at_b
log_test $? "the real LAC from port 1701 gets its tunnel at once; the forged half-open one gave way ($(tr -d "\n" <<<"$out" | head -c 80))"
grep -q "a new SCCRQ from $A_ADDR:1701 takes the path of its half-open connection" "$W/b.log" &&
	[ "$(ctlj b stats | jq .global.half_open_evicted)" -ge 1 ]
log_test $? "logged and counted as an eviction"

# the path is held by an established tunnel now: a second tunnel from the same port is refused, rightly explained
out=$(ctl a tunnel create peer $B_ADDR name second 2>&1)
[ $? != 0 ] && grep -q 'responder_port = \\\?"listener\\\?" answers each peer address and port with one tunnel' <<<"$out$(cat "$W/b.log")"
log_test $? "a second tunnel from $A_ADDR:1701 is refused with a hint for this mode"
it_done
