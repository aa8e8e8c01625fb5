#!/usr/bin/env bash
# What the daemon trusts is protected: a configuration file that every user
# may write, or that another user owns, is refused at start and at reload
# (the running configuration stays); `-n` still checks any file; a
# ctl_socket path that holds something other than a socket is not deleted.
. "$(dirname "$0")/lib.sh"
it_setup

write_conf a $A_ADDR 'peer_default = { accept = true; };'
# start_fails CONF [RC]: the daemon exits at once, with RC when given (78: a
# configuration error); its words in $W/fail.log
start_fails() {
	timeout 20 ip netns exec "$NSA" "$D" -F -f "$1" > "$W/fail.log" 2>&1
	local rc=$?
	[ $rc != 0 ] && [ $rc != 124 ] && [ "$rc" = "${2:-$rc}" ]
}

chmod 666 "$W/a.conf"
start_fails "$W/a.conf" 78 && grep -q "configuration $W/a.conf is writable by every user (mode 0666)" "$W/fail.log"
log_test $? "a world-writable configuration is refused at start, naming the file and its mode"
"$D" -n -f "$W/a.conf" >/dev/null 2>&1
log_test $? "-n still checks it (nothing runs)"
chmod 644 "$W/a.conf"
chown 65534 "$W/a.conf"
start_fails "$W/a.conf" 78 && grep -q "is owned by uid 65534, neither root nor" "$W/fail.log"
log_test $? "a configuration another user owns is refused at start"
chown 0 "$W/a.conf"

start a "$NSA"
log_test $? "the daemon starts once the file is root's and not world-writable"
chmod 666 "$W/a.conf"
out=$(ctl a reload 2>&1)
rc=$?
chmod 644 "$W/a.conf"
[ $rc != 0 ] && grep -q "writable by every user" <<<"$out" && grep -q "reload: configuration .* writable by every user" "$W/a.log" &&
	ctl a show daemon >/dev/null
log_test $? "reload of a world-writable file is refused; the daemon runs on ($(head -c 80 <<<"$out"))"

# a regular file where the control socket goes
sed "s|ctl_socket = \"$W/a.ctl\"|ctl_socket = \"$W/plain\"|" "$W/a.conf" > "$W/p.conf"
echo "keep me" > "$W/plain"
grep -q "$W/plain" "$W/p.conf" && start_fails "$W/p.conf" &&
	grep -q "ctl_socket $W/plain exists and is not a socket: not removing it" "$W/fail.log" &&
	[ "$(cat "$W/plain")" = "keep me" ]
log_test $? "ctl_socket pointing at a regular file: the start fails and the file is untouched"
it_done
