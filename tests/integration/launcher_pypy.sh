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

# MemAvailable counts only part of the page cache a run leaves behind, and
# the budget follows MemAvailable: start each part from the same clean state.
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }

# The live set follows the share the guest gives (MemAvailable moves by tens
# of MiB between boots): three quarters of the PYPY_GC_MAX memguard derives.
drop_caches
"$memguard" -n 4 --dry-run --explain -- pypy3 "$churn" 2>"$work/explain"
cap=$(sed -n 's/.*PYPY_GC_MAX=\([0-9]*\)MB.*/\1/p' "$work/explain")
[ -n "$cap" ] || { cat "$work/explain"; fail "no PYPY_GC_MAX in memguard --explain"; }
live=$((cap * 3 / 4))
available=$(awk '/^MemAvailable:/ { print $2 * 1024 }' /proc/meminfo)

# One copy, PyPy's defaults, in a cgroup of its own without a limit.
cg=$cgroot/memguard-itest-pypy
rmdir "$cg" 2>/dev/null || true
mkdir "$cg"
sh -c 'echo $$ >'"$cg"'/cgroup.procs; exec pypy3 '"$churn $live $seconds"' 1' >/dev/null ||
	fail "pypy3 churn.py failed on its own"
alone=$(cat "$cg/memory.peak")
rmdir "$cg"
note "PYPY_GC_MAX=${cap}MB, so $live MiB live; one copy with PyPy's default GC peaked at $((alone >> 20)) MiB," \
	"four at $((4 * alone >> 20)) MiB against MemAvailable $((available >> 20)) MiB"
[ $((4 * alone)) -gt "$available" ] ||
	fail "four unguarded copies ($((4 * alone >> 20)) MiB) fit in MemAvailable: the test no longer shows anything"

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
