#!/usr/bin/env bash
# A guard never does worse than none: when a process outside the guard eats
# the node, memguardd kills no guarded task that is within its share. It
# names the offender, and the kernel (as without memguardd) deals with it.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"

start_daemon
trap 'stop_daemon; kill "$hog" 2>/dev/null || true; rmdir "$cgroot/outside" 2>/dev/null || true; rm -rf "$work"' EXIT

# Two tasks at about a third of their 160 MiB shares, elastic as with a daemon.
"$memguard" -n 2 --elastic --mem 320M --report "$work/r.json" -- "$memhog" -H 25000 56 2>"$work/err" &
run=$!
for _ in $(seq 100); do
	[ "$(grep -c 'guarding cgroup memguard/run-.*/task-[01]' "$work/daemon.log")" -ge 2 ] && break
	sleep 0.1
done
# An unguarded hog, capped below the node so the guest survives it, takes what is left.
mkdir "$cgroot/outside"
echo $((820 << 20)) >"$cgroot/outside/memory.max"
sh -c 'echo $$ > '"$cgroot"'/outside/cgroup.procs; exec '"$memhog"' -s 4 -d 10 -H 8000 inf' &
hog=$!

wait "$run" || { cat "$work/err"; sed 's/^/    /' "$work/daemon.log"; fail "a task within its share was disturbed"; }
assert_eq "$(json "$work/r.json" "[t['status'] for t in r['tasks']]")" "[0, 0]" "both tasks finished"
[ ! -s "$work/kills.jsonl" ] || fail "memguardd killed: $(cat "$work/kills.jsonl")"
wait "$hog" || true
stop_daemon
grep -v "debug: guarding" "$work/daemon.log" | sed 's/^/    /' | tail -15
assert_contains "$work/daemon.log" "memory is short through a cgroup outside the guard: outside, outside the guard, holds" \
	"memguardd named the offender"
assert_no_leftover
