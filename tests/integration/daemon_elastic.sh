#!/usr/bin/env bash
# Elastic tasks overcommit together: memguardd kills the one furthest over
# its share, the others finish, a heartbeat never runs late by more than 1 s,
# and both the kill log and the launcher's summary name the victim and the
# numbers.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon_lib.sh"

start_daemon
trap 'stop_daemon; rm -rf "$work"' EXIT
"$build/tests/programs/heartbeat" 25 >"$work/heartbeat" &
hb=$!

# Shares of about 215 MiB: tasks 0-2 grow to 150 MiB and hold, well within
# their shares, task 3 keeps growing; together they need far more than the
# guest has, and only task 3 is over its share when memory runs short. No --elastic: with
# memguardd running, elastic is the launcher's default.
set +e
"$memguard" -n 4 --mem 860M --report "$work/r.json" -- sh -c \
	'if [ "$MEMGUARD_TASK" = 3 ]; then exec '"$memhog"' -d 20 -H 8000 1200;
	 else exec '"$memhog"' -d 40 -H 6000 150; fi' 2>"$work/err"
status=$?
set -e
wait "$hb"
stop_daemon
cat "$work/err"
echo "  daemon log:"; sed 's/^/    /' "$work/daemon.log"
assert_eq "$status" 137 "exit status (the victim's SIGKILL)"
assert_eq "$(json "$work/r.json" "r['shares']")" elastic "default share mode with memguardd running"
assert_eq "$(json "$work/r.json" "[t['status'] for t in r['tasks']]")" "[0, 0, 0, 137]" "statuses"
assert_contains "$work/err" "killed by memguardd: .* against a .* share while node memory pressure" "summary reason"
[ -s "$work/kills.jsonl" ] || fail "no kill log"
assert_eq "$(wc -l <"$work/kills.jsonl")" 1 "exactly one kill"
victim=$(json "$work/kills.jsonl" "r['cgroup']")
case $victim in */task-3) ;; *) fail "victim $victim, expected task-3" ;; esac
# cgroup.kill and process_mrelease where the kernel has them (6.1), else freeze-kill-thaw and no
# reaping at once (5.10).
assert_kill_path "$victim"
note "kill log: $(cat "$work/kills.jsonl")"
late=$(cat "$work/heartbeat")
note "worst heartbeat lateness: $late ms"
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 1000 else 1)" "$late" ||
	fail "heartbeat ran late by $late ms"
assert_no_leftover
