#!/usr/bin/env bash
# memguardd's placement service against an attacker, bob: he cannot get into
# alice's job cgroup, name a path or an identity, or stall the service with
# junk or a thousand idle connections while alice is served.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"
. "$(dirname "$0")/place_lib.sh"

echo "setup: alice's job 77.srv, prepared by the prologue"
"$top/packaging/pbs/prologue" 77.srv alice alice >/dev/null
job job4

echo "bob cannot get into alice's job cgroup, nor name a path"
reply=$(client bob job4 line "place job=77.srv")
case $reply in "ok run job4/memguard-run-"*) ;; *) fail "bob asking for alice's job got: $reply" ;; esac
[ -z "$(cat "$cgroot/memguard.jobs/77.srv/job/cgroup.procs")" ] || fail "a process of bob's is in alice's job"
reply=$(client bob job4 line "place job=../../memguard.jobs/77.srv")
case $reply in "err bad request"*) ;; *) fail "a path as job id got: $reply" ;; esac
reply=$(client bob job4 line "place uid=0")
case $reply in "err bad request"*) ;; *) fail "a claimed uid got: $reply" ;; esac

echo "a connection that sends nothing lasts at most the 2 s docs/security.md states"
held=$(client bob job4 idle)
note "bob's idle connection was closed after $held s"
awk -v t="$held" 'BEGIN { exit !(t >= 1.5 && t <= 3) }' || fail "an idle connection lasted $held s, not 2 s"

echo "bob cannot exhaust the service: junk, 1000 idle connections; alice is still served ($SECONDS s)"
reply=$(client bob job4 junk)
note "5 MB of junk: $reply ($SECONDS s)"
case $reply in "err request too long"* | closed*) ;; *) fail "5 MB of junk got: $reply" ;; esac
client bob job4 hold 1000 30 >"$work/held" &
holder=$!
wait_for 10 test -s "$work/held" || fail "the idle connections did not open"
note "bob holds $(cat "$work/held") connections ($SECONDS s)"
job job5 300M
as alice job5 "$memguard" -n 1 --report "$share/a5.json" -- true 2>"$work/a5.err" ||
	{ cat "$work/a5.err"; fail "alice's run failed while bob held connections"; }
assert_eq "$(json "$share/a5.json" 'r["mode"]')" cgroup "alice's mode while bob floods"
kill "$holder" 2>/dev/null || true
kill -0 "$daemon_pid" || fail "memguardd died"
"$top/packaging/pbs/epilogue" 77.srv alice alice >/dev/null 2>&1 || fail "the epilogue failed"

wait_for 10 no_placed_runs || true
stop_daemon
grep -i "placed run\|placed pid\|placement for" "$work/daemon.log" | sed 's/^/    /' || true
echo "PASS"
