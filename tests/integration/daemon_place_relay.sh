#!/usr/bin/env bash
# memguard's first process, which stays in the job's task cgroup, and the run memguardd placed beside it
# (docs/batch.md):
# 1. the first process exits only once memguardd has removed the run: with the launcher SIGKILLed, its
#    task is killed after the grace period (6 s here), and only then does the first process exit, so the
#    batch system's removal of the job finds nothing;
# 2. a batch system that freezes the job's task cgroup (a suspend) stops the run beside it: memguardd
#    freezes the run while its tether is frozen, and thaws it with it;
# 3. SIGTSTP to the first process stops it and the launcher; SIGCONT continues both.
# Before (a1c1d0c): 1. the first process gave up after 2 s, the run still there; 2. the run ran on;
# 3. the launcher ran on.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"
place_kill_grace=6s
. "$(dirname "$0")/place_lib.sh"

# ticks PID: the CPU time (user + system, in ticks) of PID.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
state() { awk '{ print $3 }' "/proc/$1/stat"; }
placed_task() { find "$cgroot/$1" -path '*memguard-run-*/task-0' 2>/dev/null | head -n 1; }

echo "1. the launcher SIGKILLed: its first process exits once the run is gone, after the grace period"
job job1 300M
as alice job1 "$memguard" -n 1 -- sleep 600 2>"$work/a1.err" &
bg=$!
wait_for 20 placed_tasks 1 || { cat "$work/a1.err" "$work/daemon.log"; fail "alice's run was not placed"; }
# memguard was exec'd: job1/task holds its first process alone, as a job script that execs memguard.
first=$(cat "$cgroot/job1/task/cgroup.procs")
assert_eq "$(cat "/proc/$first/comm")" memguard "what job1/task holds"
launcher=$(cat "$(dirname "$(placed_task job1)")/supervisor/cgroup.procs")
kill -KILL "$launcher"
sleep 3
kill -0 "$first" 2>/dev/null || fail "the first process exited 3 s after its launcher, before the grace period was over"
[ "$(placed_runs)" -eq 1 ] || fail "the run went before its grace period was over"
status=0
wait "$bg" || status=$?
no_placed_runs || fail "the first process exited before memguardd removed the run: $(run_dirs)"
assert_eq "$status" 137 "the first process's status (its launcher's SIGKILL)"
note "the first process exited after ${SECONDS}s, with the run gone"
remove_job job1 || fail "job1 could not be removed"

echo "2. the job's task cgroup frozen: the run beside it stops; thawed, it goes on"
job job2 300M
as alice job2 sh -c "$memguard -n 1 -- sh -c 'while :; do :; done'; :" 2>"$work/a2.err" &
wait_for 20 placed_tasks 1 || { cat "$work/a2.err" "$work/daemon.log"; fail "alice's second run was not placed"; }
run=$(dirname "$(placed_task job2)")
busy=$(cat "$run/task-0/cgroup.procs")
echo 1 >"$cgroot/job2/task/cgroup.freeze"
wait_for 10 grep -qx "frozen 1" "$run/cgroup.events" ||
	{ cat "$run/cgroup.events" "$work/daemon.log"; fail "the run was not frozen with its job's task cgroup"; }
a=$(ticks "$busy")
sleep 2
b=$(ticks "$busy")
note "the run's busy task while frozen: $a, then $b ticks"
assert_eq "$b" "$a" "the busy task's CPU time while its job is frozen"
echo 0 >"$cgroot/job2/task/cgroup.freeze"
wait_for 10 grep -qx "frozen 0" "$run/cgroup.events" || fail "the run was not thawed with its job's task cgroup"
sleep 1
[ "$(ticks "$busy")" -gt "$b" ] || fail "the busy task did not run again after the thaw"
assert_contains "$work/daemon.log" "frozen: cgroup job2/task is frozen" "the daemon says why"

echo "3. SIGTSTP to the first process stops the launcher too; SIGCONT continues both"
first=
for p in $(pgrep -u alice -x memguard); do grep -q "job2/task$" "/proc/$p/cgroup" && first=$p; done
launcher=$(cat "$run/supervisor/cgroup.procs")
[ -n "$first" ] && [ -n "$launcher" ] || fail "no first process ($first) or launcher ($launcher)"
kill -TSTP "$first"
wait_for 10 sh -c '[ "$(awk "{ print \$3 }" /proc/$0/stat)" = T ] && [ "$(awk "{ print \$3 }" /proc/$1/stat)" = T ]' \
	"$first" "$launcher" || fail "after SIGTSTP: the first process is $(state "$first"), the launcher $(state "$launcher")"
kill -CONT "$first"
wait_for 10 sh -c '[ "$(awk "{ print \$3 }" /proc/$0/stat)" != T ] && [ "$(awk "{ print \$3 }" /proc/$1/stat)" != T ]' \
	"$first" "$launcher" || fail "after SIGCONT: the first process is $(state "$first"), the launcher $(state "$launcher")"
note "SIGTSTP stopped the first process and the launcher (T), SIGCONT continued them"
kill -TERM "$first"
wait_for 20 no_placed_runs || fail "alice's second run was left"

stop_daemon
grep -i "frozen\|thawed\|grace" "$work/daemon.log" | sed 's/^/    /' || true
echo "PASS: the first process outlasts the run, and a frozen or stopped job stops the run"
