#!/usr/bin/env bash
# Debian's pypy3 running a garbage-churning program. One copy alone under
# PyPy's default GC shows how far a lazy collector lets the heap grow: four
# such copies outgrow the memory the guest has available. Under memguard (the default budget,
# strict shares) all 4 finish with no OOM kill, because PYPY_GC_MAX from the
# share makes the GC collect in time.
#
# The unguarded copy runs alone and without a limit: four of them together in
# a capped cgroup would thrash at the cap (reclaiming the interpreter's own
# text from the 9p root) for minutes before an OOM kill.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
command -v pypy3 >/dev/null || fail "pypy3 is not installed (scripts/deps.sh test installs it)"

seconds=12
churn=$top/tests/programs/churn.py

# One copy, PyPy's defaults, in a cgroup of its own without a limit.
pypy_lazy_stage memguard-itest-pypy

drop_caches
set +e
"$memguard" -n 4 --explain --report "$work/r.json" -- pypy3 "$churn" "$live" "$seconds" 2>"$work/err"
status=$?
set -e
cat "$work/err"
assert_eq "$(json "$work/r.json" "r['runtime']")" pypy "runtime detected"
assert_contains "$work/err" "PYPY_GC_MAX=" "heap flag set"
assert_eq "$status" 0 "all four finished"
assert_eq "$(json "$work/r.json" "sum(t['oom_kills'] for t in r['tasks'])")" 0 "OOM kills with memguard"
assert_contains "$work/err" "4 succeeded, 0 failed" "summary"
guarded=$(json "$work/r.json" "max(t['peak_bytes'] for t in r['tasks'])")
share=$(json "$work/r.json" "r['share_bytes']")
note "with memguard: the largest peak was $((guarded >> 20)) MiB of a $((share >> 20)) MiB share"
[ "$guarded" -lt "$alone" ] || fail "PYPY_GC_MAX did not lower the peak: $guarded >= $alone"
assert_no_leftover
