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
	wait_for 30 running || fail "the two tasks did not start within 30 s"
}

# What a failure needs to be understood, without memguardd's per-decision debug lines.
show_logs() {
	{
		echo "--- memguard's stderr"
		cat "$work/err" 2>/dev/null
		echo "--- kills.jsonl"
		cat "$work/kills.jsonl" 2>/dev/null
		echo "--- the kernel's OOM kills"
		dmesg | grep -E "Killed process|invoked oom-killer" | tail -8
		echo "--- memguardd, debug decisions left out"
		grep -v "debug: decided\|debug: guarding" "$work/daemon.log" | tail -40
	} | sed 's/^/    /' >&2
}

# The tasks lived through it, untouched; then they end as told.
end_run() {
	local t
	for t in 0 1; do
		[ -n "$(cat "$cgroot"/memguard/run-"$run"/task-$t/cgroup.procs 2>/dev/null)" ] ||
			fail "$1: task $t within its share did not live through the hog"
	done
	kill -TERM "$run"
	wait "$run" || true
	assert_eq "$(json "$work/r.json" "[t['signal'] for t in r['tasks']]")" "['SIGTERM', 'SIGTERM']" \
		"$1: the tasks ended by our SIGTERM, nothing else"
}

# start_hog CAP MIB: an unguarded hog in a top-level cgroup of its own, 4 MiB every 10 ms up to MIB
# (or inf), held for 3 s.
start_hog() {
	mkdir -p "$cgroot/outside"
	echo "$1" >"$cgroot/outside/memory.max"
	sh -c 'echo $$ > '"$cgroot"'/outside/cgroup.procs; exec '"$memhog"' -s 4 -d 10 -H 3000 '"$2" &
	hog=$!
}

# --- kill_outside = no: named, and left to the kernel ----------------------------------------------
start_daemon "kill_outside = no"
start_run
# Sized from what the guest has free now, to leave 40 MiB: below available_min (48 MiB), so memory is
# short, yet above the kernel's watermarks, so no OOM kill ends it and the node survives. A guest-wide
# OOM kill would leave its choice of victim to the kernel, which is not what this part tests.
avail_mib=$(($(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo) / 1024))
((avail_mib > 200)) || fail "only ${avail_mib} MiB available before the hog"
start_hog $(((avail_mib - 24) << 20)) $((avail_mib - 40))
status=0
wait "$hog" || status=$?
[ ! -s "$work/kills.jsonl" ] || fail "kill_outside = no: memguardd killed: $(cat "$work/kills.jsonl")"
[ "$status" = 0 ] || fail "kill_outside = no: the hog ended with status $status, not by itself"
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
start_hog max inf
mark_kernel_log
status=0
wait "$hog" || status=$?
assert_eq "$status" 137 "the hog was killed (SIGKILL)"
assert_eq "$(grep -c . "$work/kills.jsonl")" 1 "one kill"
assert_eq "$(json "$work/kills.jsonl" "r['cgroup'], r['killed']")" "outside 1" \
	"memguardd killed one process, in the offender's cgroup"
assert_contains "$work/kills.jsonl" "has the highest OOM score there" "the kill log says why that process"
assert_eq "$(kernel_kills)" "" "no kernel OOM kill meanwhile"
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
