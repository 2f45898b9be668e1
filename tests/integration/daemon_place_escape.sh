#!/usr/bin/env bash
# memguardd's placement service against bob, who tries to get a run without
# his job's limit: from 33 cgroups of his own nested below his job (the
# limit above them out of the chain memguardd reads), and from inside a run
# of the systemd backend's slice (a second run with the job's limit again).
# Both must be refused, and no run made.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"
. "$(dirname "$0")/place_lib.sh"
trap 'cleanup; remove_tree "$cgroot/job6"; remove_tree "$cgroot/memguard.slice"' EXIT

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
kill -0 "$daemon_pid" || fail "memguardd died"
stop_daemon
grep -i "placement for" "$work/daemon.log" | sed 's/^/    /' || true
echo "PASS"
