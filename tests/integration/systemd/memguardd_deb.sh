#!/usr/bin/env bash
# The Debian package installed for real under systemd as PID 1
# (tests/vm/run-suite.sh --systemd): dpkg -i enables and starts memguardd
# (Type=notify READY) under the hardened unit, the programs and man pages are
# where the package says, memguard.conf is a conffile, a conf.d drop-in applies
# on reload (memguardd kills what the drop-in tells it to guard), and remove
# then purge leave nothing of the package behind. Prints the unit's
# systemd-analyze security table and holds its exposure at or below the
# measured value. The package comes from packaging/build-deb.sh (build-deb/ at
# the top of the tree, or $MEMGUARD_DEB); scripts/test.sh builds it first.
. "$(dirname "$0")/../lib.sh"
[ -d /run/systemd/system ] || fail "not running under systemd: use tests/vm/run-suite.sh --systemd"

# The exposure measured in the guest (docs/daemon.md, "Hardening: the unit's exposure").
max_exposure=2.3
version=$(dpkg-parsechangelog -l "$top/packaging/debian/changelog" -S Version)
deb=${MEMGUARD_DEB:-$top/build-deb/memguard_${version}_$(dpkg --print-architecture).deb}
[ -f "$deb" ] || fail "no package at $deb: build it first with packaging/build-deb.sh"
dropin=/etc/memguard/conf.d/50-deb-test.conf

cleanup() {
	systemctl stop mgdebvictim.service >/dev/null 2>&1 || true
	systemctl reset-failed mgdebvictim.service >/dev/null 2>&1 || true
	dpkg -P memguard >/dev/null 2>&1 || true
	rm -f "$dropin"
	rmdir /etc/memguard/conf.d /etc/memguard 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

journal() { journalctl -u memguardd -b --no-pager -o cat; }
gone() { [ ! -e "$1" ] && [ ! -L "$1" ]; }
assert_gone() { gone "$1" || { ls -ld "$1"; fail "$2: $1 is still there"; }; }

# Another test in this guest may have put its own copies in front of the package's.
rm -f /etc/systemd/system/memguardd.service /etc/systemd/system/memguardd.socket /usr/local/bin/memguard
systemctl daemon-reload
! systemctl is-active --quiet memguardd.service || fail "memguardd already runs before the package is installed"

# The guest's root is the host's under an overlay: a build container's policy-rc.d ("exit 101") would
# forbid the start that dpkg -i does on a real node. Only the guest's copy goes.
rm -f /usr/sbin/policy-rc.d

# man-db's trigger would rebuild the index of the host's every man page over
# 9p, more than ten minutes under TCG; man finds the new pages without it.
rm -f /var/lib/man-db/auto-update

echo "dpkg -i ${deb#"$top"/}"
t0=$SECONDS
dpkg -i "$deb" >"$work/dpkg-i.log" 2>&1 || { cat "$work/dpkg-i.log"; fail "dpkg -i"; }
assert_eq "$(dpkg-query -W -f='${Status} ${Version}' memguard)" "install ok installed $version" "package state"
note "dpkg -i took $((SECONDS - t0)) s"
cmp -s /lib/systemd/system/memguardd.service "$top/packaging/systemd/memguardd.service" ||
	fail "the package's unit differs from packaging/systemd/memguardd.service: $deb is stale, rebuild it"

echo "memguardd enabled and running, READY reached"
assert_eq "$(systemctl is-enabled memguardd.service)" enabled "memguardd.service enabled by the postinst"
assert_eq "$(systemctl is-enabled memguardd.socket)" enabled "memguardd.socket enabled by the postinst"
state=$(systemctl show -p ActiveState,SubState memguardd.service | sort | tr '\n' ' ')
[ "$state" = "ActiveState=active SubState=running " ] || { journal; fail "memguardd.service: $state"; }
assert_eq "$(systemctl show -p StatusText --value memguardd.service)" "watching memory pressure" \
	"status text from sd_notify (Type=notify, READY=1)"
[ -S /run/memguard/place.sock ] || fail "systemd holds no placement socket"
assert_eq "$(command -v memguard)" /usr/bin/memguard "memguard on PATH"
assert_eq "$(command -v memguardd)" /usr/sbin/memguardd "memguardd on PATH"
# The package's file list (dpkg -S would read every package's, minutes over 9p under TCG).
grep -qx /usr/sbin/memguardd /var/lib/dpkg/info/memguard.list || fail "memguard.list lacks /usr/sbin/memguardd"
pid=$(systemctl show -p MainPID --value memguardd.service)

echo "the hardened unit: memguardd has what it needs and no more"
status=/proc/$pid/status
# CAP_CHOWN 0, CAP_DAC_OVERRIDE 1, CAP_KILL 5, CAP_SYS_PTRACE 19, CAP_SYS_ADMIN 21, CAP_SYS_RESOURCE 24.
assert_eq "$(awk '/^CapEff:/ {print $2}' "$status")" 0000000001a81023 "effective capabilities (CapabilityBoundingSet=)"
assert_eq "$(awk '/^Seccomp:/ {print $2}' "$status")" 2 "seccomp filter mode (SystemCallFilter=)"
assert_eq "$(awk '/^NoNewPrivs:/ {print $2}' "$status")" 1 "NoNewPrivs"
locked=$(awk '/^VmLck:/ {print $2}' "$status")
((locked > 0)) || fail "VmLck $locked kB: mlockall failed without CAP_IPC_LOCK"
chrt -p "$pid" | grep -q SCHED_FIFO || fail "not SCHED_FIFO: $(chrt -p "$pid")"
assert_eq "$(cat /proc/"$pid"/oom_score_adj)" -1000 "oom_score_adj"
journal >"$work/journal"
grep -i "mlockall\|not permitted" "$work/journal" && fail "memguardd complained at start"
note "memguardd pid $pid: VmLck $locked kB, $(chrt -p "$pid" | sed -n 's/.*policy: //p')"

memguard -n 2 --mem 256M --report "$work/r.json" -- true 2>"$work/r.err" || { cat "$work/r.err"; fail "memguard run"; }
assert_eq "$(json "$work/r.json" "r['shares']")" elastic "the installed launcher sees the installed daemon"

echo "man pages"
for page in 1:memguard 8:memguardd 5:memguard.conf; do
	sec=${page%%:*} name=${page#*:}
	file=$(man -w "$sec" "$name") || fail "man -w $sec $name"
	assert_eq "$file" "/usr/share/man/man$sec/$name.$sec.gz" "man -w $sec $name"
	MANWIDTH=80 MAN_KEEP_STDERR=1 man -P cat "$sec" "$name" >"$work/man.txt" 2>"$work/man.err" ||
		{ cat "$work/man.err"; fail "man $sec $name"; }
	[ ! -s "$work/man.err" ] || { cat "$work/man.err"; fail "man $sec $name: warnings"; }
	grep -q "^NAME" "$work/man.txt" || fail "man $sec $name: no NAME section"
	grep -q "$name" "$work/man.txt" || fail "man $sec $name: the page does not name $name"
	note "man $sec $name: $(wc -l <"$work/man.txt") lines"
done

echo "memguard.conf is a conffile"
dpkg-query -W -f='${Conffiles}\n' memguard >"$work/conffiles"
grep -q "^ /etc/memguard/memguard.conf [0-9a-f]\{32\}$" "$work/conffiles" ||
	{ cat "$work/conffiles"; fail "/etc/memguard/memguard.conf is not a conffile"; }
[ -d /etc/memguard/conf.d ] || fail "the package made no /etc/memguard/conf.d"

echo "a conf.d drop-in applies on reload: memguardd then guards and kills a victim it ignored before"
systemd-run --quiet --unit=mgdebvictim --slice=mgdebtest -p MemoryMax=64M sleep 600
wait_for 20 systemctl is-active --quiet mgdebvictim.service || fail "the victim did not start"
# Memory always counts as short (MemAvailable is below 98% of MemTotal on any
# running node), only the victim's slice is guarded, no fence: a kill at once.
cat >"$dropin" <<-EOF
	# memguardd_deb.sh: guard only the test's victim, and kill it.
	[daemon]
	guard = mgdebtest.slice/*
	available_min = 98%
	available_pressure = 99%
	outside_due = 0
	throttle = no
EOF
sleep 2 # memguardd polls MemAvailable at least once a second: it would act now if it read conf.d unasked
systemctl is-active --quiet mgdebvictim.service || { journal; fail "the victim died before the reload"; }
reloads=$(journal | grep -c "configuration reloaded" || true)
systemctl reload memguardd.service
wait_for 60 sh -c '! systemctl is-active --quiet mgdebvictim.service' ||
	{ journal; fail "the victim outlived the reload: the drop-in was not applied"; }
wait_for 20 sh -c "journalctl -u memguardd -b --no-pager -o cat | grep -q 'mgdebtest.slice/mgdebvictim.service: 1 process killed'" ||
	{ journal; fail "no kill of the victim in the journal"; }
journal >"$work/journal"
[ "$(grep -c "configuration reloaded" "$work/journal")" -gt "$reloads" ] || fail "no reload in the journal"
grep "killing cgroup mgdebtest.slice/mgdebvictim.service\|mgdebvictim.service: 1 process" "$work/journal" | sed 's/^/    /'
# process_mrelease passed the seccomp filter: with EPERM it neither reaps nor
# finds the process exited.
grep -Eq "mgdebvictim.service: 1 process killed \((1 reaped at once, 0|0 reaped at once, 1) exited before\)" \
	"$work/journal" ||
	fail "process_mrelease did not reap the victim (blocked by SystemCallFilter=?)"
assert_contains /var/log/memguard/kills.jsonl '"cgroup":"mgdebtest.slice/mgdebvictim.service"' \
	"kill log in the unit's LogsDirectory"
assert_eq "$(systemctl show -p MainPID --value memguardd.service)" "$pid" "the same memguardd after the reload"
# What stays for the purge below: an administrator's own, harmless, drop-in.
printf '# memguardd_deb.sh: an administrator'"'"'s drop-in\n[log]\nlevel = info\n' >"$dropin"
systemctl reload memguardd.service
systemctl reset-failed mgdebvictim.service 2>/dev/null || true

echo "systemd-analyze security memguardd.service"
systemd-analyze security --no-pager memguardd.service >"$work/security" 2>&1 ||
	{ cat "$work/security"; fail "systemd-analyze security"; }
grep -v "✓" "$work/security" | sed 's/^/    /'
exposure=$(sed -n 's/.*Overall exposure level for memguardd.service: \([0-9.]*\).*/\1/p' "$work/security")
[ -n "$exposure" ] || fail "no overall exposure in systemd-analyze's output"
note "exposure $exposure (at most $max_exposure)"
awk -v e="$exposure" -v m="$max_exposure" 'BEGIN { exit !(e <= m) }' ||
	fail "the unit's exposure rose to $exposure (was $max_exposure)"

# dpkg -r runs the same maintainer scripts as apt-get remove, without apt's
# cache (another 40 s under TCG).
echo "dpkg -r: the service stops, the programs go, the conffile stays"
t0=$SECONDS
dpkg -r memguard >"$work/remove.log" 2>&1 || { cat "$work/remove.log"; fail "dpkg -r"; }
note "dpkg -r took $((SECONDS - t0)) s"
assert_eq "$(dpkg-query -W -f='${Status}' memguard)" "deinstall ok config-files" "package state after remove"
assert_eq "$(systemctl is-active memguardd.service || true)" inactive "memguardd.service after remove"
assert_eq "$(systemctl is-active memguardd.socket || true)" inactive "memguardd.socket after remove"
wait_for 10 sh -c '! pgrep -x memguardd >/dev/null' || fail "memguardd still runs: $(pgrep -a memguardd)"
for f in /usr/bin/memguard /usr/sbin/memguardd /lib/systemd/system/memguardd.service \
	/lib/systemd/system/memguardd.socket /usr/share/man/man8/memguardd.8.gz /run/memguard; do
	assert_gone "$f" "after remove"
done
[ -f /etc/memguard/memguard.conf ] || fail "remove took the conffile /etc/memguard/memguard.conf"
[ -f "$dropin" ] || fail "remove took the administrator's drop-in"
[ -f /var/log/memguard/kills.jsonl ] || fail "remove took the kill log (only a purge does)"

echo "dpkg -P: nothing of the package is left"
t0=$SECONDS
dpkg -P memguard >"$work/purge.log" 2>&1 || { cat "$work/purge.log"; fail "dpkg -P"; }
note "dpkg -P took $((SECONDS - t0)) s"
sed 's/^/    /' "$work/purge.log"
dpkg-query -W memguard >/dev/null 2>&1 && fail "dpkg still knows memguard: $(dpkg-query -W -f='${Status}' memguard)"
for f in /etc/memguard/memguard.conf /var/log/memguard /run/memguard /usr/share/doc/memguard \
	/usr/share/memguard /usr/share/bash-completion/completions/memguard /var/lib/dpkg/info/memguard.list; do
	assert_gone "$f" "after purge"
done
left=$(find /etc/systemd /lib/systemd /usr/lib/systemd /var/lib/systemd -name 'memguardd*' 2>/dev/null)
[ -z "$left" ] || fail "unit files, links or state left after purge: $left"
# Only what dpkg never owned: the administrator's drop-in (dpkg leaves its directory with it).
assert_eq "$(find /etc/memguard | sort | tr '\n' ' ')" "/etc/memguard /etc/memguard/conf.d $dropin " \
	"/etc/memguard after purge"
systemctl daemon-reload
enabled=$(systemctl is-enabled memguardd.service 2>&1 || true)
note "systemctl is-enabled memguardd.service: $enabled"
case $enabled in
not-found | *"No such file or directory"*) ;;
*) fail "memguardd.service after purge: $enabled" ;;
esac
echo PASS
