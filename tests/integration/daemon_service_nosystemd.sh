#!/usr/bin/env bash
# [service UNIT] sections on a node whose init is not systemd (the plain guest: tests/vm/init.sh is
# PID 1): memguardd says at start, and at a reload, that they cannot apply there, and guards on; the
# launcher, which reads the same files, skips them and runs its job, even when a [service] section
# holds a mistake that memguardd refuses.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon_lib.sh"
[ ! -d /run/systemd/system ] || fail "systemd is PID 1 here: this test is for a node without it"

start_daemon $'[service slurmctld]\n[service munge.service]\nwindow = 20min'
trap 'stop_daemon; rm -rf "$work"' EXIT
said="2 \[service\] sections (slurmctld.service, munge.service) cannot apply on this node: its init is not systemd"
grep -q "$said" "$work/daemon.log" || { cat "$work/daemon.log"; fail "memguardd did not say the [service] sections cannot apply"; }
note "$(grep "cannot apply" "$work/daemon.log")"
kill -HUP "$daemon_pid"
wait_for 10 sh -c '[ "$(grep -c "cannot apply on this node" "$0")" -ge 2 ]' "$work/daemon.log" ||
	{ cat "$work/daemon.log"; fail "a reload did not say it again"; }
kill -0 "$daemon_pid" || fail "memguardd did not guard on"
"$memguardd" -c "$work/memguard.conf" --status >"$work/status"
assert_contains "$work/status" "2 watched services (slurmctld.service, munge.service): nothing known" "--status"

# The launcher runs its job with those sections, and with one memguardd refuses.
"$memguard" --config "$work/memguard.conf" -n 1 -- true || fail "the launcher refused [service] sections"
printf '[service pbs_mom]\nhorizion = 1h\n' >>"$work/memguard.conf"
"$memguard" --config "$work/memguard.conf" -n 1 -- true ||
	fail "the launcher failed on a mistake in a [service] section, which it never reads"
status=0
"$memguardd" -c "$work/memguard.conf" --status >"$work/refused" 2>&1 || status=$?
assert_eq "$status" 1 "memguardd's exit status with a mistake in a [service] section"
assert_contains "$work/refused" 'memguard.conf:8: unknown key "horizion" in section \[service pbs_mom.service\]' \
	"memguardd's error"
