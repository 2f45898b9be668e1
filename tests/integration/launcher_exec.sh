#!/usr/bin/env bash
# A task that cannot execute is reported in its own row; the others run. Bad
# input is a one-line error and exit 125.
. "$(dirname "$0")/lib.sh"

printf '%s\n' true /nonexistent/program true >"$work/list"
set +e
"$memguard" -n 3 --tasks "$work/list" --report "$work/r.json" -- {} 2>"$work/err"
status=$?
set -e
cat "$work/err"
assert_eq "$status" 127 "exit status"
assert_eq "$(json "$work/r.json" "[t['status'] for t in r['tasks']]")" "[0, 127, 0]" "statuses"
assert_contains "$work/err" "cannot execute: No such file or directory" "reason"
assert_no_leftover

expect_125() {
	local what=$1
	shift
	set +e
	"$memguard" "$@" 2>"$work/err" >/dev/null
	local s=$?
	set -e
	assert_eq "$s" 125 "$what"
	assert_eq "$(wc -l <"$work/err")" 1 "$what: one line"
	note "$what: $(cat "$work/err")"
}
: >"$work/empty"
expect_125 "N=0" -n 0 -- true
expect_125 "bad size" --mem-per-task 4XB -- true
expect_125 "no command" -n 2 --
expect_125 "empty task file" --tasks "$work/empty" -- true
expect_125 "missing task file" --tasks "$work/missing" -- true
expect_125 "share below the minimum" -n 100000 -- true
