#!/usr/bin/env bash
# A tunnel's socket holds its whole receive window: the daemon sizes the
# receive buffer to rx_window messages when the system's default is
# smaller, per tunnel profile, and leaves the default alone when it is
# enough.  The default is read from one socket, not from each: a tunnel of a
# small window opened first must not keep a large-window one from its size.
. "$(dirname "$0")/lib.sh"
command -v ss >/dev/null || skip "needs ss (iproute2)"
it_setup

write_conf a $A_ADDR '
tunnel_profiles = ( { name = "big"; rx_window = 1024; } );'
write_conf b $B_ADDR 'peer_default = { accept = true; };'
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"

ctl a tunnel create peer $B_ADDR name small1 >/dev/null &&
	ctl a tunnel create peer $B_ADDR name big1 profile big >/dev/null &&
	ctl a tunnel create peer $B_ADDR name small2 >/dev/null &&
	ctl a tunnel create peer $B_ADDR name big2 profile big >/dev/null
log_test $? "A opens two tunnels of window 16 and two of window 1024, alternately"

# rcvbuf_of NS LOCAL_PORT: the receive buffer the kernel reports for the socket
rcvbuf_of() {
	ip netns exec "$1" ss -uanmH "sport = :$2" | tr -d '\n' | grep -o 'rb[0-9]*' | head -1 | tr -d rb
}
want=$((2 * 1024 * 2304))	# twice what was set, as the kernel reports it
default=$(ip netns exec "$NSA" cat /proc/sys/net/core/rmem_default)
for t in small1 big1 small2 big2; do
	port=$(ctlj a tunnel show name $t | jq -r ".local | split(\":\") | last")
	rb=$(rcvbuf_of "$NSA" "$port")
	case $t in
	big*) [ -n "$rb" ] && [ "$rb" -ge "$want" ] ;;
	*) [ -n "$rb" ] && [ "$rb" -lt "$want" ] ;;
	esac
	log_test $? "$t (port $port): receive buffer $rb (window 1024 needs $want; the default is $default)"
done

it_done
