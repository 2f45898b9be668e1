#!/usr/bin/env bash
# memguard itself SIGKILLed (the OOM killer, a batch system's hard kill, a
# user's kill -9): the tasks' main processes die with it within a bounded
# time, on cgroup v2 (root, no memguardd) and in degraded mode, where a
# watcher process kills their children and orphans too; the run's
# cgroup it could not remove is killed and removed by the next run. Before,
# the tasks ran on and run-<pid> stayed forever. (A run placed by memguardd
# is cleaned by memguardd: daemon_place.sh.)
. "$(dirname "$0")/lib.sh"

# Whatever a failed run leaves behind must not outlive the test.
trap kill_recorded EXIT

# Each task: a child that sleeps (a descendant), a grandchild that left by
# setsid and a double fork (an orphan), and the main process, which records
# the pids and then sleeps too.
cat >"$work/task.sh" <<SCRIPT
#!/bin/sh
sleep 300 &
echo \$! >$work/pid.child.\$MEMGUARD_TASK.new
mv $work/pid.child.\$MEMGUARD_TASK.new $work/pid.child.\$MEMGUARD_TASK
setsid sh -c 'sleep 300 & echo \$! >$work/pid.orphan.\$MEMGUARD_TASK.new' &
wait \$!
mv $work/pid.orphan.\$MEMGUARD_TASK.new $work/pid.orphan.\$MEMGUARD_TASK
echo \$\$ >$work/pid.main.\$MEMGUARD_TASK.new
mv $work/pid.main.\$MEMGUARD_TASK.new $work/pid.main.\$MEMGUARD_TASK
exec sleep 300
SCRIPT

# start_and_kill ARGS...: starts memguard -n 2 with ARGS, waits until both
# tasks run, SIGKILLs memguard, and waits (5 s at most) for both tasks' main
# processes to be gone.
start_and_kill() {
	rm -f "$work"/pid.*
	"$memguard" -n 2 --mem-per-task 64M "$@" -- sh "$work/task.sh" 2>"$work/err" &
	launcher=$!
	for _ in $(seq 200); do
		[ -s "$work/pid.main.0" ] && [ -s "$work/pid.main.1" ] && break
		sleep 0.05
	done
	[ -s "$work/pid.main.0" ] && [ -s "$work/pid.main.1" ] || { cat "$work/err"; fail "tasks did not start"; }
	kill -KILL "$launcher"
	set +e
	wait "$launcher"
	status=$?
	set -e
	assert_eq "$status" 137 "memguard's own status"
	local start=$(date +%s%N) main0 main1
	main0=$(cat "$work/pid.main.0")
	main1=$(cat "$work/pid.main.1")
	while alive "$main0" || alive "$main1"; do
		[ $(($(date +%s%N) - start)) -lt 5000000000 ] || break
		sleep 0.05
	done
	local ms=$((($(date +%s%N) - start) / 1000000))
	alive "$main0" && fail "task 0's main process $main0 outlived memguard ($ms ms)"
	alive "$main1" && fail "task 1's main process $main1 outlived memguard ($ms ms)"
	note "main processes gone $ms ms after the SIGKILL"
}

# 1. cgroup v2, as root, no memguardd. A live launcher's run beside the
# stale one must not be touched by the reaping.
"$memguard" -n 1 -- sleep 120 2>"$work/err.live" &
live=$!
for _ in $(seq 200); do
	[ -d "$cgroot/memguard/run-$live/task-0" ] && break
	sleep 0.05
done
[ -d "$cgroot/memguard/run-$live/task-0" ] || fail "the live run did not start"
start_and_kill
run="$cgroot/memguard/run-$launcher"
[ -d "$run" ] || fail "no $run: the run was not in a cgroup"
child0=$(cat "$work/pid.child.0")
if alive "$child0"; then
	note "task 0's child $child0 lives on in $run until the next run (PR_SET_PDEATHSIG is not inherited)"
fi
left=$(find "$run" -name cgroup.procs -exec cat {} + | wc -l)
"$memguard" -v -n 1 -- true 2>"$work/err.next"
grep -v '^memguard: debug: ' "$work/err.next" || true
[ -d "$run" ] && fail "the next run left the stale $run"
assert_contains "$work/err.next" "removed stale cgroup .*run-$launcher" "one line for the reaped run"
# The reaping's kill, with no pidfds before it: cgroup.kill where the kernel has it (6.1), else
# freeze, SIGKILL each of the processes left, thaw (5.10).
line=$(grep -F "memguard: debug: kill $run: " "$work/err.next") || { cat "$work/err.next"; fail "no kill of $run logged"; }
note "$left processes left in the stale run; ${line#*debug: }"
((left > 0)) || fail "nothing was left in the stale run to kill"
if kernel_has cgroup.kill; then
	assert_eq "$line" "memguard: debug: kill $run: cgroup.kill" "the reaping's kill ($kernel_has_why)"
else
	s=es
	((left > 1)) || s=
	assert_eq "$line" "memguard: debug: kill $run: no cgroup.kill: froze it (frozen), SIGKILLed $left process$s one by one, thawed it" \
		"the reaping's kill ($kernel_has_why)"
fi
[ -d "$cgroot/memguard/run-$live" ] || fail "the next run removed a live launcher's run-$live"
alive "$child0" && fail "task 0's child $child0 outlived the reaping of its run"
kill -TERM "$live"
set +e
wait "$live"
status=$?
set -e
assert_eq "$status" 143 "the live run, untouched until now"
assert_no_leftover

# 2. Degraded mode: no cgroup to kill as a unit, no run for the next launcher.
# memguard's watcher kills every process of the run (MEMGUARD_RUN in its
# environment) once the launcher is gone: within the grace period and a scan.
start_and_kill --no-cgroups --rlimit-as off --grace 2s
child0=$(cat "$work/pid.child.0")
orphan0=$(cat "$work/pid.orphan.0")
start=$(date +%s%N)
while alive "$child0" || alive "$orphan0"; do
	[ $(($(date +%s%N) - start)) -lt 15000000000 ] || break
	sleep 0.1
done
ms=$((($(date +%s%N) - start) / 1000000))
alive "$child0" && fail "degraded: task 0's child $child0 outlived memguard ($ms ms)"
alive "$orphan0" && fail "degraded: task 0's double-forked orphan $orphan0 outlived memguard ($ms ms)"
note "degraded: task 0's child and orphan gone $ms ms after the main processes"
