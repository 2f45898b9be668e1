#!/usr/bin/env bash
# Tested as an attacker would (docs/security.md, "Event storms"): alice fills
# her own placed run with 3,000 empty cgroups, then makes and removes one
# more as fast as she can. Each change raises an inotify event on a directory
# memguardd watches. memguardd must not read its guard list again for each:
# the rescans stay within one per 250 ms (ten times what the last one took
# when that is more), bob's run, asked for meanwhile, is still placed, and
# memguardd's own memory stays small.
# Counts, not times: the time a kill takes meanwhile is measured in
# bench/storm.sh.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"
# The unit's LimitMEMLOCK: memguardd locks its memory within it.
ulimit -l $((64 << 10))
place_daemon_conf="metrics_file = /run/memguard-storm.prom
metrics_interval = 1s"
. "$(dirname "$0")/place_lib.sh"
metrics=/run/memguard-storm.prom

# The storm itself, copied where the stormer (another uid) can read it.
install -m 644 "$top/tests/programs/cgstorm.py" "$work/storm.py"

# rescans: sets rescans_at (seconds) and rescans_n once memguardd wrote the
# metrics file anew.
rescans() {
	local before
	before=$(stat -c %y "$metrics" 2>/dev/null || echo none)
	wait_for 10 sh -c '[ "$(stat -c %y "$0" 2>/dev/null)" != "$1" ]' "$metrics" "$before" ||
		fail "memguardd did not write $metrics within 10 s"
	rescans_at=$(date +%s.%N)
	rescans_n=$(awk '$1 == "memguardd_guard_rescans_total" { print $2 }' "$metrics")
	[ -n "$rescans_n" ] || fail "no memguardd_guard_rescans_total in $metrics: $(cat "$metrics")"
}

job job1 600M
job job2 300M
as alice job1 "$memguard" -n 1 -- python3 "$work/storm.py" "$share/ops" "$share/stop" 2>"$work/alice.err" &
alice=$!
wait_for 120 test -s "$share/ops" || { cat "$work/alice.err" "$work/daemon.log"; fail "alice's storm did not start"; }
rescans
t0=$rescans_at r0=$rescans_n
ops0=$(cat "$share/ops")

echo "bob's run is placed while the storm goes on"
as bob job2 "$memguard" -n 1 --report "$share/b.json" -- true 2>"$work/bob.err" ||
	{ cat "$work/bob.err"; fail "bob's run failed during the storm"; }
assert_eq "$(json "$share/b.json" 'r["mode"]')" cgroup "mode of bob's run during the storm"

sleep 10
rescans
t1=$rescans_at r1=$rescans_n
ops1=$(cat "$share/ops")
touch "$share/stop"
wait "$alice" || { cat "$work/alice.err"; fail "alice's run failed"; }

hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$daemon_pid/status")
locked=$(awk '$1 == "VmLck:" { print $2 }' "/proc/$daemon_pid/status")
ops=$((ops1 - ops0))
n=$((r1 - r0))
# One per 250 ms at most, and a few of the periodic and start-up kind.
allowed=$(python3 -c "import sys; print(int((float(sys.argv[2]) - float(sys.argv[1])) / 0.25) + 4)" "$t0" "$t1")
note "$ops mkdir and rmdir in $(python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))" "$t0" "$t1") s caused $n rescans (at most $allowed allowed)"
note "the last rescan took $(awk '$1 == "memguardd_guard_rescan_seconds" { print $2 }' "$metrics") s"
[ "$ops" -ge 2000 ] || fail "the storm made only $ops changes: no storm to measure"
[ "$n" -le "$allowed" ] || fail "$n rescans for $ops changes: more than one per 250 ms ($allowed)"
[ "$n" -ge 1 ] || fail "no rescan at all during the storm: new cgroups would never be guarded"
# What the unit's LimitMEMLOCK (64M) must hold with room to spare: the guard
# takes 1,024 cgroups of a directory at most, however many alice makes.
note "memguardd's peak resident memory: $hwm KiB; locked: $locked KiB of the 65536 allowed"
! grep -q "mlockall" "$work/daemon.log" || fail "memguardd could not lock its memory within 64 MiB"
[ "$hwm" -le $((32 << 10)) ] || fail "memguardd's peak resident memory reached $hwm KiB during the storm"
echo "PASS: a mkdir/rmdir storm causes at most one rescan per 250 ms, and placement is served meanwhile"
