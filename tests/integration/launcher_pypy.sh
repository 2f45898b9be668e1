#!/usr/bin/env bash
# Debian's pypy3 running a garbage-churning program: 4 copies together
# outgrow the memory they are given without memguard's heap flag (shown here
# inside one cgroup capped at the same total, so the guest never stalls);
# with memguard all 4 finish, because PYPY_GC_MAX makes the GC collect in time.
. "$(dirname "$0")/lib.sh"
command -v pypy3 >/dev/null || fail "pypy3 is not installed (scripts/deps.sh test installs it)"

live=90    # MiB of live objects per task: fits a share with PYPY_GC_MAX, not without it
seconds=20
total=$((860 << 20))
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
note "without memguard: $unguarded_ok of 4 finished, $unguarded_kills OOM kills, peak $((peak >> 20)) MiB"
[ "$unguarded_kills" -ge 1 ] || fail "the unguarded copies did not outgrow ${total} bytes: calibrate live=$live"

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
assert_no_leftover
