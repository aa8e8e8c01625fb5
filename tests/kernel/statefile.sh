#!/usr/bin/env bash
# The state file under a full disk and a read-only or world-writable
# state_dir.  A's state_dir is a 64 KiB tmpfs that gets filled: creates go on,
# every failure is logged with its errno (never "Success"), and once space
# is freed the file lists exactly A's kernel tunnels again.  A restart
# replays a file with a torn and a joined line: only A's recorded tunnel
# is deleted, the foreign one they mention stays.  A read-only state_dir
# stops the start with the path and the errno, not "--dataplane null".
. "$(dirname "$0")/lib.sh"
kt_setup
# the daemons hold files on the mounts: stop them first, then unmount
trap 'kill_pidfiles KILL "$W"/*.pid; umount -l "$W/a.state" "$W/ro" 2>/dev/null; kt_cleanup' EXIT

write_conf a $A_ADDR 'peer_default = { accept = true; };'
write_conf b $B_ADDR 'peer_default = { accept = true; };'

# --- read-only state_dir at start ----------------------------------------------------
mkdir -p "$W/ro" && mount -t tmpfs -o ro,size=64k,mode=0755 tmpfs "$W/ro" &&
	sed "s|state_dir = \"[^\"]*\"|state_dir = \"$W/ro\"|; s|a.ctl|ro.ctl|" "$W/a.conf" > "$W/ro.conf"
timeout 20 ip netns exec "$NSA" "$D" -F -f "$W/ro.conf" > "$W/ro.log" 2>&1
rc=$?
[ "$rc" != 0 ] && [ "$rc" != 124 ] && grep -q "$W/ro/kernel-tunnels.*Read-only file system" "$W/ro.log" &&
	! grep -q -- "--dataplane null" "$W/ro.log"
rc=$?; log_test $rc "read-only state_dir: start fails naming the path and EROFS, no --dataplane hint"
[ $rc = 0 ] || cat "$W/ro.log"

# --- a state_dir every user may write ------------------------------------------------
# its record decides which kernel tunnels a start deletes: refused, and said why
mkdir -p "$W/ww" && chmod 777 "$W/ww" &&
	sed "s|state_dir = \"[^\"]*\"|state_dir = \"$W/ww\"|; s|a.ctl|ww.ctl|" "$W/a.conf" > "$W/ww.conf"
timeout 20 ip netns exec "$NSA" "$D" -F -f "$W/ww.conf" > "$W/ww.log" 2>&1
rc=$?
[ "$rc" != 0 ] && [ "$rc" != 124 ] && grep -q "state_dir $W/ww is writable by every user (mode 0777)" "$W/ww.log" &&
	[ -z "$(ls -A "$W/ww")" ]
rc=$?; log_test $rc "world-writable state_dir: start fails naming the path and its mode, nothing written there"
[ $rc = 0 ] || cat "$W/ww.log"

# --- a full state_dir ----------------------------------------------------------------
mkdir -p "$W/a.state" && mount -t tmpfs -o size=64k,mode=0755 tmpfs "$W/a.state" &&
	start b "$NSB" && start a "$NSA"
log_test $? "both daemons start, A's state_dir on a 64 KiB tmpfs"

# the ids in A's state file (after a rewrite it has '+' records only)
file_ids() { grep -Eo '^\+[0-9]+ ' "$(state_file a)" | tr -d '+ ' | sort -n | tr '\n' ' '; }
kernel_ids() { ip -n "$NSA" -j l2tp show tunnel | jq '.[].tunnel_id' | sort -n | tr '\n' ' '; }
file_matches_kernel() { [ "$(file_ids)" = "$(kernel_ids)" ]; }

dd if=/dev/zero of="$W/a.state/filler" bs=4k >/dev/null 2>&1
[ "$(stat -c %s "$W/a.state/filler")" -gt 0 ] && ! dd if=/dev/zero of="$W/a.state/more" bs=4k count=1 2>/dev/null
log_test $? "A's state_dir is full"
rm -f "$W/a.state/more"

for i in 1 2 3 4; do ctlj a tunnel create peer $B_ADDR >/dev/null; done
wait_until 15 expect_count 4 count_tunnels a established && expect_count 4 k_tunnels "$NSA"
log_test $? "creates go on with a full state_dir: 4 tunnels up, in the kernel"

# the first failed append, and at least one retry (every second) after it
wait_until 5 sh -c "[ \$(grep -c 'state file $(state_file a): .*No space left on device' '$W/a.log') -ge 2 ]" &&
	! grep "state file" "$W/a.log" | grep -q "Success"
rc=$?; log_test $rc "every failed write is logged with ENOSPC, none as \"Success\""
[ $rc = 0 ] || grep "state file" "$W/a.log"

T1=$(ctlj a tunnel list | jq -r '[.tunnels[].tunnel_id][0]')
ctl a tunnel delete "$T1" >/dev/null && wait_until 10 expect_count 3 k_tunnels "$NSA"
log_test $? "a delete with a full state_dir"

rm -f "$W/a.state/filler"
wait_until 10 file_matches_kernel && [ -n "$(file_ids)" ] &&
	grep -q "state file $(state_file a): complete again" "$W/a.log"
rc=$?; log_test $rc "space freed: A's state file lists exactly its 3 kernel tunnels again"
[ $rc = 0 ] || echo "  file: $(file_ids) kernel: $(kernel_ids)"

# --- restart from a torn file ----------------------------------------------------------
# As in lifecycle.sh, a tunnel that outlived its daemon is made by hand.
# 4242 is recorded (old format); 4343 is foreign and appears only in a line
# joined after a short write and in a torn last line, which the old parser
# read as "+4343".
stop a KILL && wait_until 10 expect_count 0 k_tunnels "$NSA" &&
ip -n "$NSA" l2tp add tunnel tunnel_id 4242 peer_tunnel_id 4243 encap udp local $A_ADDR remote $B_ADDR \
	udp_sport 4242 udp_dport 4243 &&
ip -n "$NSA" l2tp add tunnel tunnel_id 4343 peer_tunnel_id 4344 encap udp local $A_ADDR remote $B_ADDR \
	udp_sport 4343 udp_dport 4344 &&
printf '+4242\n+43+4343\n+4343' >> "$(state_file a)"
log_test $? "A killed; tunnel 4242 recorded, foreign 4343 only in a joined and a torn line"
start a "$NSA" && [ "$(k_tunnel_ids "$NSA")" = "[[4343,4344]]" ] &&
	grep -q "ignored 1 torn and 1 garbled lines" "$W/a.log" &&
	grep -q "deleted 1 L2TP tunnels left by a previous run" "$W/a.log"
rc=$?; log_test $rc "restart deletes exactly A's 4242, keeps 4343, logs the torn and garbled lines"
[ $rc = 0 ] || echo "  kernel: $(k_tunnel_ids "$NSA")"
ip -n "$NSA" l2tp del tunnel tunnel_id 4343

stop b TERM; stop a TERM
kt_done
