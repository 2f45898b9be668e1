#!/usr/bin/env bash
# Tested as an attacker would (issue 36, hole 1): a run with no limit above
# it, as an ssh session's, whose owner declares their own share. The
# attacker's job cgroup has memory.max "max" (root's file, but no limit), so
# no root-owned record gives their task a share; they write
# user.memguard.share = 2^64-1 on it and grow without end. The victim's task
# holds 70 MiB of the 400 MiB their job's root-owned limit gives. memguardd
# must judge the attacker's task by an even split of the node, not by its
# owner's word, and kill it, not the victim's.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"

attack_stage mgshare

two_jobs "$jobs" $((400 << 20)) max
as mgattacker python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.memguard.share", b"18446744073709551615")' \
	"$jobs/job-a/task"

start_daemon "guard = mgshare/*/*"

run_in "$jobs/job-v/task" mgvictim "$work/bin/memhog" -H 600000 70 &
victim=$!
sleep 0.5
runaway_then_end "$jobs" "$victim"
wait "$victim" 2>/dev/null || true

assert_eq "$victim_alive" yes "the victim's task alive"
grep -q '"cgroup":"mgshare/job-a/task"' "$work/kills.jsonl" 2>/dev/null ||
	fail "memguardd did not kill the attacker's task"
! grep -q 'mgshare/job-v' "$work/kills.jsonl" || fail "memguardd killed the victim's task"
# Judged by the node's even split between the two users, not by the forged share.
share=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["cgroup"] == "mgshare/job-a/task": print(r["share_bytes"]); break' "$work/kills.jsonl")
total=$(awk '$1 == "MemTotal:" { print $2 * 1024 }' /proc/meminfo)
((share > 0 && share <= total / 2)) || fail "the attacker's share $share is not an even split of $total"
assert_contains "$work/daemon.log" "even split" "the kill says what the attacker was judged by"
echo "PASS: a forged share on an unlimited run is no share"
