#!/usr/bin/env bash
# Tested as an attacker would: memguardd counts a guarded cgroup it cannot
# look through for protected processes as protected, so the attacker tries
# to make that look fail in the task cgroup they own, in two rounds: a
# threaded child (its cgroup.procs cannot be read), then 600 nested cgroups
# under a 1024-fd limit (a walk that opens every level runs out of fds).
# Each time their runaway must be the one killed, and the victim's task left
# alone.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"

attack_stage mgwalk

# round KIND SCRIPT: the attacker runs SCRIPT in their task cgroup ($0),
# then the runaway beside the victim's 250 MiB.
round() {
	echo "round: $1"
	two_jobs "$jobs" $((1024 << 20)) $((800 << 20))
	# Each task's share as a root launcher records it: the victim's 250 MiB
	# are within theirs, the attacker's runaway soon is not.
	set_share "$jobs/job-v/task" $((450 << 20))
	set_share "$jobs/job-a/task" $((200 << 20))
	as mgattacker sh -c "$2" "$jobs/job-a/task" || fail "the attacker could not build their tree"
	rm -f "$work/kills.jsonl" "$work/daemon.log"
	start_daemon "guard = mgwalk/*/*" # the default protect list: root's sshd, slurmd ... by executable
	run_in "$jobs/job-v/task" mgvictim "$work/bin/memhog" -H 600000 250 &
	local victim=$!
	sleep 0.5
	runaway_then_end "$jobs" "$victim"
	wait "$victim" 2>/dev/null || true

	assert_eq "$victim_alive" yes "$1: the victim's task alive"
	assert_eq "$attacker_status" 137 "$1: the attacker's runaway status (SIGKILL)"
	grep -q '"cgroup":"mgwalk/job-a/task"' "$work/kills.jsonl" 2>/dev/null ||
		fail "$1: memguardd did not kill the attacker's task"
	! grep -q 'mgwalk/job-v' "$work/kills.jsonl" || fail "$1: memguardd killed the victim's task"
	remove_tree "$jobs"
}

round "a threaded child" 'mkdir "$0/threaded" && echo threaded >"$0/threaded/cgroup.type" &&
	[ "$(cat "$0/threaded/cgroup.type")" = threaded ] && ! cat "$0/threaded/cgroup.procs" 2>/dev/null'

# memguardd raises its soft fd limit to the hard one: 1024 here, fewer than a
# walk of every level would hold open.
ulimit -n 1024
round "600 nested cgroups" 'd=$0; for _ in $(seq 600); do d=$d/d; done; mkdir -p "$d"'
echo "PASS: a threaded child, and 600 nested cgroups, do not protect the attacker's runaway"
