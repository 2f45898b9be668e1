#!/usr/bin/env bash
# memguardd never kills a protected process, inside its scope or outside it.
# Inside, with nothing else it may kill, it says so and waits. Outside, by
# default (kill_outside), it passes the protected process over and kills the
# hog beside it. (That kill_outside = no leaves outsiders alone is
# daemon_blame.sh's.)
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"

protected='' hog=''
trap 'stop_daemon; kill $protected $hog 2>/dev/null; rmdir "$cgroot/outside" "$cgroot/memguard/run-scope/task-0" "$cgroot/memguard/run-scope" 2>/dev/null; rm -rf "$work"' EXIT

# A protected executable, named by its path (run by root, the default user).
cp "$memhog" "$work/sshd"
start_daemon "protect = $work/sshd"

# Who killed it, when one was: memguardd (its log) or the kernel (dmesg).
why_killed() { sed 's/^/    /' "$work/daemon.log"; dmesg | grep -i "killed process\|out of memory" | sed 's/^/    /'; }

# --- inside the scope: a protected process makes memory short ------------------------------------
# Sized to leave about 40 MiB available, below available_min (48 MiB) and above the kernel's OOM kill.
avail_mib=$(($(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo) / 1024))
mkdir -p "$cgroot/memguard/run-scope"
# Memory enabled down to the task, as the launcher does: it is guarded.
echo +memory >"$cgroot/memguard/cgroup.subtree_control"
echo +memory >"$cgroot/memguard/run-scope/cgroup.subtree_control"
mkdir "$cgroot/memguard/run-scope/task-0"
sh -c 'echo $$ > '"$cgroot"'/memguard/run-scope/task-0/cgroup.procs; exec '"$work"'/sshd -H 5000 '$((avail_mib - 40)) &
protected=$!
wait "$protected" || { why_killed; fail "the protected process in a guarded cgroup was killed"; }
[ ! -s "$work/kills.jsonl" ] || fail "something was killed: $(cat "$work/kills.jsonl")"
assert_contains "$work/daemon.log" "no guarded cgroup may be killed" "said why it did not act"

# --- outside the scope: the protected process is passed over for the hog beside it --------------
# It is made the kernel's first choice (oom_score_adj 1000), so only memguardd's protection spares it.
mkdir "$cgroot/outside"
sh -c 'echo $$ > '"$cgroot"'/outside/cgroup.procs; echo 1000 >/proc/self/oom_score_adj; exec '"$work"'/sshd -H 600000 16' &
protected=$!
sh -c 'echo $$ > '"$cgroot"'/outside/cgroup.procs; exec '"$memhog"' -s 4 -d 10 -H 8000 inf' &
hog=$!
status=0
wait "$hog" || status=$?
stop_daemon
grep -v "debug: guarding" "$work/daemon.log" | sed 's/^/    /' | tail -8
assert_eq "$status" 137 "the hog outside the scope was killed (SIGKILL)"
alive "$protected" || { why_killed; fail "the protected process outside the scope was killed"; }
assert_eq "$(json "$work/kills.jsonl" "r['cgroup'], r['killed']")" "outside 1" "memguardd killed one process, outside"
assert_contains "$work/daemon.log" "killing process $hog (memhog) in outside" "the hog, not the protected process"
