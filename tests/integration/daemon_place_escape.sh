#!/usr/bin/env bash
# memguardd's placement service against bob, who tries to get more than his
# job's limit: from 33 cgroups of his own nested below his job (the limits
# above them out of the chain memguardd reads), from inside a run of an
# earlier memguardd's systemd slice, and with two runs from one job at once.
# The first two are refused; the two runs are both inside the job, so
# together they get the job's limit once: the kernel stops them there.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"
. "$(dirname "$0")/place_lib.sh"
trap 'cleanup; remove_tree "$cgroot/job6"; remove_tree "$cgroot/job7"; remove_tree "$cgroot/memguard.slice"' EXIT

echo "bob's job: 300 MiB, delegated to him as a batch system delegates"
delegate bob "$cgroot/job6" 300M
as bob job6 sh -c 'd=$0; for _ in $(seq 33); do d=$d/n; done; mkdir -p "$d"' "$cgroot/job6" ||
	fail "bob could not nest his cgroups"
deep=job6$(printf '/n%.0s' $(seq 33))
[ -d "$cgroot/$deep" ] || fail "no $deep"

echo "from 33 levels below his job: refused, not a run without the job's limit"
reply=$(client bob "$deep" line place)
note "$reply"
case $reply in "err cgroup $deep/task is nested deeper than memguardd reads"*) ;; *) fail "bob got: $reply" ;; esac

echo "from inside a run in memguard.slice: refused, not a second run"
mkdir -p "$cgroot/memguard.slice"
echo +memory >"$cgroot/memguard.slice/cgroup.subtree_control"
delegate bob "$cgroot/memguard.slice/memguard-user-$(id -u bob)-1.scope" 300M
reply=$(client bob "memguard.slice/memguard-user-$(id -u bob)-1.scope" line place)
note "$reply"
case $reply in "err cgroup memguard.slice/"*"is a placed run or a job cgroup already"*) ;; *) fail "bob got: $reply" ;; esac

assert_eq "$(placed_runs)" 0 "placed runs"

echo "two runs from his 300 MiB job at once, 200 MiB each: both inside the job, held at its limit together"
job job7 300M
# From one job script of bob's: a run is made only beside a cgroup of his processes alone, and the
# helper that puts a process in job7/task is root's until it execs.
as bob job7 sh -c 'for i in 1 2; do
	"$0" -n 1 --report "$1/b$i.json" -- "$2" -H 3000 200 >"$1/b$i.out" 2>"$1/b$i.err" &
done; wait' "$memguard" "$share" "$memhog" &
# Their reports say where each ran: one may be stopped before the other's task starts.
wait_for 30 test -s "$share/b1.json" -a -s "$share/b2.json" ||
	{ cat "$share"/b?.err "$work/daemon.log"; fail "bob's runs did not end"; }
cat "$share/b1.err" "$share/b2.err"
for i in 1 2; do
	json "$share/b$i.json" 'r["where"]' | grep -q '^job7/memguard-run-' ||
		fail "run $i not inside job7: $(json "$share/b$i.json" 'r["where"]')"
done
peak=$(cat "$cgroot/job7/memory.peak")
note "job7's memory.peak: $((peak >> 20)) MiB"
[ "$peak" -le $((300 << 20)) ] || fail "bob's job held $((peak >> 20)) MiB, over its 300 MiB"
kills=$(( $(json "$share/b1.json" 'r["tasks"][0]["oom_kills"]') + $(json "$share/b2.json" 'r["tasks"][0]["oom_kills"]') ))
[ "$kills" -ge 1 ] || fail "neither run was stopped at the job's limit: 400 MiB held in a 300 MiB job"
wait_for 10 no_placed_runs || fail "bob's runs were left behind"

kill -0 "$daemon_pid" || fail "memguardd died"
stop_daemon
grep -i "placement for" "$work/daemon.log" | sed 's/^/    /' || true
echo "PASS"
