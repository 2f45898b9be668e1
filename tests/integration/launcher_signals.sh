#!/usr/bin/env bash
# Signals from the batch system reach every task; a task that ignores SIGTERM
# is killed after the grace period; no cgroup is left behind.
. "$(dirname "$0")/lib.sh"

# Task 0 exits on SIGTERM, task 1 ignores it.
"$memguard" -n 2 --grace 1s --report "$work/r.json" -- sh -c \
	'if [ "$MEMGUARD_TASK" = 1 ]; then exec '"$memhog"' -i -H 60000 8; else exec '"$memhog"' -H 60000 8; fi' \
	2>"$work/err" &
pid=$!
# Wait until both tasks run, then stop the run as a batch system would.
for _ in $(seq 100); do
	[ "$(find "$cgroot/memguard" -path '*run-*/task-*' -type d 2>/dev/null | wc -l)" -eq 2 ] && break
	sleep 0.05
done
sleep 0.3
start=$(date +%s%N)
kill -TERM "$pid"
set +e
wait "$pid"
status=$?
set -e
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
cat "$work/err"
note "exit $status after ${elapsed_ms} ms"
assert_eq "$status" 143 "exit status (task 0 ended by the forwarded SIGTERM)"
assert_eq "$(json "$work/r.json" "r['tasks'][0]['signal']")" SIGTERM "task 0"
assert_eq "$(json "$work/r.json" "r['tasks'][1]['signal']")" SIGKILL "task 1, killed after the grace period"
assert_contains "$work/err" "still running after the grace period" "reason"
[ "$elapsed_ms" -lt 10000 ] || fail "took ${elapsed_ms} ms to stop"
assert_no_leftover

# SIGUSR1 is forwarded and does not stop the run.
"$memguard" -n 1 --report "$work/u.json" -- sh -c 'trap "echo got-usr1; exit 7" USR1; while :; do sleep 0.05; done' \
	>"$work/out" 2>"$work/err" &
pid=$!
sleep 1
kill -USR1 "$pid"
set +e
wait "$pid"
status=$?
set -e
assert_eq "$status" 7 "task's own exit after SIGUSR1"
assert_contains "$work/out" got-usr1 "SIGUSR1 reached the task"

# Job control: SIGTSTP stops every task, then memguard; SIGCONT continues them all.
"$memguard" -n 2 --report "$work/c.json" -- sh -c 'while :; do :; done' 2>"$work/err" &
pid=$!
for _ in $(seq 100); do
	[ "$(find "$cgroot/memguard" -path '*run-*/task-*' -type d 2>/dev/null | wc -l)" -eq 2 ] && break
	sleep 0.05
done
tasks=$(pgrep -d' ' -P "$pid" -x sh || true)
[ "$(wc -w <<<"$tasks")" -eq 2 ] || fail "two tasks do not run: '$tasks'"
# state PID...: the run states of the processes, one letter each.
state() { for p in "$@"; do awk '{ printf "%s", $3 }' "/proc/$p/stat"; done; }
kill -TSTP "$pid"
for _ in $(seq 100); do
	# shellcheck disable=SC2086 # one word per pid
	[ "$(state "$pid" $tasks)" = TTT ] && break
	sleep 0.05
done
# shellcheck disable=SC2086
assert_eq "$(state "$pid" $tasks)" TTT "memguard and its two tasks after SIGTSTP"
kill -CONT "$pid"
for _ in $(seq 100); do
	# shellcheck disable=SC2086
	[[ $(state "$pid" $tasks) != *T* ]] && break
	sleep 0.05
done
# shellcheck disable=SC2086
[[ $(state "$pid" $tasks) != *T* ]] || fail "still stopped after SIGCONT: $(state "$pid" $tasks)"
kill -TERM "$pid"
set +e
wait "$pid"
status=$?
set -e
assert_eq "$status" 143 "exit status after SIGCONT, then SIGTERM"
assert_eq "$(json "$work/c.json" "' '.join(t['signal'] for t in r['tasks'])")" "SIGTERM SIGTERM" "the tasks, continued, then told"
assert_no_leftover
