#!/bin/bash
# The "Leaking service" study's guest side: one cell in a fresh systemd guest (bench/leak.sh boots it with
# tests/vm/vm.sh --systemd). A service of its own, leak.service (tests/programs/svcmem), holds 16 MiB for
# 20 s, then leaks at MemAvailable/150 s per second (it would take the node's available memory in 150 s),
# with no limit of its own; its unit has Restart=on-failure, as an administrator's would. What stops it:
#   memguardd  the packaged memguardd.service and a drop-in "[service leak]" with the defaults
#   systemd    MemoryMax= (what it holds at first plus MemAvailable above 5 % of MemTotal: the point
#              where memguardd's outsider rule would act), OOMPolicy=stop, Restart=on-failure; no daemon
#   earlyoom   the packaged earlyoom.service, its defaults (SIGTERM at 10 % MemAvailable, SIGKILL at 5 %)
#   kernel     nothing: the kernel's OOM killer
# Its users (bench/leakprobe.py) ask it for work every 200 ms; a heartbeat (bench/heartbeat.c) stands in for
# the node's daemons. The cell ends 20 s after the service answers again from a new process, 60 s after it
# stopped for good, or 360 s after the leak began.
#   leak-guest.sh VARIANT BUILD BIN OUT
# Into OUT: meta.json, probes.jsonl, heartbeat.json, journal.txt (leak, memguardd, earlyoom and systemd's
# word on them, monotonic time), kernel.txt (the kernel's log, for OOM kills), leak.service.
# bench/leak.py reads them.
set -euo pipefail

(($# == 4)) || { echo "usage: leak-guest.sh VARIANT BUILD BIN OUT" >&2; exit 2; }
variant=$1 build=$2 bin=$3 out=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
state=/run/leakbench
rm -rf "$state" "$out"
mkdir -p "$state" "$out"
# The driver must outlive whatever the leak does.
echo -1000 >/proc/self/oom_score_adj
kib() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
mono_ms() { python3 -c 'import time; print(round(time.monotonic() * 1000))'; }
say() { echo "leak-guest: $variant: $*" >&2; }

install -m 0755 "$bin/svcmem" /usr/local/bin/svcmem
case $variant in
memguardd)
	install -m 0755 "$build/bin/memguardd" /usr/sbin/memguardd
	cp "$top/packaging/systemd/memguardd.service" "$top/packaging/systemd/memguardd.socket" /etc/systemd/system/
	mkdir -p /etc/memguard/conf.d
	printf '[service leak]\n' >/etc/memguard/conf.d/leak.conf
	;;
systemd | earlyoom | kernel) ;;
*) echo "leak-guest: no variant $variant" >&2; exit 2 ;;
esac

sync
echo 3 >/proc/sys/vm/drop_caches
sleep 2
total=$(kib MemTotal) avail=$(kib MemAvailable)
rate=$((avail / 150)) start_mib=16 after=20
max_kib=$(((start_mib << 10) + avail - total / 20))
{
	echo "[Service]"
	echo "RuntimeDirectory=leak"
	echo "ExecStart=/usr/local/bin/svcmem leak $rate --start $start_mib --after $after --work 0 --socket /run/leak/leak.sock"
	echo "Restart=on-failure"
	[[ $variant != systemd ]] || printf 'MemoryMax=%sK\nOOMPolicy=stop\n' "$max_kib"
} >/etc/systemd/system/leak.service
cp /etc/systemd/system/leak.service "$out/leak.service"
systemctl daemon-reload
case $variant in
memguardd) systemctl start memguardd.socket memguardd.service ;;
earlyoom) systemctl start earlyoom.service ;;
esac
sleep 2

"$bin/heartbeat" "$state/heartbeat.json" &
heartbeat=$!
python3 "$here/leakprobe.py" "$state/probes.jsonl" /run/leak/leak.sock "$state/stop" &
probe=$!
started=$(mono_ms)
# The heartbeat stamps its worst wake-ups in wall-clock time: the two clocks at one moment.
clocks=$(python3 -c 'import time; print(round(time.monotonic() * 1000), round(time.time() * 1000))')
systemctl start leak.service
first=$(systemctl show -p MainPID --value leak.service)
say "leak.service $first leaks $rate KiB/s after ${after}s, MemAvailable $((avail >> 10)) MiB of $((total >> 10)) MiB"

# Until 20 s after a new process answers, 60 s after it stopped for good, or 360 s after the leak began.
deadline=$((started + (after + 360) * 1000)) again='' down=''
while (($(mono_ms) < deadline)); do
	sleep 2
	pid=$(timeout 20 systemctl show -p MainPID --value leak.service || echo "?")
	state_now=$(timeout 20 systemctl show -p ActiveState --value leak.service || echo "?")
	now=$(mono_ms)
	if [[ -z $again && $pid != "$first" && $pid != 0 && $pid != "?" ]] &&
		tail -n 3 "$state/probes.jsonl" | grep -q '"what": "ok"'; then
		again=$now
		say "a new process ($pid) answers"
	fi
	[[ -n $again ]] && ((now - again >= 20000)) && break
	if [[ $state_now == inactive || $state_now == failed ]]; then
		down=${down:-$now}
		((now - down >= 60000)) && { say "stopped for good"; break; }
	else
		down=''
	fi
done
ended=$(mono_ms)

touch "$state/stop"
wait "$probe" || true
kill -TERM "$heartbeat" 2>/dev/null || true
wait "$heartbeat" || true
systemctl stop leak.service earlyoom.service memguardd.service memguardd.socket 2>/dev/null || true
cp "$state/probes.jsonl" "$state/heartbeat.json" "$out/"
journalctl -b --no-pager -o short-monotonic -u leak -u memguardd -u earlyoom >"$out/journal.txt"
journalctl -b --no-pager -o short-monotonic -k >"$out/kernel.txt"
python3 - "$out/meta.json" <<-PY
	import json, sys
	json.dump({"variant": "$variant", "rate_kib_s": $rate, "start_mib": $start_mib, "after_s": $after,
	           "mem_total_kib": $total, "mem_available_kib": $avail,
	           "memory_max_kib": $([[ $variant == systemd ]] && echo "$max_kib" || echo None),
	           "started_ms": $started, "ended_ms": $ended, "clocks_ms": [${clocks// /, }],
	           "kernel": "$(uname -r)"}, open(sys.argv[1], "w"))
PY
say "done in $(((ended - started) / 1000)) s"
