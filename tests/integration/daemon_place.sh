#!/usr/bin/env bash
# memguardd's placement service for an ordinary user, alice: her runs get real
# cgroups inside their job, end with the job (scancel as Slurm 22.05 and 25.05
# do it, with and without exec), leave nothing that stops the job's removal,
# go within the grace period when the launcher is SIGKILLed, and land in the
# job cgroup a Torque/PBS prologue prepared for her.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"
. "$(dirname "$0")/place_lib.sh"

echo "alice's run is placed inside her job, beside her script's cgroup, and removed afterwards"
job job1 300M
as alice job1 "$memguard" -n 2 --report "$share/a1.json" -- sleep 0.3 2>"$work/a1.err" ||
	{ cat "$work/a1.err" "$work/daemon.log"; fail "alice's placed run failed"; }
cat "$work/a1.err"
assert_eq "$(json "$share/a1.json" 'r["mode"]')" cgroup "mode of alice's run"
json "$share/a1.json" 'r["where"]' | grep -q '^job1/memguard-run-' || fail "where: $(json "$share/a1.json" 'r["where"]')"
json "$share/a1.json" 'r["placed_by"]' | grep -q 'memory.max of job1' ||
	fail "placed_by: $(json "$share/a1.json" 'r["placed_by"]')"
[ "$(json "$share/a1.json" 'r["budget_bytes"]')" -le $((300 << 20)) ] || fail "budget above the job's 300M"
assert_contains "$work/a1.err" "placed by memguardd" "the summary says who placed it"
# The first process stays until memguardd removed the run: the job's own cleanup then finds nothing.
no_placed_runs || fail "alice's run cgroup was left when memguard ended: $(run_dirs)"
remove_job job1 || fail "job1 could not be removed after the run: $(find "$cgroot/job1")"

echo "the job's limit holds the run: it is inside the job, and the limit is root's"
job job1 300M
as alice job1 "$memguard" -n 1 -- sh -c '
	run=/sys/fs/cgroup$(dirname "$(cut -d: -f3 /proc/self/cgroup)")
	case $run in */job1/memguard-run-*) ;; *) exit 3 ;; esac
	[ "$(cat "$run/../memory.max")" = 314572800 ] || exit 4
	echo max >"$run/../memory.max" 2>/dev/null && exit 5
	exit 0' 2>"$work/a2.err" || { cat "$work/a2.err"; fail "alice's run was not inside her 300M job (status $?)"; }

echo "scancel as Slurm 22.05 does it: SIGTERM to the job script, SIGKILL to what is left in its cgroup"
job job2 300M
as alice job2 sh -c "$memguard -n 2 --report $share/a3.json -- sleep 600; echo shell-after" \
	>"$work/a3.out" 2>"$work/a3.err" &
wait_for 20 placed_tasks 2 ||
	{ cat "$work/a3.err" "$work/daemon.log"; fail "alice's tethered run did not start"; }
pkill -TERM -u alice -x sh
sleep 0.05
for pid in $(cat "$cgroot/job2/task/cgroup.procs"); do kill -KILL "$pid" 2>/dev/null || true; done
wait_for 20 test -s "$share/a3.json" || { cat "$work/a3.err" "$work/daemon.log"; fail "no report after the job ended"; }
assert_eq "$(json "$share/a3.json" 'r["tasks"][0]["signal"]')" SIGTERM "task 0 after the job ended"
wait_for 10 no_procs_of alice || { ps -u alice -o pid,args; fail "alice's processes outlived her job"; }
wait_for 10 no_placed_runs || fail "the run cgroup outlived the job"
remove_job job2 || fail "job2 could not be removed after the run: $(find "$cgroot/job2")"
assert_contains "$work/daemon.log" "cgroup job2/task ended; telling its launcher" "the daemon says why"

echo "scancel of a script that exec'd memguard: the launcher's first process gets SIGTERM and relays it"
job job5 300M
as alice job5 "$memguard" -n 2 --report "$share/a5.json" -- sleep 600 2>"$work/a5.err" &
shell=$!
wait_for 20 placed_tasks 2 || { cat "$work/a5.err" "$work/daemon.log"; fail "alice's exec'd run did not start"; }
first=$(pgrep -o -u alice -x memguard)
assert_eq "$(cat "$cgroot/job5/task/cgroup.procs")" "$first" "what the job's cgroup holds: memguard's first process"
kill -TERM "$first"
wait "$shell" || true
test -s "$share/a5.json" || { cat "$work/a5.err" "$work/daemon.log"; fail "no report after SIGTERM"; }
assert_eq "$(json "$share/a5.json" 'r["tasks"][0]["signal"]')" SIGTERM "task 0 after SIGTERM"
# The first process ends only once the run is gone, so the batch system's rmdir succeeds at once.
no_placed_runs || fail "the run was left when memguard's first process ended: $(run_dirs)"
remove_job job5 || fail "job5 could not be removed right after memguard ended: $(find "$cgroot/job5")"

echo "a job killed whole (cgroup.kill as Slurm 25.05 does the step; before 5.14, each process): nothing of the run is left"
job job2 300M
as alice job2 "$memguard" -n 2 -- sleep 600 2>/dev/null &
wait_for 20 placed_tasks 2 || fail "alice's run in job2 did not start"
cg_kill "$cgroot/job2"
wait_for 10 no_procs_of alice || { ps -u alice -o pid,args; fail "alice's processes outlived cgroup.kill"; }
wait_for 10 no_placed_runs || fail "the run cgroup outlived cgroup.kill"
remove_job job2 || fail "job2 could not be removed: $(find "$cgroot/job2")"

echo "the launcher SIGKILLed: its tasks go within the grace period"
job job3 300M
as alice job3 "$memguard" -n 2 -- sleep 600 2>/dev/null &
wait_for 20 placed_tasks 2 ||
	fail "alice's third run did not start"
pkill -KILL -u alice -x memguard
wait_for 10 no_procs_of alice || { ps -u alice -o pid,args; fail "tasks outlived their SIGKILLed launcher"; }
wait_for 10 no_placed_runs || fail "the run cgroup outlived its SIGKILLed launcher"
assert_contains "$work/daemon.log" "its launcher is gone" "the daemon says why"

echo "a cgroup with a limit of its own: no run beside it, memguard runs degraded inside it"
job job6 300M
mkdir -p "$cgroot/job6/own"
echo 100M >"$cgroot/job6/own/memory.max"
as alice job6/own/ "$memguard" -n 1 --report "$share/a6.json" -- true 2>"$work/a6.err" ||
	{ cat "$work/a6.err"; fail "alice's run in a self-limited cgroup failed"; }
assert_eq "$(json "$share/a6.json" 'r["mode"]')" degraded "mode in a self-limited cgroup"
assert_contains "$work/a6.err" "sets memory.max itself" "the launcher says why"
no_placed_runs || fail "a run was made beside a self-limited cgroup: $(run_dirs)"

echo "Torque path: alice's run lands in the job cgroup the prologue prepared for her"
"$top/packaging/pbs/prologue" 77.srv alice alice >/dev/null
job job4
as alice job4 env PBS_JOBID=77.srv "$memguard" -n 2 --report "$share/a4.json" -- sleep 0.2 2>"$work/a4.err" ||
	{ cat "$work/a4.err"; fail "alice's Torque-style run failed"; }
json "$share/a4.json" 'r["where"]' | grep -q '^memguard.jobs/77.srv/run-' ||
	fail "Torque run not under the job cgroup: $(json "$share/a4.json" 'r["where"]')"
# The epilogue's line counts the run: the job cgroup's memory.peak includes the tasks that ran below it.
"$top/packaging/pbs/epilogue" 77.srv alice alice >"$work/epilogue.out" 2>&1 || fail "the epilogue failed"
cat "$work/epilogue.out"
# Before 5.19 the kernel keeps no memory.peak, and the line says so.
if [ -e "$cgroot/job4/memory.peak" ]; then
	assert_contains "$work/epilogue.out" "memguard: job 77.srv: memory.peak [0-9]" "the epilogue's line"
else
	assert_contains "$work/epilogue.out" "memguard: job 77.srv: memory.peak not available (kernel before 5.19)" \
		"the epilogue's line without memory.peak"
fi
[ ! -e "$cgroot/memguard.jobs/77.srv" ] || fail "the epilogue left the job cgroup"

wait_for 10 no_placed_runs || true
stop_daemon
grep -i "placed run\|placed pid\|placement for" "$work/daemon.log" | sed 's/^/    /' || true
echo "PASS"
