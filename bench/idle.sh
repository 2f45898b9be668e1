#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# Runs inside the guest (bench/run.sh boots it with tests/vm/vm.sh): what the node daemons cost on an
# idle node. memguardd, earlyoom and nohang run side by side, each started as in the benchmark's cells
# (bench/daemons.sh), next to bench/sdfloor (an empty sd-event loop, locked as memguardd locks itself:
# the floor under any daemon built on libsystemd). After 30 s of warm-up, each one's CPU time (utime +
# stime from /proc/PID/stat), context switches (voluntary_ctxt_switches, nonvoluntary_ctxt_switches from
# /proc/PID/status) and resident memory (sampled every 10 s) are counted over the same MINUTES; at the
# end, the memory that is the daemon's own: USS (Private_Clean + Private_Dirty) and Pss.
# Resident memory is Rss and Anonymous from /proc/PID/smaps_rollup, which walks the page tables. VmRSS
# is kept for comparison with earlier runs, but Linux 6.1 counts it per thread and folds the counts in
# only every 64 page faults, so an idle daemon's VmRSS can stay hundreds of KiB below its real RSS.
# After the window, memguardd's system calls for a minute (strace, when the host has it): where its
# wake-ups come from. The daemons' logs and that trace go to RUN_DIR/raw/idle-MIB/.
#   idle.sh [-b BUILD_DIR] [-g GUEST_MIB] RUN_DIR MINUTES
# One JSON line per daemon to RUN_DIR/results.jsonl, with the guest's size (-g, as booted; and MemTotal).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/daemons.sh"
build=$top/build-bench/build
guest_mib=0
while getopts b:g: opt; do
	case $opt in
	b) build=$OPTARG ;;
	g) guest_mib=$OPTARG ;;
	*) echo "usage: idle.sh [-b BUILD_DIR] [-g GUEST_MIB] RUN_DIR MINUTES" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
(($# == 2)) || { echo "usage: idle.sh [-b BUILD_DIR] [-g GUEST_MIB] RUN_DIR MINUTES" >&2; exit 2; }
run_dir=$1 minutes=$2
results=$run_dir/results.jsonl
mem_total=$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)
((guest_mib > 0)) || guest_mib=$((mem_total / 1024))
raw=$run_dir/raw/idle-$guest_mib
mkdir -p "$raw"
echo -1000 >/proc/self/oom_score_adj
mkdir -p /tmp/bench
write_memguard_conf /tmp/bench/memguard.conf /tmp/bench/kills.jsonl
tck=$(getconf CLK_TCK)

declare -A pid
names=(memguardd earlyoom nohang sdfloor)
sdfloor=$build/../bin/sdfloor
[[ -x $sdfloor ]] || { echo "idle.sh: $sdfloor is missing (bench/run.sh builds it)" >&2; exit 1; }
(echo 0 >/proc/self/oom_score_adj && exec "$sdfloor") >/tmp/bench/sdfloor.log 2>&1 &
pid[sdfloor]=$!
for name in "${names[@]:0:3}"; do
	variant=$name
	[[ $name == memguardd ]] && variant=elastic
	daemon_command "$variant" "$build/bin/memguardd" /tmp/bench/memguard.conf
	log=/tmp/bench/$name.log
	(echo 0 >/proc/self/oom_score_adj && exec "${DAEMON_CMD[@]}") >"$log" 2>&1 &
	pid[$name]=$!
	for ((i = 0; i < 240; i++)); do
		daemon_ready "$variant" "$log" "${pid[$name]}" && break
		sleep 0.25
	done
done

# ticks PID: utime + stime; ctx PID FIELD; rss PID: Rss Anonymous (KiB, smaps_rollup) and VmRSS;
# own PID: USS Pss (KiB), "null null" when smaps_rollup cannot be read.
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
ctx() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }
rss() {
	awk '$1 == "Rss:" { r = $2 } $1 == "Anonymous:" { a = $2 } $1 == "VmRSS:" { v = $2 }
		END { print r + 0, a + 0, v + 0 }' "/proc/$1/smaps_rollup" "/proc/$1/status"
}
own() {
	awk '$1 == "Private_Clean:" || $1 == "Private_Dirty:" { u += $2 } $1 == "Pss:" { p = $2 }
		END { if (p == "") print "null null"; else print u + 0, p }' "/proc/$1/smaps_rollup" 2>/dev/null ||
		echo null null
}

sleep 30
declare -A t0 v0 n0 rss_sum rss_max anon_sum vmrss_sum
for name in "${names[@]}"; do
	p=${pid[$name]}
	t0[$name]=$(ticks "$p")
	v0[$name]=$(ctx "$p" voluntary_ctxt_switches)
	n0[$name]=$(ctx "$p" nonvoluntary_ctxt_switches)
	rss_sum[$name]=0
	rss_max[$name]=0
	anon_sum[$name]=0
	vmrss_sum[$name]=0
done
start=$EPOCHREALTIME
samples=0
for ((s = 0; s < minutes * 6; s++)); do
	sleep 10
	samples=$((samples + 1))
	for name in "${names[@]}"; do
		read -r r a v <<<"$(rss "${pid[$name]}" 2>/dev/null || echo 0 0 0)"
		rss_sum[$name]=$((rss_sum[$name] + r))
		anon_sum[$name]=$((anon_sum[$name] + a))
		vmrss_sum[$name]=$((vmrss_sum[$name] + v))
		((r > rss_max[$name])) && rss_max[$name]=$r
	done
done
wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
for name in "${names[@]}"; do
	p=${pid[$name]}
	if ! kill -0 "$p" 2>/dev/null; then
		printf '{"kind":"idle","guest_mib":%d,"daemon":"%s","died":true}\n' "$guest_mib" "$name" >>"$results"
		continue
	fi
	t=$(ticks "$p")
	read -r uss pss <<<"$(own "$p")"
	printf '{"kind":"idle","guest_mib":%d,"mem_total_kib":%d,"daemon":"%s","minutes":%d,"wall_s":%s,"cpu_s":%s,"voluntary_ctxt_switches":%d,"nonvoluntary_ctxt_switches":%d,"rss_avg_kib":%d,"rss_max_kib":%d,"hwm_kib":%d,"rss_anon_avg_kib":%d,"vmrss_avg_kib":%d,"rss_source":"smaps_rollup","uss_kib":%s,"pss_kib":%s,"kernel":"%s"}\n' \
		"$guest_mib" "$mem_total" "$name" "$minutes" "$wall" "$(awk -v a="${t0[$name]}" -v b="$t" -v h="$tck" 'BEGIN { printf "%.2f", (b - a) / h }')" \
		"$(($(ctx "$p" voluntary_ctxt_switches) - v0[$name]))" "$(($(ctx "$p" nonvoluntary_ctxt_switches) - n0[$name]))" \
		"$((rss_sum[$name] / (samples ? samples : 1)))" "${rss_max[$name]}" \
		"$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$p/status")" "$((anon_sum[$name] / (samples ? samples : 1)))" "$((vmrss_sum[$name] / (samples ? samples : 1)))" \
		"$uss" "$pss" "$(uname -r)" | tee -a "$results"
done
# Where memguardd's wake-ups come from: every system call for a minute (not counted above).
if command -v strace >/dev/null && kill -0 "${pid[memguardd]}" 2>/dev/null; then
	timeout -s INT 60 strace -f -tt -p "${pid[memguardd]}" -o "$raw/memguardd.strace" 2>/dev/null || true
fi
for name in "${names[@]}"; do
	kill -TERM "${pid[$name]}" 2>/dev/null || true
done
wait || true
cp /tmp/bench/*.log "$raw/" 2>/dev/null || true
