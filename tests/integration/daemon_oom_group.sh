#!/usr/bin/env bash
# kill_outside honours memory.oom.group as the kernel's OOM killer does: a
# cgroup outside the guard that sets it (a systemd service with
# OOMPolicy=kill, a job that asked to die whole) loses all its processes,
# not one of them, and the kill log says so. A group holding a process
# memguardd never kills (oom_score_adj -1000) loses only the worst one.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"

top=$cgroot/mgoomgroup
trap 'stop_daemon; remove_tree "$top"; rm -rf "$work"' EXIT
mkdir "$top"
echo +memory >"$top/cgroup.subtree_control"

start_daemon

# run_job NAME ADJ: a group that asks to die whole, with two cgroups below
# it: one for a sleeper (oom_score_adj ADJ), one, which sets
# memory.oom.group as well, for two children that grow without end. The
# highest group counts, so the sleeper's fate follows NAME's.
run_job() {
	mkdir "$top/$1"
	echo +memory >"$top/$1/cgroup.subtree_control"
	mkdir "$top/$1/side" "$top/$1/hog"
	echo 1 >"$top/$1/memory.oom.group"
	echo 1 >"$top/$1/hog/memory.oom.group"
	sh -c 'echo $$ >"$0/cgroup.procs" && echo "$1" >/proc/self/oom_score_adj && exec sleep 600' "$top/$1/side" "$2" &
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$1" -f 2 -s 4 -d 20 inf' "$top/$1/hog" "$memhog" &
}
procs() { cat "$top/$1"/*/cgroup.procs | wc -l; }
started() { [ "$(procs "$1")" -eq 4 ]; }
emptied() { [ "$(procs "$1")" -eq 0 ]; }
killed_in() { grep -q "\"cgroup\":\"mgoomgroup/$1" "$work/kills.jsonl" 2>/dev/null; }
mark_kernel_log
why_not() {
	sed 's/^/    /' "$work/daemon.log"
	kernel_kills | sed 's/^/    /'
	fail "$1"
}

# --- the whole group ----------------------------------------------------------------------------
run_job whole 0
wait_for 10 started whole || fail "the first group did not start its 4 processes"
wait_for 120 killed_in whole || why_not "memguardd killed nothing in the first group in 120 s"
wait_for 10 emptied whole || why_not "$(procs whole) processes left in the group killed whole"
sed 's/^/    kill: /' "$work/kills.jsonl"
assert_contains "$work/kills.jsonl" '"cgroup":"mgoomgroup/whole","current_bytes"' "the kill names the group"
assert_contains "$work/kills.jsonl" "which sets memory.oom.group, dies whole" "the kill log says why all"
python3 - "$work/kills.jsonl" <<-'PY' || fail "the group was not killed in one action"
	import json, sys
	r = json.loads(open(sys.argv[1]).readline())
	sys.exit(0 if r["killed"] == 4 else f"killed {r['killed']}, not 4")
PY
[ -z "$(kernel_kills)" ] || why_not "the kernel's OOM killer acted"
# Two cgroups below the group: cgroup.kill, or the fallback's walk of the subtree.
assert_kill_path mgoomgroup/whole

# --- a group with a process that must not be killed ---------------------------------------------
: >"$work/kills.jsonl"
run_job kept -1000
wait_for 10 started kept || fail "the second group did not start its 4 processes"
sleeper=$(cat "$top/kept/side/cgroup.procs")
wait_for 120 killed_in kept || why_not "memguardd killed nothing in the second group in 120 s"
sleep 2 # any kill that follows the first
sleeper_alive=yes
kill -0 "$sleeper" 2>/dev/null || sleeper_alive=no
cg_kill "$top/kept/hog"
sed 's/^/    kill: /' "$work/kills.jsonl"
assert_eq "$sleeper_alive" yes "the process with oom_score_adj -1000 alive"
python3 - "$work/kills.jsonl" <<-'PY' || fail "the group with an exempt process was killed whole"
	import json, sys
	for line in open(sys.argv[1]):
	    r = json.loads(line)
	    if r["cgroup"] != "mgoomgroup/kept/hog" or r["killed"] != 1 or "this process only" not in r["reason"]:
	        sys.exit(f"kill: {line}")
PY
assert_contains "$work/kills.jsonl" "(memhog) has the highest OOM score there" "the worst process, not the sleeper"
