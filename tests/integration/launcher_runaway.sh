#!/usr/bin/env bash
# 4 tasks, one a runaway: the runaway dies in its own cgroup, the 3 others
# exit 0, and the summary says so.
. "$(dirname "$0")/lib.sh"

set +e
"$memguard" -n 4 --report "$work/r.json" -- sh -c \
	'if [ "$MEMGUARD_TASK" = 2 ]; then exec '"$memhog"' inf; else exec '"$memhog"' -H 1500 60; fi' \
	2>"$work/err"
status=$?
set -e
cat "$work/err"
assert_eq "$status" 137 "exit status (the runaway's SIGKILL)"
assert_eq "$(json "$work/r.json" "r['mode']")" cgroup "mode"
assert_eq "$(json "$work/r.json" "[t['status'] for t in r['tasks']]")" "[0, 0, 137, 0]" "task statuses"
assert_eq "$(json "$work/r.json" "r['tasks'][2]['oom_kills'] >= 1")" True "runaway OOM kill counted"
assert_eq "$(json "$work/r.json" "sum(t['oom_kills'] for i,t in enumerate(r['tasks']) if i != 2)")" 0 "innocent OOM kills"
assert_contains "$work/err" "killed by the kernel: .* share exceeded" "summary reason"
assert_contains "$work/err" "3 succeeded, 1 failed" "summary totals"
share=$(json "$work/r.json" "r['share_bytes']")
peak=$(json "$work/r.json" "r['tasks'][2]['peak_bytes']")
[ "$peak" -le "$share" ] || fail "runaway peak $peak above its share $share"
assert_no_leftover
