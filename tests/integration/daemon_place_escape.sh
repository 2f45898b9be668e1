#!/usr/bin/env bash
# memguardd's placement service against bob, who tries to get a run without
# his job's limit: from 33 cgroups of his own nested below his job (the
# limit above them out of the chain memguardd reads), from inside a run of
# the systemd backend's slice (a second run with the job's limit again), and
# by asking for a second run from his job while his first one runs (each run
# is outside the job's cgroup and would take the job's whole limit again).
# All must be refused, and no run made: his second launcher runs in his
# job's own cgroup instead, where the job's limit holds.
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
case $reply in "err cgroup $deep is nested deeper than memguardd reads"*) ;; *) fail "bob got: $reply" ;; esac

echo "from inside a run in memguard.slice: refused, not a second run"
mkdir -p "$cgroot/memguard.slice"
echo +memory >"$cgroot/memguard.slice/cgroup.subtree_control"
delegate bob "$cgroot/memguard.slice/memguard-user-$(id -u bob)-1.scope" 300M
reply=$(client bob "memguard.slice/memguard-user-$(id -u bob)-1.scope" line place)
note "$reply"
case $reply in "err cgroup memguard.slice/"*"is a placed run or a job cgroup already"*) ;; *) fail "bob got: $reply" ;; esac

assert_eq "$(placed_runs)" 0 "placed runs"

echo "a second run from his job while the first runs: refused; that launcher runs in the job"
job job7 300M
as bob job7 "$memguard" -n 1 -- sleep 600 2>"$work/b1.err" &
wait_for 20 placed_tasks 1 || { cat "$work/b1.err" "$work/daemon.log"; fail "bob's first run was not placed"; }
reply=$(client bob job7 line place)
note "$reply"
case $reply in "err another placed run of this user already takes the limit of cgroup job7"*) ;;
*) fail "bob got: $reply" ;;
esac
as bob job7 "$memguard" -n 1 --report "$share/b2.json" -- sh -c 'cut -d: -f3 /proc/self/cgroup' \
	>"$work/b2.out" 2>"$work/b2.err" || { cat "$work/b2.err"; fail "bob's second launcher failed"; }
cat "$work/b2.err"
assert_eq "$(json "$share/b2.json" 'r["mode"]')" degraded "mode of the second run"
assert_eq "$(cat "$work/b2.out")" /job7 "where the second run's task ran"
assert_contains "$work/b2.err" "already takes the limit of cgroup job7" "the launcher says why"
assert_eq "$(placed_runs)" 1 "placed runs while the first runs"
pkill -KILL -u bob -x memguard
wait_for 10 no_placed_runs || fail "bob's first run was left behind"
reply=$(client bob job7 line place)
note "$reply"
case $reply in "ok run memguard/user-"*) ;; *) fail "once the first run was gone, bob got: $reply" ;; esac

kill -0 "$daemon_pid" || fail "memguardd died"
stop_daemon
grep -i "placement for" "$work/daemon.log" | sed 's/^/    /' || true
echo "PASS"
