#!/usr/bin/env bash
# A task that forks children which allocate is accounted and killed as one:
# 3 children of 100 MiB each against a 160 MiB share.
. "$(dirname "$0")/lib.sh"

set +e
"$memguard" -n 2 --mem-per-task 160M --report "$work/r.json" -- sh -c \
	'if [ "$MEMGUARD_TASK" = 0 ]; then exec '"$memhog"' -f 3 -H 3000 100; else exec '"$memhog"' -H 500 20; fi' \
	2>"$work/err"
status=$?
set -e
cat "$work/err"
assert_eq "$status" 137 "exit status"
assert_eq "$(json "$work/r.json" "r['tasks'][0]['signal']")" SIGKILL "forking task killed"
assert_eq "$(json "$work/r.json" "r['tasks'][0]['oom_kills'] >= 1")" True "OOM kill counted for the task"
assert_eq "$(json "$work/r.json" "r['tasks'][1]['status']")" 0 "other task"
assert_no_leftover
# Nothing of the killed family survives.
if pgrep -f "memhog -f 3" >/dev/null; then fail "children of the killed task survive"; fi
