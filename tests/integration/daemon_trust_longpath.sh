#!/usr/bin/env bash
# kill_outside, tested as an attacker would (issue 36, hole 2): memguardd's
# walk outside the guard passed over every cgroup whose path was 512 bytes or
# more. The attacker, in the job cgroup delegated to them (as their
# user@.service or a PBS job cgroup is), nests two cgroups with 250-character
# names and grows without end at the bottom; the victim, another uid with a
# job in the same top-level cgroup, holds 150 MiB. Before, memguardd found nothing in
# the attacker's tree and killed the victim's process; it must kill the
# attacker's.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"

attack_stage mglong
two_jobs "$jobs" max max
long=$(printf 'x%.0s' $(seq 250))
as mgattacker sh -c 'echo +memory >"$0/cgroup.subtree_control" && mkdir "$0/$1" &&
	echo +memory >"$0/$1/cgroup.subtree_control" && mkdir "$0/$1/$1"' "$jobs/job-a/task" "$long" ||
	fail "the attacker could not nest their cgroups"
deep=${jobs#"$cgroot"/}/job-a/task/$long/$long
((${#deep} >= 512)) || fail "the attacker's cgroup path is only ${#deep} bytes"
note "the attacker's cgroup path is ${#deep} bytes"

start_daemon

run_in "$jobs/job-v/task" mgvictim "$work/bin/memhog" -H 600000 150 &
victim=$! # the shell run_in runs in, which lives as long as the victim's process
wait_for 30 sh -c '[ "$(cat "$0/memory.current")" -ge $((140 << 20)) ]' "$jobs/job-v/task" ||
	fail "the victim did not grow to 150 MiB"

run_in "$jobs/job-a/task/$long/$long" mgattacker "$work/bin/memhog" -d 20 inf &
attacker=$!
attacker_status=0
wait "$attacker" || attacker_status=$?
sleep 1
victim_alive=yes
kill -0 "$victim" 2>/dev/null || victim_alive=no
stop_daemon
grep -v "debug:" "$work/daemon.log" | sed 's/^/    /' | cut -c1-400 | tail -8
[ ! -s "$work/kills.jsonl" ] || sed 's/^/    kill: /' "$work/kills.jsonl" | cut -c1-400

assert_eq "$victim_alive" yes "the victim's process alive"
assert_eq "$attacker_status" 137 "the attacker's runaway status (SIGKILL)"
python3 - "$work/kills.jsonl" "${jobs#"$cgroot"/}/job-a/task/$long" <<-'PY' || fail "memguardd did not kill the attacker's runaway first"
	import json, sys
	kills = [json.loads(line) for line in open(sys.argv[1])]
	if not kills or kills[0]["cgroup"] != sys.argv[2] or "too deep to name" not in kills[0]["reason"]:
	    sys.exit(f"kills: {[(k['cgroup'][:60], k['reason'][-80:]) for k in kills]}")
PY
echo "PASS: a hog at a ${#deep}-byte cgroup path is killed, not the victim"
