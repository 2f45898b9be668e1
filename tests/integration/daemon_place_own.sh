#!/usr/bin/env bash
# A placed run takes its budget out of the job's limit, and the job's own
# processes keep the rest: alice's job has 300 MiB; her run's one task holds
# 200 MiB, within its share; beside it, in her job script's cgroup, a plain
# process grows to 250 MiB. The kernel must stop the plain process, at what
# the run leaves (the launcher's 5 % reserve, 16 MiB at least), and not her
# task within its share at the job's limit, as it did before (the largest
# process of the job). With --share-job the job is shared as without
# memguard: the kernel stops the largest. A second run from the same script
# still sizes itself from the job's limit, and when the runs are gone the
# script's cgroup has no limit of its own again.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"
. "$(dirname "$0")/place_lib.sh"
cp "$memhog" "$work/memhog"
chmod 755 "$work/memhog"

# own JOB [OPTIONS...]: in alice's JOB (300M), a run of one task holding 200
# MiB, and beside it a plain process growing to 250 MiB; sets run_status
# (the run's exit), plain_status, and keeps (the script cgroup's memory.max
# and user.memguard.keeps while both ran).
own() {
	local j=$1
	shift
	job "$j" 300M
	rm -f "$share/plain.status" "$share/run.status" "$share/ready"
	as alice "$j" sh -c '
		"$0" $6 -n 1 --report "$1.json" -- sh -c "\"$2\" -H 6000 200 & sleep 2; touch \"$3\"; wait" 2>"$1.err" &
		run=$!
		while [ ! -e "$3" ]; do sleep 0.1; done
		"$2" -s 4 -d 20 -H 2000 250; echo $? >"$4"
		wait $run; echo $? >"$5"' \
		"$memguard" "$share/$j" "$work/memhog" "$share/ready" "$share/plain.status" "$share/run.status" "$*" &
	local pid=$!
	wait_for 60 test -e "$share/ready" || { cat "$share/$j.err" "$work/daemon.log"; fail "$j: the run did not start"; }
	keeps="$(cat "$cgroot/$j/task/memory.max") $(keeps_of "$cgroot/$j/task")"
	wait "$pid" || true
	plain_status=$(cat "$share/plain.status")
	run_status=$(cat "$share/run.status")
	note "$j: the script's cgroup: memory.max and keeps while the run ran: $keeps; plain process $plain_status, run $run_status"
}

echo "by default, the job's own process is stopped at what the run leaves"
own job1
assert_eq "$plain_status" 137 "the plain process beside the run (SIGKILL at its cgroup's limit)"
assert_eq "$run_status" 0 "the run, whose task held 200 MiB within its share"
assert_eq "$(json "$share/job1.json" 'r["mode"]')" cgroup "mode of alice's run"
# The run's budget is the job: the script's cgroup keeps 16 MiB more than it held (a shell and
# memguard's first process) when the run was placed, and says so in user.memguard.keeps.
read -r max kept <<<"$keeps"
assert_eq "$kept" "$max" "user.memguard.keeps against memory.max of the script's cgroup"
[ "$max" -ge $((16 << 20)) ] && [ "$max" -le $((32 << 20)) ] ||
	fail "memory.max of the script's cgroup during the run: $max, not 16 MiB more than a shell holds"
assert_eq "$(cat "$cgroot/job1/task/memory.max")" max "memory.max of the script's cgroup after the run"
assert_eq "$(keeps_of "$cgroot/job1/task")" none "user.memguard.keeps after the run"
remove_job job1 || fail "job1 could not be removed: $(find "$cgroot/job1")"

echo "with --share-job, the job is shared: the kernel stops the largest process"
own job2 --share-job
assert_eq "$keeps" "max none" "memory.max and keeps of the script's cgroup with --share-job"
[ "$run_status" != 0 ] || [ "$plain_status" != 0 ] || fail "450 MiB in a 300 MiB job, and nothing was stopped"
note "with --share-job the kernel stopped: run $run_status, plain process $plain_status"
remove_job job2 || fail "job2 could not be removed: $(find "$cgroot/job2")"

echo "a second run from the same script sizes itself from the job, not from what the first left"
job job3 300M
as alice job3 sh -c '
	"$0" -n 1 -- sleep 6 2>/dev/null &
	while [ "$(cat /sys/fs/cgroup/job3/task/memory.max)" = max ]; do sleep 0.1; done
	"$0" -n 1 --report "$1" -- true; s=$?
	wait; exit $s' "$memguard" "$share/second.json" 2>"$work/second.err" ||
	{ cat "$work/second.err"; fail "the second run failed"; }
assert_eq "$(json "$share/second.json" 'r["mode"]')" cgroup "mode of the second run"
budget=$(json "$share/second.json" 'r["budget_bytes"]')
[ "$budget" -gt $((200 << 20)) ] || fail "the second run's budget is $budget: sized from what the first left"
wait_for 10 sh -c '[ "$(cat "$0")" = max ]' "$cgroot/job3/task/memory.max" ||
	fail "the script's cgroup kept a limit after both runs: $(cat "$cgroot/job3/task/memory.max")"
remove_job job3 || fail "job3 could not be removed"
echo "PASS: the job's own processes keep what the run leaves of the job, and are the ones stopped there"
