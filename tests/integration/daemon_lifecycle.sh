#!/usr/bin/env bash
# Restarting memguardd mid-run leaves the tasks untouched and the new daemon
# finds them with their shares; a bad config on SIGHUP keeps the old one;
# --status shows the guarded cgroups.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon_lib.sh"

start_daemon
trap 'stop_daemon; rm -rf "$work"' EXIT
# The tasks outlive the restart and the reloads below, even on a slow guest; they are ended at the end.
"$memguard" -n 2 --elastic --mem 512M --report "$work/r.json" -- "$memhog" -H 60000 64 2>"$work/err" &
run=$!
# New task cgroups are noticed through inotify, not the 60 s rescan (10 s: a loaded TCG guest is slow).
for _ in $(seq 200); do
	[ "$(grep -c 'guarding cgroup memguard/run-.*/task-[01]$' "$work/daemon.log")" -eq 2 ] && break
	sleep 0.05
done
assert_eq "$(grep -c 'guarding cgroup memguard/run-.*/task-[01]$' "$work/daemon.log")" 2 \
	"both task cgroups guarded within 10 s"
sleep 1
# Restart, as an upgrade would.
stop_daemon
start_daemon
"$memguardd" -c "$work/memguard.conf" --status >"$work/status"
sed 's/^/    /' "$work/status"
assert_contains "$work/status" "2 guarded cgroups" "status sees both tasks"
assert_contains "$work/status" "task-1 .* of 256MiB" "share read back from the cgroup"

# A good reload that changes the PSI trigger re-arms the node's: one trigger on
# /proc/pressure/memory, none on a guarded cgroup (which the launcher may
# remove while a trigger is written: daemon_trigger_leak.sh).
open_files() { find /proc/"$daemon_pid"/fd -mindepth 1 -exec readlink {} + 2>/dev/null; }
good_conf=$(cat "$work/memguard.conf")
echo "trigger_window = 2s" >>"$work/memguard.conf"
kill -HUP "$daemon_pid"
sleep 1
assert_eq "$(grep -c 'configuration reloaded' "$work/daemon.log")" 1 "good reload"
assert_eq "$(grep -c 're-arm the PSI trigger' "$work/daemon.log" || true)" 0 "the node's trigger re-armed"
# Without PSI (a kernel booted with psi=0) there is no trigger to arm, and memguardd says so.
if [ -e /proc/pressure/memory ]; then
	assert_eq "$(open_files | grep -c '^/proc/pressure/memory$' || true)" 1 "one trigger, on the node"
else
	assert_eq "$(open_files | grep -c '^/proc/pressure/memory$' || true)" 0 "no trigger without PSI"
	assert_contains "$work/daemon.log" "PSI is off" "memguardd says it runs without PSI"
fi
assert_eq "$(open_files | grep -c '/memory.pressure$' || true)" 0 "no trigger on a guarded cgroup"

# A second memguardd (by hand, dry run) neither takes nor removes the pid file.
"$memguardd" -n -c "$work/memguard.conf" >"$work/second.log" 2>&1 &
second=$!
sleep 1
kill -TERM "$second" && wait "$second" || true
assert_contains "$work/second.log" "memguardd.pid is held by another memguardd" "second instance told"
assert_eq "$(cat /run/memguard/memguardd.pid)" "$daemon_pid" "the running daemon's pid file kept"

# A bad config on reload: logged, the old one kept, the daemon alive.
echo "[daemon]" >"$work/memguard.conf"
echo "available_min = lots" >>"$work/memguard.conf"
kill -HUP "$daemon_pid"
sleep 1
kill -0 "$daemon_pid" || fail "memguardd died on a bad reload"
assert_contains "$work/daemon.log" "reload failed: keeping the running configuration" "bad reload"
assert_contains "$work/daemon.log" "memguard.conf:2: .*available_min" "names file and line"
# Values that parse but cannot work are refused the same way, on reload as at start.
for bad in "poll_max = 0" "trigger_window = 30s" "available_min = 100%" "available_pressure = 1%"; do
	printf '%s\n%s\n' "$good_conf" "$bad" >"$work/memguard.conf"
	fails=$(grep -c 'reload failed' "$work/daemon.log")
	kill -HUP "$daemon_pid"
	sleep 0.5
	assert_eq "$(grep -c 'reload failed' "$work/daemon.log")" "$((fails + 1))" "reload refuses \"$bad\""
	"$memguardd" -c "$work/memguard.conf" --status >/dev/null 2>"$work/start.err" && fail "starts with \"$bad\""
	sed 's/^/    /' "$work/start.err"
done
kill -0 "$daemon_pid" || fail "memguardd died on a refused reload"

# Nothing above disturbed the tasks: they are still there to be stopped, and stop as told.
[ "$(find "$cgroot/memguard" -path '*/run-*/task-*' -type d | wc -l)" -eq 2 ] ||
	{ cat "$work/err"; fail "a task was disturbed by the restart or the reloads"; }
kill -TERM "$run"
wait "$run" || true
assert_eq "$(json "$work/r.json" "[t['signal'] for t in r['tasks']]")" "['SIGTERM', 'SIGTERM']" \
	"the tasks ended by our SIGTERM, nothing else"
[ ! -s "$work/kills.jsonl" ] || fail "something was killed"
stop_daemon
assert_no_leftover

# The pid file is never written through a symlink left where it goes.
rm -f /run/memguard/memguardd.pid
ln -s "$work/elsewhere" /run/memguard/memguardd.pid
start_daemon
[ ! -e "$work/elsewhere" ] || fail "memguardd wrote its pid file through a symlink"
stop_daemon
rm -f /run/memguard/memguardd.pid
