#!/usr/bin/env bash
# A datagram from the peer's address and another port, while our SCCRQ
# waits for its first answer, must not redirect our retransmissions: only
# a message the engine accepted moves the tunnel to the port the peer
# answers from.  A connects to B, whose input drops A's SCCRQs; B's
# namespace sends one datagram from port 40000 to A's tunnel socket; then
# B lets the SCCRQs in, and A's next retransmission (every second at most)
# must reach B's port 1701 and bring the tunnel up.
. "$(dirname "$0")/../integration/lib.sh"
it_setup
command -v nft >/dev/null || skip "needs nft (nftables)"
command -v python3 >/dev/null || skip "needs python3"
UP_S=15	# seconds for the tunnel to come up once B listens: several retransmissions

write_conf a $A_ADDR 'tunnel_profiles = ( { name = "default"; retransmit_initial = 0.5; retransmit_cap = 1.0;
	sccrq_max_retries = 30; } );'
write_conf b $B_ADDR 'peer_default = { accept = true; };'
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"
nft_drop "$NSB" sccrqdrop input udp dport 1701 @th,208,16 1

ctlj a tunnel create peer $B_ADDR name redirected > "$W/create.json" 2>&1 & pc=$!
waiting() { ctlj a tunnel show name redirected | jq -e '.state == "wait-ctl-reply"' >/dev/null; }
wait_until 10 waiting && wait_until 10 nft_dropped_at_least 1 "$NSB" sccrqdrop
log_test $? "A's SCCRQ sent, dropped at B: A waits for the first answer"

port=$(ctlj a tunnel show name redirected | jq -r '.local | sub(".*:"; "")')
rx0=$(ctlj a stats | jq .global.rx_datagrams)
ip netns exec "$NSB" python3 - "$A_ADDR" "$port" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("", 40000))
s.sendto(bytes(12), (sys.argv[1], int(sys.argv[2])))
PY
read_it() { [ "$(ctlj a stats | jq .global.rx_datagrams)" -gt "$rx0" ]; }
wait_until 10 read_it && waiting && [ "$(ctlj a tunnel show name redirected | jq -r .peer)" = "$B_ADDR:1701" ]
log_test $? "a datagram from $B_ADDR:40000 to A's port $port: read and dropped, A still sends to $B_ADDR:1701"

dropped=$(nft_undrop "$NSB" sccrqdrop)
up() { state_is a established tunnel show name redirected; }
# (A is up once it sent its SCCCN: B is when it has read it)
wait_until "$UP_S" up && wait_until 20 expect_count 1 count_tunnels b established
log_test $? "B listens again ($dropped SCCRQs dropped before): the next retransmission brings the tunnel up"
wait $pc
log_test $? "the CLI's tunnel create succeeds"
it_done
