#!/usr/bin/env bash
# Tested as an attacker would (issue 36, hole 4): before cgroup.kill,
# memguardd walked the victim's whole tree for pidfds, with no bound on its
# depth, a directory held open at each level, in memory it locks. The
# attacker nests 9,000 empty cgroups below the task cgroup they own, then
# runs away in it. memguardd must kill the runaway (cgroup.kill takes the
# whole tree) and leave the victim's task alone, and its peak resident memory
# must stay within a few MiB of what it was before the kill: counts and
# memory, not time.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"

attack_stage mgdeep
levels=9000

two_jobs "$jobs" $((1024 << 20)) $((800 << 20))
set_share "$jobs/job-v/task" $((450 << 20))
set_share "$jobs/job-a/task" $((64 << 20))
# $work/bin/nest.py TASK LEVELS (the attacker's): a chain of LEVELS cgroups named d below TASK. The
# kernel makes them in time quadratic in the depth: about 300 s for 9,000 in the TCG guest.
cat >"$work/bin/nest.py" <<-'PY'
	import os, sys
	os.chdir(sys.argv[1])
	made = 0
	for _ in range(int(sys.argv[2])):
	    os.mkdir("d")
	    os.chdir("d")
	    made += 1
	print(made)
PY
# unnest TASK (as root): removes the chain from the bottom up, as no path to it fits in PATH_MAX and
# remove_tree's find would print gigabytes of them.
unnest() {
	python3 - "$1" <<-'PY'
		import os, sys
		os.chdir(sys.argv[1])
		n = 0
		while os.path.isdir("d"):
		    os.chdir("d")
		    n += 1
		for _ in range(n):
		    os.chdir("..")
		    os.rmdir("d")
	PY
}
# settle: 9,000 removed cgroups are freed by the kernel in the background, and until then they hold
# hundreds of MiB that the tests after this one in the same guest would miss: wait for them (bounded).
settle() {
	local i dying
	for ((i = 0; i < 180; i++)); do
		dying=$(awk '$1 == "nr_dying_descendants" { print $2 }' "$cgroot/cgroup.stat")
		((dying < 64)) && break
		sleep 1
	done
	note "after ${i}s, $dying removed cgroups not freed yet; MemAvailable $(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo) MiB"
}
trap 'stop_daemon; unnest "$jobs/job-a/task" || true; remove_tree "$jobs"; settle; rm -rf "$work"' EXIT
made=$(as mgattacker python3 "$work/bin/nest.py" "$jobs/job-a/task" "$levels") ||
	fail "the attacker could not nest their cgroups"
assert_eq "$made" "$levels" "the attacker's nested cgroups"

# As systemd's default LimitNOFILE: a walk of every level would not run out of fds first.
ulimit -n 524288
start_daemon "guard = mgdeep/*/*"
hwm() { awk '$1 == "VmHWM:" { print $2 }' "/proc/$daemon_pid/status"; }
run_in "$jobs/job-v/task" mgvictim "$work/bin/memhog" -H 600000 100 &
victim=$!
sleep 2
before=$(hwm)
run_in "$jobs/job-a/task" mgattacker "$work/bin/memhog" -d 20 inf &
runaway=$!
attacker_status=0
wait "$runaway" || attacker_status=$?
sleep 1
after=$(hwm)
victim_alive=yes
kill -0 "$victim" 2>/dev/null || victim_alive=no
note "memguardd's peak resident memory: ${before} KiB before the attack, ${after} KiB after"
end_jobs "$jobs" 2>&1 | grep -v "debug:" | cut -c1-300
wait "$victim" 2>/dev/null || true

assert_eq "$victim_alive" yes "the victim's task alive"
assert_eq "$attacker_status" 137 "the attacker's runaway status (SIGKILL)"
grep -q '"cgroup":"mgdeep/job-a/task"' "$work/kills.jsonl" 2>/dev/null ||
	fail "memguardd did not kill the attacker's task"
! grep -q 'mgdeep/job-v' "$work/kills.jsonl" || fail "memguardd killed the victim's task"
((after - before < 8192)) ||
	fail "memguardd's peak resident memory grew by $((after - before)) KiB killing a $levels-deep tree"
assert_contains "$work/daemon.log" "cgroup.kill took the rest" "the kill says its walk stopped at its bound"
echo "PASS: a $levels-deep tree costs memguardd $((after - before)) KiB to kill"
