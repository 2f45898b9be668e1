#!/usr/bin/env bash
# A guard never does worse than none: when a process outside the guard eats
# the node, memguardd kills no guarded task that is within its share. It
# names the offender; with kill_outside = no it leaves it to the kernel, and
# by default, once MemAvailable is below available_min, it kills the
# offender's process with the highest OOM score before the node stalls.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"

hog='' run='' exempt=''
trap 'stop_daemon; kill $hog $run $exempt 2>/dev/null || true; rmdir "$cgroot/outside" 2>/dev/null || true; rm -rf "$work"' EXIT

# Two tasks at about a third of their 160 MiB shares, elastic as with a daemon. They hold until the test
# ends them: a slow guest must not let them finish before the hog makes memory short.
start_run() {
	"$memguard" -n 2 --elastic --mem 320M --report "$work/r.json" -- "$memhog" -H 600000 56 2>"$work/err" &
	run=$!
	# Both tasks running in their cgroups (memguardd rescans the guard list when memory is short).
	running() { [ "$(cat "$cgroot"/memguard/run-"$run"/task-[01]/cgroup.procs 2>/dev/null | wc -l)" -ge 2 ]; }
	wait_for 30 running || { cat "$work/err" "$work/daemon.log"; fail "the two tasks did not start within 30 s"; }
}

# The tasks lived through it, untouched; then they end as told.
end_run() {
	local t
	for t in 0 1; do
		[ -n "$(cat "$cgroot"/memguard/run-"$run"/task-$t/cgroup.procs 2>/dev/null)" ] ||
			{ sed 's/^/    /' "$work/daemon.log"; fail "$1: task $t within its share did not live through the hog"; }
	done
	kill -TERM "$run"
	wait "$run" || true
	assert_eq "$(json "$work/r.json" "[t['signal'] for t in r['tasks']]")" "['SIGTERM', 'SIGTERM']" \
		"$1: the tasks ended by our SIGTERM, nothing else"
}

# start_hog CAP: an unguarded hog in a top-level cgroup of its own, 4 MiB every 10 ms.
start_hog() {
	mkdir -p "$cgroot/outside"
	echo "$1" >"$cgroot/outside/memory.max"
	sh -c 'echo $$ > '"$cgroot"'/outside/cgroup.procs; exec '"$memhog"' -s 4 -d 10 -H 8000 inf' &
	hog=$!
}

# --- kill_outside = no: named, and left to the kernel ----------------------------------------------
start_daemon "kill_outside = no"
start_run
# Capped below the node so the guest survives it: its own memory.max stops it (the kernel's OOM kill
# inside its cgroup) or its hold ends.
start_hog $((820 << 20))
wait "$hog" || true
[ ! -s "$work/kills.jsonl" ] || fail "kill_outside = no: memguardd killed: $(cat "$work/kills.jsonl")"
end_run "kill_outside = no"
stop_daemon
assert_contains "$work/daemon.log" "memory is short through a cgroup outside the guard: outside, outside the guard, holds" \
	"memguardd named the offender"
rmdir "$cgroot/outside"

# --- the default: the offender's worst process is killed -------------------------------------------
start_daemon
start_run
# Beside the hog, a process the admin exempted from OOM kills: it must stay.
mkdir "$cgroot/outside"
sh -c 'echo $$ > '"$cgroot"'/outside/cgroup.procs; echo -1000 >/proc/self/oom_score_adj; exec '"$memhog"' -H 600000 16' &
exempt=$!
start_hog max
oom_before=$(dmesg | grep -c "Killed process" || true)
status=0
wait "$hog" || status=$?
assert_eq "$status" 137 "the hog was killed (SIGKILL)"
assert_eq "$(grep -c . "$work/kills.jsonl")" 1 "one kill"
assert_eq "$(json "$work/kills.jsonl" "r['cgroup'], r['killed']")" "outside 1" \
	"memguardd killed one process, in the offender's cgroup"
assert_contains "$work/kills.jsonl" "has the highest OOM score there" "the kill log says why that process"
assert_eq "$(dmesg | grep -c "Killed process" || true)" "$oom_before" "no kernel OOM kill meanwhile"
alive "$exempt" || fail "the process with oom_score_adj -1000 was killed"
end_run "kill_outside = yes"
kill "$exempt"
wait "$exempt" || true
stop_daemon
grep -v "debug: guarding" "$work/daemon.log" | sed 's/^/    /' | tail -12
assert_contains "$work/daemon.log" "killing process $hog (memhog) in outside, outside the guard" \
	"the journal names the process and its cgroup"
rmdir "$cgroot/outside"
assert_no_leftover
