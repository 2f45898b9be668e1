#!/usr/bin/env bash
# Without cgroups (--no-cgroups stands in for a node without a v2 memory
# controller) the launcher says so once and still guards: the RSS watchdog
# kills a runaway past its share; --require-cgroups turns that into an error.
. "$(dirname "$0")/lib.sh"

set +e
"$memguard" -n 2 --no-cgroups --mem-per-task 96M --rlimit-as off --report "$work/r.json" -- sh -c \
	'if [ "$MEMGUARD_TASK" = 1 ]; then exec '"$memhog"' -d 20 inf; else exec '"$memhog"' -H 1000 16; fi' \
	2>"$work/err"
status=$?
set -e
cat "$work/err"
assert_eq "$status" 137 "exit status"
assert_eq "$(json "$work/r.json" "r['mode']")" degraded "mode"
assert_eq "$(grep -c 'running without cgroups' "$work/err")" 1 "said once"
assert_contains "$work/err" "killed by memguard: RSS" "watchdog reason"
assert_eq "$(json "$work/r.json" "r['tasks'][0]['status']")" 0 "well-behaved task"

set +e
"$memguard" -n 1 --require-cgroups --cgroup-parent does/not/exist -- true 2>"$work/err"
status=$?
set -e
assert_eq "$status" 125 "--require-cgroups without usable cgroups"
