#!/usr/bin/env bash
# Debian's pypy3 running a garbage-churning program, 4 copies in the same
# total memory: first without memguard (one cgroup capped at that total, so
# the guest never stalls), then with it. With memguard all 4 finish with no
# OOM kill, and PYPY_GC_MAX makes the GC collect earlier: together they peak
# lower than the unguarded copies. Whether the unguarded copies outgrow the
# total depends on the guest (in this 1 GiB guest they come within a few
# percent of it); that is measured and printed, not asserted.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
command -v pypy3 >/dev/null || fail "pypy3 is not installed (scripts/deps.sh test installs it)"

live=100   # MiB of live objects per task: fits a share with PYPY_GC_MAX, not without it
seconds=20
total=$((880 << 20))
churn=$top/tests/programs/churn.py

# Without memguard: the 4 copies in one cgroup with the same total memory.
cg=$cgroot/memguard-itest-pypy
rmdir "$cg" 2>/dev/null || true
mkdir "$cg"
echo "$total" >"$cg/memory.max"
echo 0 >"$cg/memory.swap.max"
pids=()
for i in 0 1 2 3; do
	sh -c 'echo $$ > '"$cg"'/cgroup.procs; exec pypy3 '"$churn"' '"$live"' '"$seconds"' '"$i" >/dev/null 2>&1 &
	pids+=($!)
done
unguarded_ok=0
for p in "${pids[@]}"; do wait "$p" && unguarded_ok=$((unguarded_ok + 1)) || true; done
unguarded_kills=$(awk '/^oom_kill /{print $2}' "$cg/memory.events")
peak=$(cat "$cg/memory.peak")
rmdir "$cg"
note "without memguard: $unguarded_ok of 4 finished, $unguarded_kills OOM kills, peak $((peak >> 20)) MiB of $((total >> 20)) MiB"

# With memguard, the same total.
set +e
"$memguard" -n 4 --mem "$total" --report "$work/r.json" -- pypy3 "$churn" "$live" "$seconds" 2>"$work/err"
status=$?
set -e
cat "$work/err"
assert_eq "$(json "$work/r.json" "r['runtime']")" pypy "runtime detected"
assert_eq "$status" 0 "all four finished"
assert_eq "$(json "$work/r.json" "sum(t['oom_kills'] for t in r['tasks'])")" 0 "OOM kills with memguard"
assert_contains "$work/err" "4 succeeded, 0 failed" "summary"
guarded=$(json "$work/r.json" "sum(t['peak_bytes'] for t in r['tasks'])")
note "with memguard: the 4 tasks' peaks add up to $((guarded >> 20)) MiB"
[ "$guarded" -lt "$peak" ] || fail "PYPY_GC_MAX did not lower the peak: $guarded >= $peak"
assert_no_leftover
