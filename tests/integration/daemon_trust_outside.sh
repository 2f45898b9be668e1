#!/usr/bin/env bash
# kill_outside, tested as an attacker would: two ordinary users share a
# top-level cgroup outside the guard (as user.slice holds every login). The
# attacker eats the node through many processes, each smaller than the
# victim's one; the kernel's OOM killer, and a walk of the whole top-level
# cgroup by OOM score, would kill the victim's. memguardd descends to the
# cgroup that holds the memory and kills the attacker's. The attacker also
# tries what an ordinary uid can: raising the victim's OOM score, naming
# their processes sshd, spreading them over sub-cgroups of their own.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"

users=$cgroot/mgusers
victim=
trap 'stop_daemon; remove_tree "$users"; rm -rf "$work"' EXIT
attack_setup "$memhog"

# Root's part: one cgroup per user below mgusers, the attacker's delegated.
mkdir "$users" "$users/victim" "$users/attacker"
echo +memory >"$users/cgroup.subtree_control"
chown mgattacker "$users/attacker" "$users/attacker/cgroup.procs" "$users/attacker/cgroup.subtree_control" \
	"$users/attacker/cgroup.threads"

start_daemon

# The victim: one process of 150 MiB, held. ($! would be the subshell
# that runs run_in; the cgroup names the process itself.)
run_in "$users/victim" mgvictim "$work/bin/memhog" -H 600000 150 &
victim_grown() {
	victim=$(head -n1 "$users/victim/cgroup.procs")
	[ -n "$victim" ] && [ "$(awk '/^VmRSS:/ { print $2 }' "/proc/$victim/status" 2>/dev/null || echo 0)" -ge $((140 << 10)) ]
}
wait_for 30 victim_grown || fail "the victim did not grow to 150 MiB"

# What an ordinary uid cannot do: make another user's process the kernel's first choice.
! as mgattacker sh -c "echo 1000 >/proc/$victim/oom_score_adj" 2>/dev/null ||
	fail "the attacker raised the victim's oom_score_adj"

# The attacker's processes, 60 MiB each, named sshd, in two sub-cgroups of their own: as many as
# leave the node within 30 MiB of empty, below available_min (48 MiB).
as mgattacker sh -c 'echo +memory >"$0/cgroup.subtree_control" && mkdir "$0/a" "$0/b"' "$users/attacker"
avail_mib=$(($(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo) / 1024))
forks=$(((avail_mib - 30) / 60 / 2 + 1))
note "MemAvailable ${avail_mib} MiB beside the victim: the attacker runs 2 x $forks processes of 60 MiB"
for sub in a b; do
	run_in "$users/attacker/$sub" mgattacker "$work/attacker/sshd" -f "$forks" -s 2 -d 20 -H 600000 60 &
done

killed() { [ -s "$work/kills.jsonl" ]; }
wait_for 120 killed || { sed 's/^/    /' "$work/daemon.log"; fail "memguardd killed nothing in 120 s"; }
sleep 2 # any kill that follows the first
for sub in a b; do
	cg_kill "$users/attacker/$sub"
done
victim_alive=yes
kill -0 "$victim" 2>/dev/null || victim_alive=no
stop_daemon
grep -v "debug: guarding" "$work/daemon.log" | sed 's/^/    /' | tail -8
sed 's/^/    kill: /' "$work/kills.jsonl"
dmesg | grep -i "killed process" | sed 's/^/    /' | tail -4 || true

assert_eq "$victim_alive" yes "the victim's process alive"
python3 - "$work/kills.jsonl" <<-'PY' || fail "memguardd killed outside the attacker's cgroups"
	import json, sys
	for line in open(sys.argv[1]):
	    r = json.loads(line)
	    if not r["cgroup"].startswith("mgusers/attacker/") or r["killed"] != 1:
	        sys.exit(f"kill: {r['cgroup']} ({r['killed']} killed)")
PY
assert_contains "$work/kills.jsonl" "(sshd) has the highest OOM score there" \
	"the kill log names the attacker's process (named sshd) and says why that one"
