#!/usr/bin/env bash
# memguardd's placement service for an ordinary user, alice: her runs get real
# cgroups limited by their job's limit, end with the job (what scancel does),
# go within the grace period when the launcher is SIGKILLed, and land in the
# job cgroup a Torque/PBS prologue prepared for her.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"
. "$(dirname "$0")/place_lib.sh"

echo "alice's run is placed, limited by her job, and removed afterwards"
job job1 300M
as alice job1 "$memguard" -n 2 --report "$share/a1.json" -- sleep 0.3 2>"$work/a1.err" ||
	{ cat "$work/a1.err" "$work/daemon.log"; fail "alice's placed run failed"; }
cat "$work/a1.err"
assert_eq "$(json "$share/a1.json" 'r["mode"]')" cgroup "mode of alice's run"
json "$share/a1.json" 'r["where"]' | grep -q '^memguard/user-' || fail "where: $(json "$share/a1.json" 'r["where"]')"
json "$share/a1.json" 'r["placed_by"]' | grep -q 'memory.max of job1' ||
	fail "placed_by: $(json "$share/a1.json" 'r["placed_by"]')"
[ "$(json "$share/a1.json" 'r["budget_bytes"]')" -le $((300 << 20)) ] || fail "budget above the job's 300M"
assert_contains "$work/a1.err" "placed by memguardd" "the summary says who placed it"
wait_for 5 no_placed_runs || fail "alice's run cgroup was left behind: $(ls "$cgroot/memguard")"

echo "the run's limit is root's: the user cannot raise it"
as alice job1 "$memguard" -n 1 -- sh -c '
	run=/sys/fs/cgroup$(dirname "$(cut -d: -f3 /proc/self/cgroup)")
	[ "$(cat "$run/memory.max")" = 314572800 ] || exit 3
	echo max >"$run/memory.max" 2>/dev/null && exit 4
	exit 0' 2>"$work/a2.err" || { cat "$work/a2.err"; fail "alice's run limit was not root's 300M (status $?)"; }

echo "scancel-like end of the job: the launcher is told, writes its report, nothing is left"
job job2 300M
as alice job2 sh -c "$memguard -n 2 --report $share/a3.json -- sleep 600; echo shell-after" \
	>"$work/a3.out" 2>"$work/a3.err" &
wait_for 20 placed_tasks 2 ||
	{ cat "$work/a3.err" "$work/daemon.log"; fail "alice's tethered run did not start"; }
echo 1 >"$cgroot/job2/cgroup.kill" # what Slurm does to the step after SIGTERM to the shell
wait_for 20 test -s "$share/a3.json" || { cat "$work/a3.err" "$work/daemon.log"; fail "no report after the job ended"; }
assert_eq "$(json "$share/a3.json" 'r["tasks"][0]["signal"]')" SIGTERM "task 0 after the job ended"
wait_for 10 no_procs_of alice || { ps -u alice -o pid,args; fail "alice's processes outlived her job"; }
wait_for 10 no_placed_runs || fail "the run cgroup outlived the job"
assert_contains "$work/daemon.log" "cgroup job2 ended; telling its launcher" "the daemon says why"

echo "the launcher SIGKILLed: its tasks go within the grace period"
job job3 300M
as alice job3 "$memguard" -n 2 -- sleep 600 2>/dev/null &
wait_for 20 placed_tasks 2 ||
	fail "alice's third run did not start"
pkill -KILL -u alice -x memguard
wait_for 10 no_procs_of alice || { ps -u alice -o pid,args; fail "tasks outlived their SIGKILLed launcher"; }
wait_for 10 no_placed_runs || fail "the run cgroup outlived its SIGKILLed launcher"
assert_contains "$work/daemon.log" "its launcher is gone" "the daemon says why"

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
assert_contains "$work/epilogue.out" "memguard: job 77.srv: memory.peak [0-9]" "the epilogue's line"
[ ! -e "$cgroot/memguard.jobs/77.srv" ] || fail "the epilogue left the job cgroup"

wait_for 10 no_placed_runs || true
stop_daemon
grep -i "placed run\|placed pid\|placement for" "$work/daemon.log" | sed 's/^/    /' || true
echo "PASS"
