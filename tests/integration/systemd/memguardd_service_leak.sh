#!/usr/bin/env bash
# memguardd's service guard under systemd as PID 1 (tests/vm/run-suite.sh --systemd --mem 1536):
# memguardd from the packaged unit, one [service UNIT] drop-in per unit, and services of the tests'
# own (tests/programs/svcmem, which says "Cannot allocate memory" when it cannot grow or fork, and goes
# on). In one guest, one after the other:
#   1. leak-high, leaking under MemoryHigh=, is restarted within two minutes of being first throttled;
#      leaking again at once, it is not restarted again (restart_limit = 1), and the journal says why.
#      leak-max, leaking into a MemoryMax= at which the kernel may not kill it (OOMScoreAdjust=-1000),
#      fails its allocations ("Cannot allocate memory" in its log file: its writes to the journal's
#      socket fail there too, ENOBUFS), is stuck there, and is restarted.
#      leak-refuse, whose unit refuses a restart (RefuseManualStop=yes) and whose process ignores
#      SIGTERM, gets SIGTERM and then SIGKILL, each said in the journal.
#   2. leak-free, leaking with no limit at all, under the default settings (its section has no keys),
#      is restarted before MemAvailable falls under 5 % of MemTotal, with a heartbeat on the node never
#      1 s late (the goal, 250 ms, and the kernel alone are measured by bench/leak.sh).
#   3. hog, taking all but 3 % of MemTotal at once (too fast for a trend), is restarted by the outsider
#      rule's ordering: the pressure guard restarts the watched unit rather than kill in it.
#   4. steady and sawtooth (a 30 s cycle, inside a one-minute window), judged all along, are never
#      restarted in 4 minutes.
# The journal names each restart (MESSAGE_ID, MEMGUARD_UNIT, MEMGUARD_ACTION=restart); memguardd
# --status lists each unit, a unit not loaded is reported, and the metrics file has them. Timing goals
# are the benchmark's; the bounds here are the issue's (two minutes) or generous (1 s).
. "$(dirname "$0")/../lib.sh"
[ -d /run/systemd/system ] || fail "not running under systemd: use tests/vm/run-suite.sh --systemd"

msgid=fb9ec08b963847259d68cb0727df92fd
# The guest runs other tests after this one: nothing of it may stay.
cleanup() {
	systemctl stop steady sawtooth leak-high leak-max leak-free hog memguardd memguardd.socket 2>/dev/null || true
	systemctl kill --signal=KILL leak-refuse 2>/dev/null || true
	rm -f /etc/memguard/conf.d/{00-test,steady,sawtooth,leak-high,leak-max,leak-refuse,leak-free,hog,ghost}.conf \
		/etc/systemd/system/{steady,sawtooth,leak-high,leak-max,leak-refuse,leak-free,hog}.service \
		/run/leak-free.env /run/hog.env /run/leak-max.log \
		/run/hog.done /run/memguard/metrics.prom
	systemctl daemon-reload || true
	rm -rf "$work"
}
trap cleanup EXIT
slice=$cgroot/system.slice
install -m 0755 "$memguardd" /usr/sbin/memguardd
install -m 0755 "$build/tests/programs/svcmem" /usr/local/bin/svcmem
cp "$top/packaging/systemd/memguardd.service" "$top/packaging/systemd/memguardd.socket" /etc/systemd/system/
mkdir -p /etc/memguard/conf.d
cat >/etc/memguard/conf.d/00-test.conf <<-EOF
	[daemon]
	metrics_file = /run/memguard/metrics.prom
	metrics_interval = 5s
EOF
# One drop-in per unit, as docs/daemon.md shows. A one-minute window holds the sawtooth's 30 s cycle
# twice; leak-free and hog keep the defaults.
for u in steady sawtooth leak-max leak-refuse ghost; do
	printf '[service %s]\nwindow = 1min\n' "$u" >"/etc/memguard/conf.d/$u.conf"
done
printf '[service leak-high]\nwindow = 1min\nrestart_limit = 1\n' >/etc/memguard/conf.d/leak-high.conf
printf '[service leak-free.service]\n' >/etc/memguard/conf.d/leak-free.conf
printf '[service hog]\n' >/etc/memguard/conf.d/hog.conf
# unit NAME LINE...: NAME.service with these [Service] lines.
unit() {
	local name=$1
	shift
	{
		echo "[Service]"
		printf '%s\n' "$@"
	} >"/etc/systemd/system/$name.service"
}
unit steady "ExecStart=/usr/local/bin/svcmem steady 120"
unit sawtooth "ExecStart=/usr/local/bin/svcmem sawtooth 40 200 30"
unit leak-high MemoryHigh=96M "ExecStart=/usr/local/bin/svcmem leak 8192"
# At its limit leak-max can write only into the last page of a file it appends to, as a server's own log.
unit leak-max MemoryMax=96M OOMScoreAdjust=-1000 StandardOutput=append:/run/leak-max.log \
	StandardError=append:/run/leak-max.log "ExecStart=/usr/local/bin/svcmem leak 8192 --work 500"
unit leak-refuse MemoryHigh=96M "ExecStart=/usr/local/bin/svcmem leak 8192 --ignore-term"
printf '[Unit]\nRefuseManualStop=yes\n' >>/etc/systemd/system/leak-refuse.service
unit leak-free EnvironmentFile=/run/leak-free.env 'ExecStart=/usr/local/bin/svcmem leak ${RATE} --after 5'
# The hog takes HOG_MIB once; started again, it holds 16 MiB.
unit hog EnvironmentFile=/run/hog.env \
	'ExecStart=/bin/sh -c "[ -e /run/hog.done ] && exec /usr/local/bin/svcmem steady 16; touch /run/hog.done; exec /usr/local/bin/svcmem steady ${HOG_MIB}"'
systemctl daemon-reload
systemctl start memguardd.socket memguardd.service || {
	journalctl -u memguardd -b --no-pager
	fail "start memguardd"
}

journal() { journalctl -u memguardd -b --no-pager -o cat; }
# actions UNIT ACTION: memguardd's journal entries of ACTION for UNIT.
actions() { journalctl -b --no-pager -o cat MESSAGE_ID=$msgid MEMGUARD_UNIT="$1.service" MEMGUARD_ACTION="$2"; }
main_pid() { systemctl show -p MainPID --value "$1.service"; }
avail_kib() { awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo; }
total_kib=$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)
events() { awk -v k="$2" '$1 == k { print $2 }' "$slice/$1.service/memory.events" 2>/dev/null || echo 0; }
show() {
	journal | sed 's/^/    memguardd: /'
	memguardd --status 2>&1 | sed 's/^/    status: /'
}

echo "1. leak-high under MemoryHigh=96M, leak-max at MemoryMax=96M and leak-refuse, beside steady and sawtooth"
systemctl start steady sawtooth leak-high leak-max leak-refuse
t0=$SECONDS
pid_steady=$(main_pid steady) pid_saw=$(main_pid sawtooth) pid_high=$(main_pid leak-high) pid_max=$(main_pid leak-max)
throttled='' high_restarted='' max_restarted=''
while ((SECONDS - t0 < 300)) && [[ -z $high_restarted || -z $max_restarted ]]; do
	[[ -z $throttled && $(events leak-high high) -gt 0 ]] && throttled=$SECONDS
	p=$(main_pid leak-high)
	[[ -z $high_restarted && $p != "$pid_high" && $p != 0 ]] && high_restarted=$SECONDS
	p=$(main_pid leak-max)
	[[ -z $max_restarted && $p != "$pid_max" && $p != 0 ]] && max_restarted=$SECONDS
	sleep 0.5
done
[[ -n $throttled ]] || { show; fail "leak-high was never throttled at its MemoryHigh="; }
[[ -n $high_restarted ]] || { show; fail "leak-high was not restarted within 5 minutes"; }
[[ -n $max_restarted ]] || { show; fail "leak-max was not restarted within 5 minutes"; }
note "leak-high: throttled $((throttled - t0)) s after its start, running again $((high_restarted - throttled)) s later"
((high_restarted - throttled <= 120)) || { show; fail "leak-high ran again only $((high_restarted - throttled)) s after it was first throttled"; }
actions leak-high restart | grep -q "restarting leak-high.service: it leaks" ||
	{ show; fail "no journal entry names leak-high's restart"; }
assert_contains /run/leak-max.log "Cannot allocate memory" "leak-max's log at its MemoryMax="
note "leak-max: $(grep -m1 "Cannot allocate memory" /run/leak-max.log)"
journalctl -b --no-pager -o verbose MESSAGE_ID=$msgid MEMGUARD_UNIT=leak-max.service MEMGUARD_ACTION=restart >"$work/max.entry"
assert_contains "$work/max.entry" "MEMGUARD_VERDICT=stuck" "why leak-max was restarted"
note "leak-max: running again $((max_restarted - t0)) s after its start; $(grep -m1 MESSAGE= "$work/max.entry" | sed 's/^ *//')"

echo "   leak-refuse: its restart refused, SIGTERM ignored, then SIGKILL"
refuse_killed() { actions leak-refuse kill | grep -q .; }
wait_for 180 refuse_killed || { show; fail "leak-refuse was not killed after its restart failed"; }
actions leak-refuse term >"$work/refuse.term"
assert_contains "$work/refuse.term" "restart of leak-refuse.service failed (RestartUnit: Operation refused" \
	"why leak-refuse's restart failed"
assert_contains "$work/refuse.term" "SIGTERM to its 1 process, SIGKILL to what is left in 10s" "what followed"
note "$(cat "$work/refuse.term")"
note "$(actions leak-refuse kill)"
journalctl -u leak-refuse -b --no-pager -o cat >"$work/leak-refuse.log"
assert_contains "$work/leak-refuse.log" "SIGTERM: ignored" "leak-refuse got SIGTERM"
wait_for 30 sh -c '[ "$(systemctl show -p MainPID --value leak-refuse.service)" = 0 ]' ||
	{ show; fail "leak-refuse's process outlived the SIGKILL"; }

echo "   leak-high leaks again at once: restart_limit = 1 holds, and says so"
pid_high=$(main_pid leak-high)
wait_for 180 sh -c "journalctl -b --no-pager -o cat MESSAGE_ID=$msgid MEMGUARD_UNIT=leak-high.service MEMGUARD_ACTION=none | grep -q restart_limit" ||
	{ show; fail "memguardd did not say that leak-high's restart_limit holds"; }
note "$(actions leak-high none | head -n 1)"
assert_eq "$(main_pid leak-high)" "$pid_high" "leak-high's process after its restart_limit"
assert_eq "$(actions leak-high restart | grep -c .)" 1 "restarts of leak-high"
systemctl stop leak-high leak-max

echo "2. leak-free, with no limit at all and the default settings"
sync
echo 3 >/proc/sys/vm/drop_caches
# It would take the node's MemAvailable in two minutes.
echo "RATE=$(($(avail_kib) / 120))" >/run/leak-free.env
note "MemAvailable $(($(avail_kib) >> 10)) MiB of $((total_kib >> 10)) MiB; leak-free leaks $(($(avail_kib) / 120)) KiB/s"
"$build/tests/programs/heartbeat" 150 >"$work/heartbeat" &
heartbeat=$!
systemctl start leak-free
pid_free=$(main_pid leak-free) t1=$SECONDS min=$(avail_kib) free_restarted=''
while ((SECONDS - t1 < 150)); do
	a=$(avail_kib)
	((a < min)) && min=$a
	p=$(main_pid leak-free)
	[[ $p != "$pid_free" && $p != 0 ]] && { free_restarted=$SECONDS; break; }
	sleep 0.2
done
systemctl stop leak-free
[[ -n $free_restarted ]] || { show; fail "leak-free was not restarted within 150 s"; }
wait "$heartbeat"
late=$(cat "$work/heartbeat")
note "leak-free: running again $((free_restarted - t1)) s after its start; MemAvailable fell to $((min >> 10)) MiB" \
	"($((min * 1000 / total_kib / 10)).$((min * 1000 / total_kib % 10)) % of MemTotal); worst heartbeat lateness $late ms"
((min * 20 >= total_kib)) || { show; fail "MemAvailable fell under 5 % of MemTotal ($((min >> 10)) MiB) before leak-free was restarted"; }
awk -v l="$late" 'BEGIN { exit !(l < 1000) }' || fail "the heartbeat ran late by $late ms"
note "$(actions leak-free restart)"

echo "3. hog takes all but 3 % of MemTotal at once: the outsider rule restarts it rather than kill in it"
sync
echo 3 >/proc/sys/vm/drop_caches
echo "HOG_MIB=$((($(avail_kib) - total_kib * 3 / 100) >> 10))" >/run/hog.env
mark_kernel_log
rm -f /run/hog.done
systemctl start hog
wait_for 120 sh -c "journalctl -b --no-pager -o cat MESSAGE_ID=$msgid MEMGUARD_UNIT=hog.service MEMGUARD_ACTION=restart | grep -q ." ||
	{ show; fail "hog was not restarted"; }
wait_for 60 sh -c '[ "$(systemctl show -p ActiveState --value hog.service)" = active ]' ||
	{ show; fail "hog did not run again after its restart"; }
note "$(actions hog restart)"
journalctl -b --no-pager -o verbose MESSAGE_ID=$msgid MEMGUARD_UNIT=hog.service MEMGUARD_ACTION=restart >"$work/hog.entry"
assert_contains "$work/hog.entry" "MEMGUARD_VERDICT=pressure" "why hog was restarted"
[[ ! -s /var/log/memguard/kills.jsonl ]] || { cat /var/log/memguard/kills.jsonl; fail "memguardd killed rather than restart"; }
[[ -z $(kernel_kills) ]] || { kernel_kills; fail "the kernel's OOM killer struck"; }
systemctl stop hog

echo "4. steady and sawtooth, for 4 minutes since they started"
while ((SECONDS - t0 < 240)); do sleep 1; done
assert_eq "$(main_pid steady)" "$pid_steady" "steady's process after $((SECONDS - t0)) s"
assert_eq "$(main_pid sawtooth)" "$pid_saw" "sawtooth's process after $((SECONDS - t0)) s"
assert_eq "$(actions steady restart | grep -c .)" 0 "restarts of steady"
assert_eq "$(actions sawtooth restart | grep -c .)" 0 "restarts of sawtooth"
memguardd --status >"$work/status" 2>&1
sed 's/^/    /' "$work/status"
# Judged, not warming up: each had whole windows of looks.
grep -Eq '^  steady\.service +steady ' "$work/status" || fail "steady is not judged steady"
grep -Eq '^  sawtooth\.service +steady ' "$work/status" || fail "sawtooth is not judged steady"
grep -Eq '^  ghost\.service +not loaded' "$work/status" || fail "--status does not report ghost.service"
journal | grep -q "\[service ghost.service\]: no such unit is loaded" || { show; fail "ghost.service was not reported"; }
grep -q 'memguardd_service_restarts_total{unit="leak-high.service"} 1' /run/memguard/metrics.prom ||
	{ cat /run/memguard/metrics.prom; fail "no restart of leak-high in the metrics"; }
grep -q 'memguardd_service_restart_failures_total{unit="leak-refuse.service"} 1' /run/memguard/metrics.prom ||
	{ cat /run/memguard/metrics.prom; fail "no failed restart of leak-refuse in the metrics"; }
grep -Eq '^  leak-refuse\.service .* 1 failed \(the last: left to the outsider rule\)' "$work/status" ||
	fail "--status does not say leak-refuse's restart failed"
grep -q 'memguardd_service_floor_bytes{unit="sawtooth.service"}' /run/memguard/metrics.prom ||
	{ cat /run/memguard/metrics.prom; fail "no floor of sawtooth in the metrics"; }

echo "the journal names each restart:"
journalctl -b --no-pager -o cat MESSAGE_ID=$msgid MEMGUARD_ACTION=restart | sed 's/^/    /'
for u in leak-high leak-max leak-free hog; do
	actions "$u" restart | grep -q "restarting $u.service" || fail "no restart of $u in the journal"
done
echo PASS
