#!/usr/bin/env bash
# throttle = yes (the default): memguardd fences the victim in with memory.high
# at its usage plus what the node can spare, instead of killing it at once.
#  1. A task that grows without end stalls against the fence and is killed;
#     the innocent tasks finish.
#  2. A big task that only needed a little more than the node had left when it
#     was fenced finishes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon_lib.sh"

start_daemon "throttle = yes"
trap 'stop_daemon; rm -rf "$work"' EXIT

# run_tasks REPORT STATUSES EXIT MEMGUARD_ARGS...: runs memguard, stops the daemon, shows
# what happened and checks each task's status and memguard's own.
run_tasks() {
	local report=$1 statuses=$2 want=$3 status=0
	shift 3
	"$memguard" --report "$report" "$@" 2>"$work/err" || status=$?
	stop_daemon
	cat "$work/err"
	sed 's/^/    /' "$work/daemon.log"
	assert_eq "$(json "$report" "[t['status'] for t in r['tasks']]")" "$statuses" "statuses"
	assert_eq "$status" "$want" "exit status"
}

run_tasks "$work/r.json" "[0, 0, 0, 137]" 137 -n 4 --mem 860M -- sh -c \
	'if [ "$MEMGUARD_TASK" = 3 ]; then exec '"$memhog"' -d 20 -H 8000 1200;
	 else exec '"$memhog"' -d 40 -H 6000 150; fi'
throttled=$(grep -n "throttling cgroup memguard/run-.*/task-3" "$work/daemon.log" | head -1 | cut -d: -f1)
killed=$(grep -n "killing cgroup memguard/run-.*/task-3" "$work/daemon.log" | head -1 | cut -d: -f1)
[ -n "$throttled" ] || fail "task-3 was not fenced first"
[ -n "$killed" ] || fail "task-3 was not killed"
[ "$throttled" -lt "$killed" ] || fail "killed before it was fenced"
assert_eq "$(wc -l <"$work/kills.jsonl")" 1 "exactly one kill"
assert_no_leftover

# 2. Floors in MiB rather than percent, so that the big task's end point sits
# between them whatever this guest's MemAvailable is: memguardd acts below
# 400 MiB, its hard floor is 200 MiB, and the two tasks together leave about
# 300 MiB (MemAvailable moves by tens of MiB between runs). The big one is
# fenced on the way and must still finish.
: >"$work/daemon.log"
rm -f "$work/kills.jsonl"
start_daemon "throttle = yes
available_min = 400M
available_pressure = 500M"
sync
echo 3 >/proc/sys/vm/drop_caches
avail=$(awk '$1 == "MemAvailable:" { print int($2 / 1024) }' /proc/meminfo)
big=$((avail - 64 - 300))
((big > 200)) || fail "MemAvailable is only $avail MiB: too little for this test"
echo "    MemAvailable $avail MiB: the big task takes $big MiB, the small one 64 MiB"
run_tasks "$work/r2.json" "[0, 0]" 0 -n 2 --elastic --mem $((big + 200))M -- sh -c \
	'if [ "$MEMGUARD_TASK" = 0 ]; then exec '"$memhog"' -d 40 -H 3000 '"$big"';
	 else exec '"$memhog"' -H 5000 64; fi'
assert_contains "$work/daemon.log" "throttling cgroup memguard/run-.*/task-0" "the big task was fenced"
[ ! -s "$work/kills.jsonl" ] || { cat "$work/kills.jsonl"; fail "something was killed"; }
assert_no_leftover
