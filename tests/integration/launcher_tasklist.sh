#!/usr/bin/env bash
# Task-list mode: 64 lines with N=4 run, {} becomes the line, at most 4 at once.
. "$(dirname "$0")/lib.sh"

seq 1 64 | sed 's/^/param-/' >"$work/list"
mkdir "$work/out"
"$memguard" -n 4 --tasks "$work/list" --report "$work/r.json" -- sh -c \
	'n=$(ls '"$work"'/out | grep -c running || true); touch '"$work"'/out/$MEMGUARD_TASK.running;
	 echo "$n" > '"$work"'/out/$MEMGUARD_TASK.concurrent; echo "{}" > '"$work"'/out/$MEMGUARD_TASK.param;
	 sleep 0.05; rm '"$work"'/out/$MEMGUARD_TASK.running' 2>"$work/err"
tail -3 "$work/err"
assert_eq "$(json "$work/r.json" "len(r['tasks'])")" 64 "task rows"
assert_eq "$(json "$work/r.json" "r['parallel']")" 4 "parallel"
assert_eq "$(json "$work/r.json" "all(t['status'] == 0 for t in r['tasks'])")" True "all succeeded"
assert_eq "$(cat "$work/out/17.param")" "param-18" "{} replaced by the line"
assert_eq "$(json "$work/r.json" "r['tasks'][63]['param']")" "param-64" "param in report"
max=$(cat "$work"/out/*.concurrent | sort -n | tail -1)
[ "$max" -le 3 ] || fail "saw $max other tasks running at once (limit 4 in all)"
assert_contains "$work/err" "64 succeeded, 0 failed" "summary"
assert_no_leftover
