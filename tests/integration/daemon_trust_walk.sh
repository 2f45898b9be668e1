#!/usr/bin/env bash
# Tested as an attacker would: memguardd counts a guarded cgroup it cannot
# look through for protected processes as protected, so the attacker tries
# to make that look fail in the task cgroup they own: a threaded child (its
# cgroup.procs cannot be read) and 600 nested cgroups (a walk that opens
# each level runs out of fds). Their runaway must still be the one killed,
# and the victim's task left alone.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"

attack_stage mgwalk

two_jobs "$jobs" $((1024 << 20)) $((800 << 20))
# Each task's share as a root launcher records it: the victim's 250 MiB are
# within theirs, the attacker's runaway soon is not.
set_share "$jobs/job-v/task" $((450 << 20))
set_share "$jobs/job-a/task" $((200 << 20))
as mgattacker sh -c '
	mkdir "$0/threaded" && echo threaded >"$0/threaded/cgroup.type" &&
	deep=$0/deep && for _ in $(seq 600); do deep=$deep/d; done && mkdir -p "$deep"' "$jobs/job-a/task" ||
	fail "the attacker could not build their tree"
assert_eq "$(cat "$jobs/job-a/task/threaded/cgroup.type")" threaded "the attacker's threaded child"
! cat "$jobs/job-a/task/threaded/cgroup.procs" 2>/dev/null || fail "a threaded cgroup's cgroup.procs was readable"

# The default protect list: root's sshd, slurmd and the like by executable.
start_daemon "guard = mgwalk/*/*"

run_in "$jobs/job-v/task" mgvictim "$work/bin/memhog" -H 600000 250 &
victim=$!
sleep 0.5
runaway_then_end "$jobs" "$victim"
wait "$victim" 2>/dev/null || true

assert_eq "$victim_alive" yes "the victim's task alive"
assert_eq "$attacker_status" 137 "the attacker's runaway status (SIGKILL)"
grep -q '"cgroup":"mgwalk/job-a/task"' "$work/kills.jsonl" 2>/dev/null ||
	fail "memguardd did not kill the attacker's task"
! grep -q 'mgwalk/job-v' "$work/kills.jsonl" || fail "memguardd killed the victim's task"
! grep -q "no guarded cgroup may be killed" "$work/daemon.log" || fail "memguardd found no cgroup it may kill"
echo "PASS: a threaded child and 600 nested cgroups do not protect the attacker's runaway"
