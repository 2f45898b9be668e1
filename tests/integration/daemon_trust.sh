#!/usr/bin/env bash
# Tested as an attacker would (issue 13): two ordinary users, each with a
# delegated job cgroup under the guard glob and a task in it. The attacker
# forges, on the task cgroup they own, everything memguardd used to trust: a
# user.memguard.share of 2^64-1, a user.memguard.throttled set in advance,
# memory.max "max", and a process named sshd beside their runaway. When
# memory runs short memguardd must fence and kill the attacker's task, judged
# by the limit that root set on their job, and leave the victim's alone.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"

attack_stage mgtrust

# A job per user, with a limit only root can change, and a task cgroup in each;
# the attacker forges on theirs.
two_jobs "$jobs" $((1024 << 20)) $((800 << 20))
as mgattacker python3 - "$jobs/job-a/task" <<-'PY'
	import os, sys
	task = sys.argv[1]
	os.setxattr(task, "user.memguard.share", b"18446744073709551615")
	os.setxattr(task, "user.memguard.throttled", b"max")
	with open(os.path.join(task, "memory.max"), "w") as f:
	    f.write("max\n")
PY
[ "$(stat -c %U "$jobs/job-a/task/memory.max")" = mgattacker ] || fail "the attacker does not own their memory.max"

start_daemon "guard = mgtrust/*/*"

# The victim: 250 MiB, a quarter of their job's limit, held until the end.
run_in "$jobs/job-v/task" mgvictim "$work/bin/memhog" -H 600000 250 &
victim=$!
# The attacker: a process named sshd, and a task that grows without end; the
# victim must still be there once memory is back.
run_in "$jobs/job-a/task" mgattacker "$work/attacker/sshd" 300 &
renamed=$!
sleep 0.5
runaway_then_end "$jobs" "$victim"
wait "$victim" "$renamed" 2>/dev/null || true

assert_eq "$victim_alive" yes "the victim's task alive"
assert_eq "$attacker_status" 137 "the attacker's runaway status (SIGKILL)"
grep -q '"cgroup":"mgtrust/job-a/task"' "$work/kills.jsonl" 2>/dev/null ||
	fail "memguardd did not kill the attacker's task"
! grep -q 'mgtrust/job-v' "$work/kills.jsonl" || fail "memguardd killed the victim's task"
# Judged by root's limit on the job, not the forged share.
assert_eq "$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["cgroup"] == "mgtrust/job-a/task": print(r["share_bytes"]); break' "$work/kills.jsonl")" \
	$((800 << 20)) "the attacker's share"
# The forged user.memguard.throttled did not stand for a fence: it was fenced for real first.
assert_contains "$work/daemon.log" "throttling cgroup mgtrust/job-a/task" "the attacker was fenced"
! grep -q "throttling cgroup mgtrust/job-v" "$work/daemon.log" || fail "the victim was fenced"
