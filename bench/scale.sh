#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# Runs inside the guest (bench/run.sh --scale boots it with tests/vm/vm.sh): memguardd's decision time
# against the number of guarded cgroups. For each N (ascending), the guest holds N cgroups
# memguard/run-scale/task-I, each with one sleeping process (bench/sleepers), and memguardd runs as a
# dry run (decides and logs, never kills) with available_min = 99%, so that memory is always short and
# it decides every poll (100 ms). Per N: the start-up (exec to its "watching ... N guarded cgroups" line,
# wall and CPU time, and the MemAvailable it took: its PSI triggers), then SECONDS of decisions: the
# times of its "decided: VERDICT in X ms over N guarded cgroups" lines (the first 3 skipped; the window
# grows until it holds 10 more), its CPU time, context switches, and Rss/Anonymous (smaps_rollup) at the end.
# With -S BYTES, each task cgroup carries the launcher's share xattr (trusted.memguard.share), as a
# launcher's run does; without, memguardd falls back to the memory.max of the cgroup and its parents
# for each (as for batch job cgroups added to the guard).
#   scale.sh [-b BUILD_DIR] [-B BIN_DIR] [-s SECONDS] [-S SHARE_BYTES] RUN_DIR N...
# One JSON line per N to RUN_DIR/results.jsonl; memguardd's logs in RUN_DIR/raw/scale-N/.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/daemons.sh"
build=$top/build-bench/build bin=$top/build-bench/bin seconds=20 skip=3 share=''
usage() {
	echo "usage: scale.sh [-b BUILD_DIR] [-B BIN_DIR] [-s SECONDS] [-S SHARE_BYTES] RUN_DIR N..." >&2
	exit 2
}
while getopts b:B:s:S: opt; do
	case $opt in
	b) build=$OPTARG ;;
	B) bin=$OPTARG ;;
	s) seconds=$OPTARG ;;
	S) share=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
(($# >= 2)) || usage
run_dir=$1
shift
mapfile -t counts < <(printf '%s\n' "$@" | sort -n -u)
results=$run_dir/results.jsonl
memguardd=$build/bin/memguardd
for f in "$memguardd" "$bin/sleepers"; do
	[[ -x $f ]] || { echo "scale.sh: $f is missing (bench/run.sh builds it)" >&2; exit 1; }
done
echo -1000 >/proc/self/oom_score_adj
mkdir -p /tmp/bench
conf=/tmp/bench/memguard.conf
# kill_outside off: the measure is the guard's own decision, not a walk of whatever else the guest runs.
MEMGUARD_BENCH_DAEMON_CONF=$'available_min = 99%\navailable_pressure = 99%\nkill_outside = no' \
	write_memguard_conf "$conf" /tmp/bench/kills.jsonl
tck=$(getconf CLK_TCK)
# Descriptors as systemd gives a service (DefaultLimitNOFILE=1024:524288; memguardd raises the soft
# limit to the hard one): memguardd holds one PSI trigger per guarded cgroup, and the guest's init
# leaves the kernel's hard limit of 4096, which 4096 cgroups exceed. NOFILE_HARD overrides it.
nofile_hard=${NOFILE_HARD:-524288}
ulimit -Hn "$nofile_hard"
ulimit -Sn 1024
cg=/sys/fs/cgroup
dir=$cg/memguard/run-scale

# The memory controller on the way down to the tasks.
echo +memory >"$cg/cgroup.subtree_control"
mkdir -p "$dir"
echo +memory >"$cg/memguard/cgroup.subtree_control"
echo +memory >"$dir/cgroup.subtree_control"

now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }
avail() { awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo; }
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
ctx() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }
rss() { awk '$1 == "Rss:" { r = $2 } $1 == "Anonymous:" { a = $2 } END { print r + 0, a + 0 }' "/proc/$1/smaps_rollup"; }
secs() { awk -v t="$1" -v h="$tck" 'BEGIN { printf "%.2f", t / h }'; }

have=0 mg=
cleanup() {
	[[ -n $mg ]] && kill -KILL "$mg" 2>/dev/null
	echo 1 >"$dir/cgroup.kill" 2>/dev/null || true
}
trap cleanup EXIT

for n in "${counts[@]}"; do
	raw=$run_dir/raw/scale-$n${share:+-share}
	mkdir -p "$raw"
	# The cgroups and their sleepers, added to those of the smaller N before.
	t=$(now_ms)
	before=$(avail)
	if ((n > have)); then
		seq "$((have + 1))" "$n" | sed "s|^|$dir/task-|" | xargs mkdir
		"$bin/sleepers" ${share:+-s "$share"} "$dir" "$((have + 1))" "$n" >/dev/null
	fi
	setup_ms=$(($(now_ms) - t))
	echo "scale: $n cgroups ($((n - have)) new) in $setup_ms ms, MemAvailable $before -> $(avail) KiB" >&2
	have=$n
	sync
	echo 3 >/proc/sys/vm/drop_caches
	sleep 2
	tasks_avail=$(avail)

	# Start-up: exec to the "watching" line.
	log=$raw/memguardd.log
	t=$(now_ms)
	(echo 0 >/proc/self/oom_score_adj && exec "$memguardd" -c "$conf" -n -v) >"$log" 2>&1 &
	mg=$!
	start_ms=null start_cpu=null
	for ((i = 0; i < 36000; i++)); do
		if grep -q 'watching .* guarded cgroups' "$log"; then
			start_ms=$(($(now_ms) - t))
			start_cpu=$(secs "$(ticks "$mg")")
			break
		fi
		kill -0 "$mg" 2>/dev/null || break
		sleep 0.05
	done
	if [[ $start_ms == null ]]; then
		echo "scale: memguardd did not start with $n cgroups (see $log)" >&2
		printf '{"kind":"scale","n":%d,"share_bytes":%s,"started":false}\n' "$n" "${share:-null}" >>"$results"
		kill -KILL "$mg" 2>/dev/null || true
		wait "$mg" 2>/dev/null || true
		mg=
		continue
	fi
	watching=$(grep -o -m 1 'watching .* guarded cgroups' "$log")
	started_avail=$(avail)
	psimon=$(pgrep -c -x psimon || true)

	# Decisions over the window.
	t0=$(ticks "$mg") v0=$(ctx "$mg" voluntary_ctxt_switches) w0=$(now_ms)
	l0=$(wc -l <"$log")
	# At least SECONDS, and at least 10 decisions after the skipped ones (a big guard under TCG decides
	# slowly), but at most 10 minutes, and no longer than a minute when it has not decided at all.
	sleep "$seconds"
	while :; do
		got=$(tail -n +"$((l0 + 1))" "$log" | grep -c 'decided: ' || true)
		((got < skip + 10 && $(now_ms) - w0 < 600000)) || break
		((got > 0 || $(now_ms) - w0 < 60000)) || break
		kill -0 "$mg" 2>/dev/null || break
		sleep 2
	done
	t1=$(ticks "$mg") v1=$(ctx "$mg" voluntary_ctxt_switches) w1=$(now_ms)
	read -r rss_kib anon_kib <<<"$(rss "$mg")"
	hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$mg/status")
	kill -TERM "$mg"
	wait "$mg" || true
	mg=
	# The window's decisions: lines after the start-up, less the first $skip.
	tail -n +"$((l0 + 1))" "$log" | grep -o 'decided: [a-z _-]* in [0-9.]* ms over [0-9]* guarded' >"$raw/decided.txt" || true
	stats=$(python3 - "$raw/decided.txt" "$skip" "$n" <<-'PY'
		import json, re, statistics, sys
		rows = [re.match(r"decided: (.+?) in ([0-9.]+) ms over ([0-9]+)", l) for l in open(sys.argv[1])]
		rows = [r for r in rows if r][int(sys.argv[2]):]
		ms = sorted(float(r.group(2)) for r in rows)
		over = sorted({int(r.group(3)) for r in rows})
		verdicts = {}
		for r in rows:
		    verdicts[r.group(1)] = verdicts.get(r.group(1), 0) + 1
		def q(p):
		    return ms[min(len(ms) - 1, int(p * len(ms)))] if ms else None
		print(json.dumps({"count": len(ms), "median_ms": statistics.median(ms) if ms else None, "p90_ms": q(0.9),
		                  "min_ms": ms[0] if ms else None, "max_ms": ms[-1] if ms else None,
		                  "guarded_seen": over, "verdicts": verdicts}, separators=(",", ":")))
	PY
	)
	printf '{"kind":"scale","n":%d,"share_bytes":%s,"started":true,"nofile_hard":%d,"watching":"%s","setup_ms":%d,"start_ms":%s,"start_cpu_s":%s,"start_avail_drop_kib":%d,"psimon_threads":%d,"window_s":%s,"cpu_s":%s,"voluntary_ctxt_switches":%d,"rss_kib":%d,"anon_kib":%d,"hwm_kib":%d,"mem_available_kib":%d,"decisions":%s,"kernel":"%s"}\n' \
		"$n" "${share:-null}" "$nofile_hard" "$watching" "$setup_ms" "$start_ms" "$start_cpu" "$((tasks_avail - started_avail))" "$psimon" \
		"$(awk -v a="$w0" -v b="$w1" 'BEGIN { printf "%.1f", (b - a) / 1000 }')" "$(secs $((t1 - t0)))" \
		$((v1 - v0)) "$rss_kib" "$anon_kib" "$hwm" "$tasks_avail" "$stats" "$(uname -r)" | tee -a "$results"
done
