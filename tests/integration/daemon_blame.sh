#!/usr/bin/env bash
# A guard never does worse than none: when a process outside the guard eats
# the node, memguardd kills no guarded task that is within its share. It
# names the offender, and the kernel (as without memguardd) deals with it.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"

start_daemon
hog='' run=''
trap 'stop_daemon; kill $hog $run 2>/dev/null || true; rmdir "$cgroot/outside" 2>/dev/null || true; rm -rf "$work"' EXIT

# Two tasks at about a third of their 160 MiB shares, elastic as with a daemon. They hold until the test
# ends them: a slow guest must not let them finish before the hog makes memory short.
"$memguard" -n 2 --elastic --mem 320M --report "$work/r.json" -- "$memhog" -H 600000 56 2>"$work/err" &
run=$!
# Both tasks running in their cgroups (memguardd rescans the guard list when memory is short).
running() { [ "$(cat "$cgroot"/memguard/run-"$run"/task-[01]/cgroup.procs 2>/dev/null | wc -l)" -ge 2 ]; }
for _ in $(seq 300); do running && break; sleep 0.1; done
running || { cat "$work/err" "$work/daemon.log"; fail "the two tasks did not start within 30 s"; }
# An unguarded hog, capped below the node so the guest survives it, takes what is left; its own
# memory.max stops it (the kernel's OOM kill inside its cgroup) or its hold ends.
mkdir "$cgroot/outside"
echo $((820 << 20)) >"$cgroot/outside/memory.max"
sh -c 'echo $$ > '"$cgroot"'/outside/cgroup.procs; exec '"$memhog"' -s 4 -d 10 -H 8000 inf' &
hog=$!
wait "$hog" || true

# The tasks lived through it, untouched; then they end as told.
for t in 0 1; do
	[ -n "$(cat "$cgroot"/memguard/run-"$run"/task-$t/cgroup.procs 2>/dev/null)" ] ||
		{ sed 's/^/    /' "$work/daemon.log"; fail "task $t within its share did not live through the hog"; }
done
[ ! -s "$work/kills.jsonl" ] || fail "memguardd killed: $(cat "$work/kills.jsonl")"
kill -TERM "$run"
wait "$run" || true
assert_eq "$(json "$work/r.json" "[t['signal'] for t in r['tasks']]")" "['SIGTERM', 'SIGTERM']" \
	"the tasks ended by our SIGTERM, nothing else"
stop_daemon
grep -v "debug: guarding" "$work/daemon.log" | sed 's/^/    /' | tail -15
assert_contains "$work/daemon.log" "memory is short through a cgroup outside the guard: outside, outside the guard, holds" \
	"memguardd named the offender"
assert_no_leftover
