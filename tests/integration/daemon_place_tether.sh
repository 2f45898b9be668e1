#!/usr/bin/env bash
# Tether or refuse, and the watches memguardd holds for each user (docs/security.md). A placed run ends
# with its job because memguardd watches its tether (the job's task cgroup) with inotify, from root's
# table of watches (fs.inotify.max_user_watches), which systemd and every root daemon share.
# 1. With that table full, alice's run is refused: never placed untethered, to outlive her job.
# 2. bob fills his own run with 1,000 empty cgroups, each of which memguardd would watch until a process
#    moves in. It watches 256 of his at most (watches per uid), so the table, sized for 600 more, still
#    has room: alice's run, placed meanwhile, is tethered and ends with her job; bob's next run is
#    refused, his watches being used up.
# Before (a1c1d0c), 1. placed alice's run untethered, and in 2. bob's cgroups took every watch left and
# alice's run was placed untethered: her job's end did not end it.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"
. "$(dirname "$0")/place_lib.sh"
max_watches=/proc/sys/fs/inotify/max_user_watches
saved_max=$(cat "$max_watches")
trap 'echo "$saved_max" >"$max_watches"; cleanup' EXIT

# root_watches: the inotify watches root's processes hold (the kernel counts them per uid).
root_watches() {
	python3 -c 'import glob, os
n = 0
for p in glob.glob("/proc/[0-9]*"):
    try:
        if os.stat(p).st_uid != 0:
            continue
        for f in glob.glob(p + "/fdinfo/*"):
            n += sum(line.startswith("inotify wd:") for line in open(f))
    except OSError:
        pass
print(n)'
}
daemon_watches() { cat /proc/"$daemon_pid"/fdinfo/* 2>/dev/null | grep -c '^inotify wd:' || true; }
# settled: memguardd's watches stayed the same for 3 s.
settled() {
	local a b
	a=$(daemon_watches)
	sleep 3
	b=$(daemon_watches)
	[ "$a" = "$b" ]
}

echo "1. root's table of watches is full: alice's run is refused, not placed untethered"
job job1 300M
used=$(root_watches)
echo "$used" >"$max_watches"
reply=$(client alice job1 line "place budget=$((200 << 20))")
echo "$saved_max" >"$max_watches"
note "with $used of $used watches in use: $reply"
case $reply in
"err memguardd cannot watch cgroup job1/task, which the run would end with"*) ;;
*) fail "alice's request with root's watches used up got: $reply" ;;
esac
wait_for 10 no_placed_runs || fail "a run is left after the refusal: $(run_dirs)"

echo "2. bob fills his run with 1,000 empty cgroups; the table has room for 600 more watches ($SECONDS s)"
job job2 300M
job job3 300M
before=$(daemon_watches)
echo $(($(root_watches) + 600)) >"$max_watches"
cat >"$share/flood.py" <<'PY'
import os, sys, time
run = "/sys/fs/cgroup" + os.path.dirname(open("/proc/self/cgroup").read().split(":", 2)[2].strip())
for i in range(1000):
    os.mkdir(f"{run}/empty-{i}")
open(sys.argv[1], "w").close()
time.sleep(600)
PY
as bob job2 "$memguard" -n 1 -- python3 "$share/flood.py" "$share/flooded" 2>"$work/bob.err" &
wait_for 60 test -e "$share/flooded" || { cat "$work/bob.err" "$work/daemon.log"; fail "bob's flood did not run"; }
wait_for 60 settled || fail "memguardd's watches did not settle"
held=$(($(daemon_watches) - before))
note "memguardd watches $held more for bob's run and its 1,000 empty cgroups"
[ "$held" -le 258 ] || fail "memguardd holds $held watches for bob: more than the 256 a user gets"

echo "   alice's run, placed now, is tethered: it ends with her job ($SECONDS s)"
as alice job3 sh -c "$memguard -n 1 --report $share/a.json -- sleep 600; :" 2>"$work/alice.err" &
wait_for 30 sh -c '[ -n "$(find "$0"/job3 -path "*memguard-run-*/task-0" 2>/dev/null)" ]' "$cgroot" ||
	{ cat "$work/alice.err" "$work/daemon.log"; fail "alice's run was not placed"; }
for pid in $(cat "$cgroot/job3/task/cgroup.procs"); do kill -KILL "$pid" 2>/dev/null || true; done
wait_for 20 test -s "$share/a.json" ||
	{ grep -i "tether\|job3" "$work/daemon.log"; fail "alice's run did not end with her job: no report"; }
assert_eq "$(json "$share/a.json" 'r["tasks"][0]["signal"]')" SIGTERM "alice's task once her job ended"

echo "   bob's next run is refused: his runs and cgroups hold the watches a user gets ($SECONDS s)"
reply=$(client bob job2 line "place")
note "$reply"
case $reply in
"err this user's runs and cgroups hold "*" of memguardd's inotify watches (the limit is 256)") ;;
*) fail "bob's second run got: $reply" ;;
esac

pkill -KILL -u bob || true
note "the end ($SECONDS s)"
wait_for 30 no_placed_runs || fail "the runs were left: $(run_dirs)"
stop_daemon
grep -i "watch\|refused" "$work/daemon.log" | sed 's/^/    /' | tail -n 20 || true
echo "PASS: no run untethered, and one user's cgroups do not use up root's watches"
