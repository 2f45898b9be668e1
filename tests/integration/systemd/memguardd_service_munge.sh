#!/usr/bin/env bash
# A real service under the service guard (tests/vm/run-suite.sh --systemd --mem 1536): Debian's munged,
# from its own unit, with a [service munge] drop-in (a one-minute window). A leak is injected as the
# issue asks, by a process added to munge.service's cgroup that grows (tests/programs/svcmem); memguardd
# restarts munge.service through systemd, the unit's stop (KillMode=control-group) ends the injected
# process too, and munge works afterwards (munge -n | unmunge). Not slurmd: its KillMode=process would
# leave the injected process running.
. "$(dirname "$0")/../lib.sh"
[ -d /run/systemd/system ] || fail "not running under systemd: use tests/vm/run-suite.sh --systemd"
command -v munged >/dev/null || fail "no munged: munge is not installed on the host: run scripts/deps.sh test"

msgid=fb9ec08b963847259d68cb0727df92fd
# The guest runs other tests after this one (Slurm's use munge): nothing of it may stay.
cleanup() {
	systemctl stop munge memguardd memguardd.socket 2>/dev/null || true
	[ -z "${leak:-}" ] || kill -KILL "$leak" 2>/dev/null || true
	rm -f /etc/memguard/conf.d/munge.conf
	rm -rf "$work"
}
trap cleanup EXIT
install -m 0755 "$memguardd" /usr/sbin/memguardd
install -m 0755 "$build/tests/programs/svcmem" /usr/local/bin/svcmem
cp "$top/packaging/systemd/memguardd.service" "$top/packaging/systemd/memguardd.socket" /etc/systemd/system/
mkdir -p /etc/memguard/conf.d
printf '[service munge]\nwindow = 1min\n' >/etc/memguard/conf.d/munge.conf
# A key of this guest only, owned by munge and readable by nobody else (munged checks).
mkdir -p /etc/munge
dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
chown munge:munge /etc/munge /etc/munge/munge.key
chmod 0700 /etc/munge
chmod 0400 /etc/munge/munge.key
systemctl daemon-reload
systemctl start munge || { journalctl -u munge -b --no-pager; fail "start munge"; }
systemctl start memguardd.socket memguardd.service || {
	journalctl -u memguardd -b --no-pager
	fail "start memguardd"
}
works() { munge -n | unmunge >"$work/unmunge" 2>&1 && grep -q "^STATUS: *Success" "$work/unmunge"; }
works || { cat "$work/unmunge"; fail "munge does not work before the leak"; }
show() {
	journalctl -b --no-pager -o cat -u memguardd -u munge | sed 's/^/    /'
	memguardd --status 2>&1 | sed 's/^/    status: /'
}
munge_cg=$cgroot$(systemctl show -p ControlGroup --value munge.service)
pid0=$(systemctl show -p MainPID --value munge.service)
note "munged $pid0 in $munge_cg"

echo "a leak injected into munge.service's cgroup"
sync
echo 3 >/proc/sys/vm/drop_caches
# It would take the node's MemAvailable in three minutes.
rate=$(($(awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo) / 180))
/usr/local/bin/svcmem leak "$rate" --start 8 2>"$work/leak.log" &
leak=$!
echo "$leak" >"$munge_cg/cgroup.procs"
note "svcmem $leak leaks $rate KiB/s in munge.service"
t0=$SECONDS
restarted() { journalctl -b --no-pager -o cat MESSAGE_ID=$msgid MEMGUARD_UNIT=munge.service MEMGUARD_ACTION=restart | grep -q .; }
wait_for 240 restarted || { show; fail "munge.service was not restarted within 240 s"; }
note "restarted $((SECONDS - t0)) s after the leak began"
journalctl -b --no-pager -o verbose MESSAGE_ID=$msgid MEMGUARD_UNIT=munge.service MEMGUARD_ACTION=restart >"$work/entry"
assert_contains "$work/entry" "MEMGUARD_VERDICT=leaking" "why munge.service was restarted"
note "$(sed -n 's/^ *MESSAGE=//p' "$work/entry")"

# The restart ended the injected process: the unit's stop takes its whole cgroup.
status=0
wait "$leak" || status=$?
leak=
assert_contains "$work/leak.log" "stopping cleanly" "the injected process was told to stop (SIGTERM)"
note "the injected process ended with status $status: $(tail -n 1 "$work/leak.log")"
running_again() { [ "$(systemctl show -p ActiveState --value munge.service)" = active ]; }
wait_for 60 running_again || { show; fail "munge.service did not run again"; }
pid1=$(systemctl show -p MainPID --value munge.service)
[ "$pid1" != "$pid0" ] || fail "munged is the same process ($pid0): not restarted"
works || { cat "$work/unmunge"; show; fail "munge does not work after the restart"; }
note "munged $pid1 after the restart: $(grep '^STATUS' "$work/unmunge")"
# A clean stop: munged got SIGTERM from systemd, not a SIGKILL.
journalctl -b --no-pager -o cat -u munge >"$work/munge.journal"
grep -q "status=9/KILL" "$work/munge.journal" && { cat "$work/munge.journal"; fail "munged was killed, not stopped"; }
sed 's/^/    munge: /' "$work/munge.journal"
echo PASS
