#!/usr/bin/env bash
# A task that forks children which allocate is accounted and killed as one:
# 3 children of 100 MiB each against a 160 MiB share, with or without
# memory.events's oom_group_kill.
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
# memory.oom.group (the launcher's default) kills the family together; memory.events counts each in
# oom_kill, and from 5.17 the group kill in oom_group_kill too. The report rests on oom_kill, so it
# says the same where the kernel has no oom_group_kill (5.10).
if kernel_has oom_group_kill; then note "$kernel_has_why"; else note "$kernel_has_why: the report rests on oom_kill alone"; fi
assert_eq "$(json "$work/r.json" "r['tasks'][0]['oom_kills'] >= 4")" True \
	"OOM kills counted for the parent and its 3 children ($(json "$work/r.json" "r['tasks'][0]['oom_kills']"))"
reason=$(json "$work/r.json" "r['tasks'][0]['reason']")
case $reason in "killed by the kernel: "*" share exceeded") ;; *) fail "task 0's reason in the report: $reason" ;; esac
assert_eq "$(json "$work/r.json" "r['tasks'][1]['status']")" 0 "other task"
assert_no_leftover
# Nothing of the killed family survives.
if pgrep -f "memhog -f 3" >/dev/null; then fail "children of the killed task survive"; fi
