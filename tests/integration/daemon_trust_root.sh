#!/usr/bin/env bash
# The blame rule, tested as an attacker would (issue 36, hole 8): a process
# in the root cgroup itself is in none of the node's top-level cgroups,
# which is all the rule weighed. On a node whose init is not systemd (this
# guest's busybox init is one) ordinary processes live there. Four elastic
# tasks of a root launcher hold 60 MiB each of a 200 MiB share; the attacker,
# another uid, grows without end from the root cgroup. Before, memguardd
# killed the tasks, each within its share; it must kill the attacker's
# process instead.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"

run='' hog=''
trap 'stop_daemon; kill $hog $run 2>/dev/null || true; rm -rf "$work"' EXIT
attack_setup "$memhog"
[ "$(cat /proc/self/cgroup)" = "0::/" ] || fail "this test must run in the root cgroup, not $(cat /proc/self/cgroup)"

start_daemon
"$memguard" -n 4 --elastic --mem 800M --report "$work/r.json" -- "$memhog" -H 600000 60 2>"$work/err" &
run=$!
running() { [ "$(cat "$cgroot"/memguard/run-"$run"/task-[0-3]/cgroup.procs 2>/dev/null | wc -l)" -ge 4 ]; }
wait_for 60 running || fail "the four tasks did not start within 60 s"
sleep 2 # each holds its 60 MiB

# The attacker's runaway, in the root cgroup where this script runs.
as mgattacker "$work/attacker/sshd" -d 20 inf &
hog=$!
hog_status=0
wait "$hog" || hog_status=$?
hog=
sleep 1
alive=0
for t in 0 1 2 3; do
	[ -z "$(cat "$cgroot"/memguard/run-"$run"/task-$t/cgroup.procs 2>/dev/null)" ] || alive=$((alive + 1))
done
kill -TERM "$run" 2>/dev/null || true
wait "$run" || true
run=
stop_daemon
grep -v "debug:" "$work/daemon.log" | sed 's/^/    /' | cut -c1-400 | tail -8
[ ! -s "$work/kills.jsonl" ] || sed 's/^/    kill: /' "$work/kills.jsonl" | cut -c1-300

assert_eq "$alive" 4 "the tasks alive after the attacker's runaway"
assert_eq "$hog_status" 137 "the attacker's runaway status (SIGKILL)"
! grep -q '"cgroup":"memguard/' "$work/kills.jsonl" || fail "memguardd killed a task within its share"
assert_contains "$work/kills.jsonl" '"cgroup":"/"' "memguardd killed in the root cgroup"
assert_contains "$work/kills.jsonl" "(sshd) has the highest OOM score there" "the kill names the attacker's process"
echo "PASS: a hog in the root cgroup is killed, not the tasks within their shares"
