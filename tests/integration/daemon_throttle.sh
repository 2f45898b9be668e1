#!/usr/bin/env bash
# throttle = yes: memguardd first lowers the offender's memory.high; when
# that does not bring memory back, it kills the offender after the settle
# time. The innocent tasks finish.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon_lib.sh"

start_daemon "throttle = yes"
trap 'stop_daemon; rm -rf "$work"' EXIT

set +e
"$memguard" -n 4 --mem 860M --report "$work/r.json" -- sh -c \
	'if [ "$MEMGUARD_TASK" = 3 ]; then exec '"$memhog"' -d 20 -H 8000 1200;
	 else exec '"$memhog"' -d 40 -H 6000 150; fi' 2>"$work/err"
status=$?
set -e
stop_daemon
cat "$work/err"
sed 's/^/    /' "$work/daemon.log"
assert_eq "$(json "$work/r.json" "[t['status'] for t in r['tasks']]")" "[0, 0, 0, 137]" "statuses"
assert_eq "$status" 137 "exit status"
throttled=$(grep -n "throttling cgroup memguard/run-.*/task-3" "$work/daemon.log" | head -1 | cut -d: -f1)
killed=$(grep -n "killing cgroup memguard/run-.*/task-3" "$work/daemon.log" | head -1 | cut -d: -f1)
[ -n "$throttled" ] || fail "task-3 was not throttled first"
[ -n "$killed" ] || fail "task-3 was not killed"
[ "$throttled" -lt "$killed" ] || fail "killed before it was throttled"
assert_eq "$(wc -l <"$work/kills.jsonl")" 1 "exactly one kill"
assert_no_leftover
