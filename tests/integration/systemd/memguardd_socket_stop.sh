#!/usr/bin/env bash
# A memguardd that the administrator stopped stays stopped, and a restart still
# refuses no one (tests/vm/run-suite.sh --systemd):
#   - after "systemctl stop memguardd", an ordinary user connects to the
#     placement socket and runs memguard: memguardd is not started again (the
#     socket went with it: a connection is refused, or closed unanswered while
#     the socket goes down, and memguard runs in degraded mode and says why);
#   - "systemctl start memguardd" brings back both;
#   - a connection made while "systemctl restart memguardd" has the old daemon
#     gone and the new one not yet started waits on the socket systemd holds,
#     and the new memguardd answers it; the same after memguardd is killed and
#     restarted by Restart=always.
# The restart window is widened by a drop-in (ExecStartPre=/bin/sleep 3,
# RestartSec=3s) that only this test installs, so the connection falls in it.
. "$(dirname "$0")/../lib.sh"
[ -d /run/systemd/system ] || fail "not running under systemd: use tests/vm/run-suite.sh --systemd"

sock=/run/memguard/place.sock
dropin=/run/systemd/system/memguardd.service.d

cleanup() {
	systemctl stop memguardd.service memguardd.socket >/dev/null 2>&1 || true
	rm -rf "$dropin" /etc/systemd/system/memguardd.service /etc/systemd/system/memguardd.socket /usr/local/bin/memguard
	systemctl daemon-reload || true
	rm -rf "$work"
}
trap cleanup EXIT

install -m 0755 "$memguardd" /usr/sbin/memguardd
install -m 0755 "$memguard" /usr/local/bin/memguard
cp "$top/packaging/systemd/memguardd.service" "$top/packaging/systemd/memguardd.socket" /etc/systemd/system/
id alice >/dev/null 2>&1 || useradd -m -s /bin/sh alice
chmod 0777 "$work"
systemctl daemon-reload
systemctl start memguardd.socket memguardd.service || { journalctl -u memguardd -b --no-pager; fail "start"; }
[ -S "$sock" ] || fail "systemd did not create the placement socket"

journal() { journalctl -u memguardd -u memguardd.socket -b --no-pager -o cat; }
as_alice() { setpriv --reuid=alice --regid=alice --init-groups -- "$@"; }
state() { systemctl show -p ActiveState --value "$1"; }
substate() { systemctl show -p SubState --value memguardd.service; }

# client OUT: as alice, connects to the socket, writes "connected" (or the
# errno's name) to OUT.state, then sends a line that is no request and writes
# the answer, up to 60 s later, to OUT.
client() {
	as_alice python3 -c '
import errno, socket, sys
out = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[2])
except OSError as e:
    open(out + ".state", "w").write(errno.errorcode.get(e.errno, str(e.errno)) + "\n")
    sys.exit(0)
open(out + ".state", "w").write("connected\n")
s.settimeout(60)
s.sendall(b"hello\n")
try:
    reply = s.recv(512).decode(errors="replace").strip()
except OSError as e:
    reply = "recv: " + errno.errorcode.get(e.errno, str(e.errno))
open(out, "w").write((reply or "closed without an answer") + "\n")
' "$1" "$sock"
}

echo "systemctl stop memguardd: an ordinary user's connection and run do not start it again"
systemctl stop memguardd
assert_eq "$(state memguardd.service)" inactive "memguardd after systemctl stop"
# At once: the socket may still be on its way down, and a connection made then
# is closed unanswered; after that, refused.
client "$work/stopped"
still_stopped() {
	sleep 3
	[ "$(state memguardd.service)" = inactive ] && return 0
	journal | tail -n 20
	fail "memguardd was started again after systemctl stop, by an ordinary user's $1: $(state memguardd.service)"
}
still_stopped "connection made at once"
wait_for 10 sh -c '[ "$(systemctl show -p ActiveState --value memguardd.socket)" = inactive ]' ||
	{ journal | tail -n 20; fail "memguardd.socket is still $(state memguardd.socket) after systemctl stop memguardd"; }
client "$work/stopped2"
as_alice memguard -n 1 --report "$work/stopped.json" -- true 2>"$work/stopped.err" ||
	{ cat "$work/stopped.err"; fail "alice's run failed while memguardd was stopped"; }
cat "$work/stopped.err"
still_stopped "connection and memguard run once the socket was down"
note "alice's connection right after the stop: $(cat "$work/stopped.state") $(cat "$work/stopped" 2>/dev/null || true)"
grep -qx 'ECONNREFUSED\|ENOENT\|connected' "$work/stopped.state" || fail "alice's first connection: $(cat "$work/stopped.state")"
if grep -qx connected "$work/stopped.state"; then
	assert_eq "$(cat "$work/stopped")" "closed without an answer" "a connection made while the socket went down"
fi
note "alice's connection once the socket is down: $(cat "$work/stopped2.state")"
grep -qx 'ECONNREFUSED\|ENOENT' "$work/stopped2.state" || fail "alice's second connection: $(cat "$work/stopped2.state")"
assert_eq "$(json "$work/stopped.json" 'r["mode"]')" degraded "alice's run while memguardd is stopped"
assert_contains "$work/stopped.err" "placement service at $sock: Connection refused" "the launcher says why it runs degraded"

echo "systemctl start memguardd: the socket comes back with it"
systemctl start memguardd || { journal; fail "start after stop"; }
assert_eq "$(state memguardd.service)" active "memguardd after systemctl start"
assert_eq "$(state memguardd.socket)" active "memguardd.socket after systemctl start memguardd"
[ -S "$sock" ] || fail "no placement socket after systemctl start memguardd"

# The restart window, widened for the test only.
mkdir -p "$dropin"
printf '[Service]\nExecStartPre=/bin/sleep 3\nRestartSec=3s\n' >"$dropin/50-socket-stop-test.conf"
systemctl daemon-reload

# restarted HOW OUT: a connection made while memguardd is down waits and is answered by the new one.
restarted() {
	local how=$1 out=$2 old at_connect
	old=$(systemctl show -p MainPID --value memguardd.service)
	rm -f "$out" "$out.state"
	case $how in
	restart) systemctl restart --no-block memguardd.service ;;
	crash) systemctl kill --signal=KILL --kill-who=main memguardd.service ;;
	esac
	wait_for 10 sh -c '[ "$(systemctl show -p MainPID --value memguardd.service)" != "$0" ]' "$old" ||
		fail "$how: memguardd $old is still running"
	client "$out" &
	wait_for 20 test -s "$out.state" || fail "$how: the client never connected"
	at_connect=$(substate)
	note "$how: memguardd.service was $at_connect when alice connected ($(cat "$out.state"))"
	assert_eq "$(cat "$out.state")" connected "$how: alice's connection while memguardd is down"
	case $at_connect in
	start-pre | auto-restart) ;;
	*) fail "$how: the connection was not made while memguardd was down (it was $at_connect): widen the window" ;;
	esac
	wait
	note "$how: the answer: $(cat "$out")"
	grep -q '^err ' "$out" || { journal | tail -n 20; fail "$how: the queued connection got no answer from memguardd: $(cat "$out")"; }
	assert_eq "$(state memguardd.service)" active "memguardd after the $how"
	assert_eq "$(state memguardd.socket)" active "memguardd.socket after the $how"
}

echo "systemctl restart memguardd: a connection made meanwhile waits for the new memguardd"
restarted restart "$work/restart"
echo "memguardd killed, restarted by Restart=always: a connection made meanwhile waits for it"
restarted crash "$work/crash"
