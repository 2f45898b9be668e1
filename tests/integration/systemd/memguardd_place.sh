#!/usr/bin/env bash
# The placement service under systemd as PID 1 (tests/vm/run-suite.sh
# --systemd): systemd holds the socket, an ordinary user's run started from a
# scope in a slice with MemoryMax= (listed in [daemon] place_beside, as a site
# whose jobs are such scopes would) gets a real cgroup inside that slice, a
# scope with a limit of its own gets none, and a restart of memguardd neither
# refuses launchers nor loses a running placed run: the new daemon adopts it
# and still ends it with its job; the memory.max memguardd sets on the scope
# for the run goes with "systemctl stop memguardd" and comes back when a
# started or restarted memguardd adopts the run (before, a1c1d0c's, it stayed
# on the scope with no memguardd to lift it); and a caller that exits at
# once, leaving a child in its run, leaves nothing behind.
. "$(dirname "$0")/../lib.sh"
[ -d /run/systemd/system ] || fail "not running under systemd: use tests/vm/run-suite.sh --systemd"

install -m 0755 "$memguardd" /usr/sbin/memguardd
install -m 0755 "$memguard" /usr/local/bin/memguard
cp "$top/packaging/systemd/memguardd.service" "$top/packaging/systemd/memguardd.socket" /etc/systemd/system/
# This site's jobs are scopes in alicejobs.slice: runs go beside them.
mkdir -p /etc/memguard/conf.d
printf '[daemon]\nplace_beside = alicejobs.slice/*.scope\n' >/etc/memguard/conf.d/place.conf
trap 'rm -f /etc/memguard/conf.d/place.conf; rm -rf "$work"' EXIT
id alice >/dev/null 2>&1 || useradd -m -s /bin/sh alice
systemctl daemon-reload
systemctl start memguardd.socket memguardd.service ||
	{ journalctl -u memguardd -b --no-pager; fail "start"; }
[ -S /run/memguard/place.sock ] || fail "systemd did not create the placement socket"

# Runs go beside their caller's cgroup: in the slice that holds the caller's scope.
placed_runs() { find "$cgroot" -mindepth 1 -type d -name 'memguard-run-*' -prune 2>/dev/null | wc -l; }
runs_are() { [ "$(placed_runs)" -eq "$1" ]; }
journal() { journalctl -u memguardd -b --no-pager -o cat; }
# A job as systemd users make one: a slice with MemoryMax=300M, the job's scope in it.
systemctl set-property --runtime alicejobs.slice MemoryMax=300M
scope() { systemd-run --quiet --scope --slice=alicejobs.slice --uid=alice "$@"; }

echo "an ordinary user's run from a scope in a slice with MemoryMax=300M"
scope -- memguard -n 2 --report /home/alice/r1.json -- sleep 0.3 2>"$work/r1.err" ||
	{ cat "$work/r1.err"; journal; fail "alice's run failed"; }
cat "$work/r1.err"
journal | grep -qF "placing ordinary users' runs on request at /run/memguard/place.sock, each beside its caller's task cgroup (alicejobs.slice/*.scope)" ||
	{ journal; fail "memguardd did not say where runs go"; }
json /home/alice/r1.json 'r["where"]' | grep -q '^alicejobs.slice/memguard-run-' ||
	fail "where: $(json /home/alice/r1.json 'r["where"]')"
assert_eq "$(json /home/alice/r1.json 'r["mode"]')" cgroup "mode under systemd"
json /home/alice/r1.json 'r["placed_by"]' | grep -q "300MiB is memory.max of alicejobs.slice" ||
	fail "placed_by: $(json /home/alice/r1.json 'r["placed_by"]')"
runs_are 0 || fail "the placed run was left behind"

echo "a scope with a limit of its own: no run beside it, so degraded inside it"
scope -p MemoryMax=200M -- memguard -n 1 --report /home/alice/r0.json -- true 2>"$work/r0.err" ||
	{ cat "$work/r0.err"; fail "alice's run in a limited scope failed"; }
assert_eq "$(json /home/alice/r0.json 'r["mode"]')" degraded "mode in a self-limited scope"
assert_contains "$work/r0.err" "sets memory.max itself" "why"

echo "a restart of memguardd: the running placed run is adopted, still guarded, and still ends with its job"
scope --unit=alicejob -- sh -c 'memguard -n 1 --report /home/alice/r2.json -- sleep 600; true' 2>"$work/r2.err" &
wait_for 30 runs_are 1 || { cat "$work/r2.err"; journal; fail "alice's long run was not placed"; }
caller=$cgroot/alicejobs.slice/alicejob.scope
# capped: the scope keeps what the run leaves of the slice's 300 MiB, and says so in user.memguard.keeps.
capped() { [ "$(cat "$caller/memory.max")" != max ] && [ "$(keeps_of "$caller")" = "$(cat "$caller/memory.max")" ]; }
wait_for 10 capped || fail "alicejob.scope: memory.max $(cat "$caller/memory.max"), keeps $(keeps_of "$caller")"
note "alicejob.scope keeps $(cat "$caller/memory.max") bytes beside its run"
adopted() { [ "$(journalctl -u memguardd -b --no-pager -o cat | grep -c "adopted (launcher running)")" -ge "$1" ]; }

echo "systemctl stop memguardd: the scope's cap goes with it; systemctl start: the run is adopted, the cap back"
systemctl stop memguardd.service
assert_eq "$(cat "$caller/memory.max")" max "alicejob.scope's memory.max with memguardd stopped"
assert_eq "$(keeps_of "$caller")" none "alicejob.scope's user.memguard.keeps with memguardd stopped"
runs_are 1 || fail "alice's run did not outlive the stop of memguardd"
systemctl start memguardd.service || { journal; fail "start after stop"; }
wait_for 10 adopted 1 || { journal; fail "the started memguardd did not adopt the run"; }
wait_for 10 capped || fail "after the start, alicejob.scope: memory.max $(cat "$caller/memory.max"), keeps $(keeps_of "$caller")"

systemctl restart memguardd.service
wait_for 10 adopted 2 || { journal; fail "the restarted memguardd did not adopt the run"; }
wait_for 10 capped || fail "after the restart, alicejob.scope: memory.max $(cat "$caller/memory.max"), keeps $(keeps_of "$caller")"
scope -- memguard -n 1 -- true 2>"$work/r3.err" || { cat "$work/r3.err"; fail "a run right after the restart failed"; }
grep -q "degraded" "$work/r3.err" && { cat "$work/r3.err"; fail "a run right after the restart was degraded"; }
# A second run from the job is placed too, beside the first, under the same limit.
scope -- memguard -n 1 --report /home/alice/r4.json -- true 2>"$work/r4.err" ||
	{ cat "$work/r4.err"; fail "a second run from alicejobs failed"; }
assert_eq "$(json /home/alice/r4.json 'r["mode"]')" cgroup "a second run from alicejobs after the restart"
systemctl kill --signal=KILL alicejob.scope
wait_for 30 test -s /home/alice/r2.json || { journal; fail "no report after alicejob ended"; }
assert_eq "$(json /home/alice/r2.json 'r["tasks"][0]["signal"]')" SIGTERM "the task was told"
wait_for 15 runs_are 0 || { journal; fail "the adopted run was left behind"; }
pgrep -u alice >/dev/null && { ps -u alice -o pid,args; fail "alice's processes outlived her job"; }

echo "a caller that leaves a child in its run and exits at once"
# The child must not keep a run of its own, uncounted: it goes with the run after kill_grace. The
# caller was alone in its scope, so its move into the run empties the scope, the run's tether: it may
# be told to end (SIGTERM, 143) before it exits by itself (0).
install -m 0755 "$build/tests/programs/placeleave" /usr/local/bin/placeleave
status=0
scope -- placeleave /run/memguard/place.sock /bin/sleep 600 || status=$?
case $status in 0 | 137 | 143) ;; *) fail "alice's caller ended with $status (3: never moved into a run)" ;; esac
no_sleep() { ! pgrep -u alice -x sleep >/dev/null; }
wait_for 20 no_sleep || { journal; ps -u alice -o pid,cgroup,args; fail "the child outlived its caller's placement"; }
wait_for 15 runs_are 0 || { journal; fail "the run of the caller that left was left behind"; }

systemctl stop memguardd.service memguardd.socket
journal | grep -i "placed\|placement" | sed 's/^/    /' || true
echo PASS
