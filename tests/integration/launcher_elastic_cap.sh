#!/usr/bin/env bash
# Elastic shares without memguardd: a task may use more than its share while
# the others leave room, and the kernel keeps the tasks together inside the
# budget, because the run's cgroup is capped at it. Task 0 needs 200 MiB
# against a 160 MiB share and finishes (strict shares would kill it); the
# runaway dies inside the run, its reason says the limit above the task ran
# out, and the heartbeat outside the run stays on time.
. "$(dirname "$0")/lib.sh"
enable_root_controllers

"$build/tests/programs/heartbeat" 20 >"$work/heartbeat" &
hb=$!
set +e
"$memguard" --elastic -n 4 --mem 640M --report "$work/r.json" -- sh -c '
	case $MEMGUARD_TASK in
	0) cat "/sys/fs/cgroup$(cut -d: -f3 /proc/self/cgroup)/../memory.max" >'"$work"'/run_max
	   exec '"$memhog"' -d 40 -H 5000 200 ;;
	3) exec '"$memhog"' -d 10 inf ;;
	*) exec '"$memhog"' -d 40 -H 5000 100 ;;
	esac' 2>"$work/err"
status=$?
set -e
wait "$hb"
cat "$work/err"
assert_eq "$status" 137 "exit status (the runaway's SIGKILL)"
assert_eq "$(json "$work/r.json" "r['shares']")" elastic "share mode"
assert_eq "$(json "$work/r.json" "r['share_bytes']")" $((160 << 20)) "share"
assert_eq "$(json "$work/r.json" "r['budget_bytes']")" $((640 << 20)) "budget"
assert_eq "$(json "$work/r.json" "r['run_max_bytes']")" $((640 << 20)) "run cap in the report"
assert_eq "$(cat "$work/run_max")" $((640 << 20)) "memory.max of the run's cgroup, read by a task"
assert_eq "$(json "$work/r.json" "[t['status'] for t in r['tasks']]")" "[0, 0, 0, 137]" "task statuses"
peak0=$(json "$work/r.json" "r['tasks'][0]['peak_bytes']")
[ "$peak0" -gt $((160 << 20)) ] || fail "task 0 peaked at $peak0, not above its share"
assert_contains "$work/err" "killed by the kernel: memory ran out above the task" "runaway's reason"
late=$(cat "$work/heartbeat")
note "task 0 peaked at $((peak0 >> 20)) MiB against a 160 MiB share; worst heartbeat lateness $late ms"
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 1000 else 1)" "$late" ||
	fail "heartbeat ran late by $late ms"
assert_no_leftover
