#!/usr/bin/env bash
# Under pressure memguardd never kills outside its scope, nor a protected
# process inside it: with nothing it may kill, it says so and waits.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"

# A protected executable, named by its path (run by root, the default user).
start_daemon "protect = $work/sshd"
trap 'stop_daemon; rmdir "$cgroot/outside" "$cgroot/memguard/run-scope/task-0" "$cgroot/memguard/run-scope" 2>/dev/null; rm -rf "$work"' EXIT

# A protected process inside a guarded cgroup.
mkdir -p "$cgroot/memguard/run-scope/task-0"
cp "$memhog" "$work/sshd"
sh -c 'echo $$ > '"$cgroot"'/memguard/run-scope/task-0/cgroup.procs; exec '"$work"'/sshd -H 6000 300' &
protected=$!
# A big process outside the scope, capped so the guest itself stays up.
mkdir "$cgroot/outside"
echo $((700 << 20)) >"$cgroot/outside/memory.max"
sh -c 'echo $$ > '"$cgroot"'/outside/cgroup.procs; exec '"$memhog"' -d 10 -H 5000 600' &
outside=$!

# Who killed it, when one was: memguardd (its log) or the kernel (dmesg).
why_killed() { sed 's/^/    /' "$work/daemon.log"; dmesg | grep -i "killed process\|out of memory" | sed 's/^/    /'; }
wait "$protected" || { why_killed; fail "the protected process was killed"; }
wait "$outside" || { why_killed; fail "the process outside the scope was killed"; }
sleep 0.5
stop_daemon
sed 's/^/    /' "$work/daemon.log"
[ ! -s "$work/kills.jsonl" ] || fail "something was killed: $(cat "$work/kills.jsonl")"
assert_contains "$work/daemon.log" "no guarded cgroup may be killed" "said why it did not act"
