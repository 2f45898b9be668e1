#!/usr/bin/env bash
# The packaged unit under systemd as PID 1 (tests/vm/run-suite.sh --systemd):
# Type=notify reaches READY with a status text, the watchdog is armed, a
# reload (SIGHUP) keeps the daemon running, and it stops cleanly.
. "$(dirname "$0")/../lib.sh"
[ -d /run/systemd/system ] || fail "not running under systemd: use tests/vm/run-suite.sh --systemd"

# Installed as a package would (the guest's root is a throwaway overlay): the
# unit's PrivateTmp= and ProtectHome= would hide a binary under /tmp or /home.
install -m 0755 "$memguardd" /usr/sbin/memguardd
cp "$top/packaging/systemd/memguardd.service" /etc/systemd/system/memguardd.service
systemctl daemon-reload
systemctl start memguardd.service || { systemctl status memguardd.service; journalctl -u memguardd -b --no-pager; fail "start"; }
assert_eq "$(systemctl is-active memguardd.service)" active "active after start"
status=$(systemctl show -p StatusText --value memguardd.service)
note "StatusText: $status"
assert_eq "$status" "watching memory pressure" "status text from sd_notify"
[ "$(systemctl show -p WatchdogUSec --value memguardd.service)" != "0" ] || fail "watchdog not armed"
[ -s /run/memguard/memguardd.pid ] || fail "no pid file"

pid=$(systemctl show -p MainPID --value memguardd.service)
systemctl reload memguardd.service
sleep 1
assert_eq "$(systemctl is-active memguardd.service)" active "active after reload"
assert_eq "$(systemctl show -p MainPID --value memguardd.service)" "$pid" "same process after reload"
journalctl -u memguardd -b --no-pager -o cat >"$work/journal"
assert_contains "$work/journal" "configuration reloaded" "reload logged to the journal"
assert_eq "$(cat /proc/"$pid"/oom_score_adj)" -1000 "oom_score_adj"

# With the daemon there, the launcher picks elastic shares.
"$memguard" -n 2 --mem 256M --report "$work/r.json" -- true 2>/dev/null
assert_eq "$(json "$work/r.json" "r['shares']")" elastic "launcher's share mode with memguardd running"

systemctl stop memguardd.service
assert_eq "$(systemctl is-active memguardd.service || true)" inactive "stopped"
