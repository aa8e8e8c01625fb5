#!/usr/bin/env bash
# A restarted peer leaves no duplicates : the LAC is
# SIGKILLed with 20 tunnels up and restarted; its first new tunnel makes the
# LNS probe a sample of the old, silent connections (a HELLO with one
# retransmission: 3 s unanswered), then, unanswered, all of them, and they
# are cleared within about 6 s, not after minutes of HELLO retransmissions
# (hello 60 s).  A live peer answers the sample and nothing more is probed,
# also when its answer comes only to the sample's retransmission (the first
# HELLOs lost, the LNS's retransmission timer 3 s): the verdict waits as
# long as the protocol gives a connection to answer.
. "$(dirname "$0")/lib.sh"
it_setup

write_conf b $B_ADDR 'peer_default = { accept = true; };'
write_conf a $A_ADDR 'peer_default = { accept = true; };'
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start (hello 60 s)"
for i in $(seq 1 20); do echo "tunnel create peer $B_ADDR"; done > "$W/c.batch"
ctl a -b "$W/c.batch" >/dev/null
wait_until 20 expect_count 20 count_tunnels b established
log_test $? "20 tunnels up"

sleep 4.5	# past the sweeps of the bring-up (one per PROBE_EVERY_S)
hb=$(ctlj b stats | jq '.global.msgs_out.HELLO // 0') ha=$(ctlj a stats | jq '.global.msgs_out.HELLO // 0')
[ "$hb" -le 4 ] && [ "$ha" -le 4 ]
log_test $? "a bring-up of 20 tunnels probes at most a sample (HELLOs: LNS $hb, LAC $ha)"
kill -9 "$(pid_of a)"
wait_until 5 sh -c "! kill -0 $(pid_of a) 2>/dev/null"
start a "$NSA"
ctl a tunnel create peer $B_ADDR >/dev/null
t0=$(date +%s%N)
wait_until 10 expect_count 1 count_tunnels b established
rc=$?; ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ $rc = 0 ] && grep -q "new connection .*, and its older connections are silent: it restarted? probing 16 more" "$W/b.log"
log_test $? "LAC restarted: its 20 dead connections cleared $ms ms after its new one came up"
expect_count 0 count_sessions b && [ "$(count_tunnels a established)" = 1 ]
log_test $? "nothing of the old ones left established"

sleep 2.5	# the next probe of this peer, its one connection silent by now
ctl a tunnel create peer $B_ADDR >/dev/null
sleep 4
expect_count 2 count_tunnels b established && expect_count 2 count_tunnels a established &&
	[ "$(grep -c "restarted? probing" "$W/b.log")" = 1 ]
log_test $? "a live peer's silent connection answers the sampled probe and stays; no sweep"

# --- a live peer whose answer to the sample comes late ------------------------
# Retransmission timers of 3 s: a HELLO sample is judged when its one
# retransmission has gone unanswered for 6 s more.  Both sides sample (each
# sees the other's old connections silent); both drop the first HELLO of
# each connection they get (nftables, on the L2TP Message Type AVP's value,
# 6 = HELLO): the sample's are lost, their retransmissions pass.
command -v nft >/dev/null || { echo "SKIP: the late-answer case needs nft"; it_done; exit; }
pa=$(pid_of a) pb=$(pid_of b)
kill "$pa" "$pb"; wait_until 10 sh -c "! kill -0 $pa 2>/dev/null && ! kill -0 $pb 2>/dev/null"
mv "$W/b.log" "$W/b-restart.log"; mv "$W/a.log" "$W/a-restart.log"
for d in a b; do
	write_conf $d "$( [ $d = a ] && echo $A_ADDR || echo $B_ADDR)" \
		'tunnel_profiles = ( { name = "default"; retransmit_initial = 3.0; } );
		 peer_default = { accept = true; };'
done
start b "$NSB" && start a "$NSA"
for i in $(seq 1 8); do echo "tunnel create peer $B_ADDR"; done > "$W/s.batch"
ctl a -b "$W/s.batch" >/dev/null && wait_until 20 expect_count 8 count_tunnels b established
log_test $? "8 tunnels up between daemons whose retransmission timers start at 3 s"
sleep 4.5	# past the bring-up's sweeps: the 8 are silent since
for ns in "$NSA" "$NSB"; do nft_drop_first "$ns" hellodrop input 1 @th,208,16 6; done
ctl a tunnel create peer $B_ADDR >/dev/null
# each side samples 4 of the 8 at once (dropped); their retransmissions come
# 3 s later and pass
# both_dropped: the HELLOs hellodrop dropped in both namespaces
both_dropped() { echo $(( $(nft_dropped "$NSA" hellodrop) + $(nft_dropped "$NSB" hellodrop) )); }
wait_until 10 at_least 4 both_dropped
sleep 8	# past the verdict (3 s + 6 s after the sample)
dropped=0
for ns in "$NSA" "$NSB"; do
	n=$(nft_undrop "$ns" hellodrop)
	dropped=$((dropped + ${n:-0}))
done
hello=$(( $(ctlj a stats | jq '.global.msgs_out.HELLO // 0') + $(ctlj b stats | jq '.global.msgs_out.HELLO // 0') ))
[ "$dropped" -ge 4 ] && [ "$(cat "$W/a.log" "$W/b.log" | grep -c ": up: peer")" -ge 18 ] &&
	[ "$(cat "$W/a.log" "$W/b.log" | grep -c "restarted? probing")" = 0 ] &&
	expect_count 9 count_tunnels b established && expect_count 9 count_tunnels a established
log_test $? "the sample's first HELLOs lost ($dropped dropped), answered to their retransmission: not judged restarted ($hello HELLOs sent), all 9 stay"

# --- a live peer's sampled connection loses its HELLO twice -------------------
# One of the sample's HELLOs and its retransmission are lost (at 20 % loss,
# about one sampled connection in eight) while the others are answered: the
# peer is alive, so that connection keeps its own retransmission budget and
# stays, instead of being cleared with its probe.  The HELLOs on the first
# tunnel are dropped, either way (by the receiver's Control Connection ID):
# the first two copies, the third passes.  A samples when its new tunnel is
# up; B, a moment later, only if A's sample has not reached it first (the
# peer talks on an old connection: it did not restart): either side's
# sample loses its HELLO on that tunnel twice.
pa=$(pid_of a) pb=$(pid_of b)
kill "$pa" "$pb"; wait_until 10 sh -c "! kill -0 $pa 2>/dev/null && ! kill -0 $pb 2>/dev/null"
mv "$W/b.log" "$W/b-late.log"; mv "$W/a.log" "$W/a-late.log"
write_conf b $B_ADDR 'peer_default = { accept = true; };'
write_conf a $A_ADDR 'peer_default = { accept = true; };'
start b "$NSB" && start a "$NSA"
for i in 1 2 3; do echo "tunnel create peer $B_ADDR"; done > "$W/l.batch"
ctl a -b "$W/l.batch" >/dev/null && wait_until 20 expect_count 3 count_tunnels b established
log_test $? "3 tunnels up"
sleep 4.5	# past the bring-up's sweeps: the 3 are silent since
read -r x px <<<"$(ctlj a tunnel list | jq -r '.tunnels[0] | "\(.tunnel_id) \(.peer_tunnel_id)"')"
nft_drop_first "$NSA" hellodrop input 2 @th,96,32 "$x" @th,208,16 6
nft_drop_first "$NSB" hellodrop input 2 @th,96,32 "$px" @th,208,16 6
ctl a tunnel create peer $B_ADDR >/dev/null
# a sample: a HELLO at once, again at 1 s (both dropped), verdict at 3 s;
# the next at 7 s passes
wait_until 20 at_least 2 both_dropped
sleep 5	# past the verdict
dropped=$(( $(nft_undrop "$NSA" hellodrop) + $(nft_undrop "$NSB" hellodrop) ))
[ "${dropped:-0}" -ge 2 ] && [ "$(cat "$W/a.log" "$W/b.log" | grep -c ": up: peer")" -ge 8 ] &&
	[ "$(cat "$W/a.log" "$W/b.log" | grep -c "restarted? probing")" = 0 ] &&
	expect_count 4 count_tunnels b established && expect_count 4 count_tunnels a established
log_test $? "a sampled HELLO lost with its retransmission ($dropped dropped), the peer alive: the connection stays (4 of 4)"
it_done
