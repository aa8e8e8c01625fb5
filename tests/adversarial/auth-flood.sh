#!/usr/bin/env bash
# SCCRQs that fail authentication leave nothing behind: an SCCRQ is
# validated before anything is allocated; a bad digest is dropped silently,
# a peer that does not authenticate where we require it gets one StopCCN
# (rate-limited), and a real LAC still gets its tunnel.
. "$(dirname "$0")/lib.sh"
adv_setup

# the LAC (192.0.2.1) must authenticate; anyone else gets the open profile,
# where a digest is only an integrity check
ADV_PROFILE='digest = "md5"; secret = "s3cret";'
write_conf b $B_ADDR "
tunnel_profiles = ( { name = \"default\"; hello_interval = 1; $ADV_PROFILE },
                    { name = \"open\"; hello_interval = 1; digest = \"none\"; secret = \"\"; } );
peers = ( { name = \"lac\"; match = \"192.0.2.1/32\"; accept = true; } );
peer_default = { accept = true; tunnel_profile = \"open\"; };"
adv_start
adv_victim

r0=$(replies_to_others) rb0=$(rcvbuf_errors)

# 3,000 SCCRQs from forged sources with a nonce and a bogus digest, against
# the md5 profile (source 192.0.2.1, the authenticated LAC's address)
adv_forge_seen 3000 sccrq --dst $B_ADDR --src $A_ADDR --count 3000 --rate 3000 --nonce 16 --digest bogus
# and against the open profile: a bogus integrity check, no nonce
adv_forge_seen 3000 sccrq --dst $B_ADDR --src-net 192.0.2.0/24 --exclude $A_ADDR --count 3000 --rate 3000 --digest bogus
alive b
log_test $? "b alive after 6,000 SCCRQs with bad digests"
[ "$(count_tunnels b)" = "$BASE_TUNNELS" ] && [ "$(nfds b)" -le "$BASE_FDS" ]
log_test $? "no tunnel and no descriptor made for them ($(count_tunnels b) tunnels, $(nfds b) fds, baseline $BASE_TUNNELS/$BASE_FDS)"
[ "$(drops digest-mismatch)" -gt 0 ] && wait_until 10 drops_reach digest-mismatch 6000 "$rb0"
log_test $? "all counted as digest-mismatch ($(drops digest-mismatch), and $(( $(rcvbuf_errors) - rb0 )) dropped by a full socket buffer)"
[ -n "$r0" ] && [ "$(( $(replies_to_others) - r0 ))" = 0 ]
log_test $? "no reply to a failed authentication ($(( $(replies_to_others) - r0 )) sent)"

# no nonce where authentication is required (only 192.0.2.1 uses that
# profile, so the forged source is the LAC's address): refused, once, bounded
r0=$(ctlj b stats | jq '.global.msgs_out.StopCCN // 0')
adv_forge_seen 1000 sccrq --dst $B_ADDR --src $A_ADDR --count 1000 --rate 2000
n=$(( $(ctlj b stats | jq '.global.msgs_out.StopCCN // 0') - r0 ))
[ "$(count_tunnels b)" = "$BASE_TUNNELS" ] && [ "$(nfds b)" -le "$BASE_FDS" ] && [ "$n" -le 150 ]
log_test $? "SCCRQs without the required nonce: refused statelessly ($n StopCCNs for 1,000 in 0.5 s, at most 50/s + burst)"

adv_victim_ok
log_test $? "the victim tunnel is established and passing HELLOs"
out=$(ctlj a tunnel create peer $B_ADDR name after)
[ "$(jq -r .state <<<"$out")" = established ]
log_test $? "a real LAC still gets a new tunnel"
it_done
