#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# The sweep's guest side (bench/sweep.sh boots the guest with tests/vm/vm.sh): one task list run to the end
# by each variant in turn, in the order given, in this one guest.
#   sweep-guest.sh BUILD BIN OUT REP DEADLINE VARIANT...
# Between variants the guest is cleaned as bench/guest.sh does between cells (leftovers killed, caches
# dropped, memory pressure settled). Per variant: the heartbeat (bench/heartbeat.c) and the sampler
# (bench/sampler.c) run beside the launcher; every attempt of every task appends its start and its end
# (or SIGTERM) to an attempt log (bench/worker.c, BENCH_ATTEMPT_LOG), whoever started it. Everything goes
# to OUT/raw-REP/VARIANT/: meta.json (times, status, shares), attempts.log, the launcher's output and
# joblog, dmesg (the kernel's OOM kills), heartbeat.json, sampler.json. bench/sweep.py reads them.
set -euo pipefail

(($# >= 6)) || { echo "usage: sweep-guest.sh BUILD BIN OUT REP DEADLINE VARIANT..." >&2; exit 2; }
build=$1 bin=$2 out=$3 rep=$4 deadline=$5
shift 5
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=daemons.sh
. "$here/daemons.sh"
memguard=$build/bin/memguard
worker=$bin/worker
tasks=$out/tasks.txt
n=4
state=/tmp/sweep
rm -rf "$state"
mkdir -p "$state"
# The driver must survive whatever the tasks do; everything it starts gets the default score back.
echo -1000 >/proc/self/oom_score_adj
write_memguard_conf "$state/memguard.conf" "$state/kills.jsonl"
cp "$tasks" "$state/tasks.txt"

now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }
kib() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }

# The pids of processes whose environment holds BENCH_CELL=$1.
tagged_pids() {
	local f
	for f in $(grep -lzx -- "BENCH_CELL=$1" /proc/[0-9]*/environ 2>/dev/null || true); do
		f=${f#/proc/}
		echo "${f%/environ}"
	done
}

clean_guest() {
	local d i some
	for d in /sys/fs/cgroup/memguard/run-*/task-* /sys/fs/cgroup/memguard/run-*; do
		[[ ! -d $d ]] || rmdir "$d" 2>/dev/null || true
	done
	sync
	echo 3 >/proc/sys/vm/drop_caches
	# Memory pressure of the previous variant must not leak into the next (as bench/guest.sh's settle).
	for ((i = 0; i < 30; i++)); do
		some=$(awk '/^some/ { sub("avg10=", "", $2); print $2 }' /proc/pressure/memory)
		awk -v s="$some" 'BEGIN { exit !(s < 1.0) }' && break
		sleep 0.5
	done
	sleep 1
}

run_variant() {
	local v=$1 id=sweep-$1 raw=$out/raw-$rep/$1 dir=$state/$1
	rm -rf "$raw" "$dir"
	mkdir -p "$raw" "$dir"
	clean_guest
	# The share as memguard computes it (docs/launcher.md, "The budget"): the smaller of MemTotal less the
	# 5 % reserve and Shmem, and MemAvailable less the reserve, over N. It defines "innocent" for every
	# variant, and GNU parallel's --memfree gets it: start a task only when a share is free.
	local total avail shmem usable share_kib memfree_mib
	total=$(kib MemTotal) avail=$(kib MemAvailable) shmem=$(kib Shmem)
	usable=$((total * 95 / 100 - shmem))
	((avail - total * 5 / 100 >= usable)) || usable=$((avail - total * 5 / 100))
	share_kib=$((usable / n))
	memfree_mib=$((share_kib / 1024))

	local cmd=()
	case $v in
	memguard)
		# shellcheck disable=SC2016 # $0 and $1 are the task's shell's; $1 (the line) splits into words
		cmd=("$memguard" --strict -n "$n" --retries 2 --config "$state/memguard.conf" --tasks "$state/tasks.txt"
			--joblog "$dir/joblog" --report "$dir/report.json" -- sh -c 'exec "$0" $1' "$worker" '{}')
		;;
	parallel)
		cmd=(parallel --will-cite -j "$n" --retries 3 --joblog "$dir/joblog" --colsep ' ' -a "$state/tasks.txt"
			"$worker" '{1}' '{2}' '{3}')
		;;
	parallel-memfree)
		cmd=(parallel --will-cite -j "$n" --memfree "${memfree_mib}M" --retries 3 --joblog "$dir/joblog"
			--colsep ' ' -a "$state/tasks.txt" "$worker" '{1}' '{2}' '{3}')
		;;
	xargs)
		cmd=(xargs -P "$n" -L 1 -a "$state/tasks.txt" "$worker")
		;;
	*) echo "sweep: no variant $v" >&2; return 1 ;;
	esac
	printf '%q ' "${cmd[@]}" >"$raw/command"
	echo >>"$raw/command"

	dmesg -C
	local avail_start
	avail_start=$(kib MemAvailable)
	"$bin/sampler" "$id" 40 "$share_kib" "$raw/sampler.json" 100 &
	local sampler=$!
	(echo 0 >/proc/self/oom_score_adj && exec "$bin/heartbeat" "$raw/heartbeat.json") &
	local heartbeat=$!
	sleep 1

	local t0 t1 t2 lstatus=0 deadline_hit=false
	t0=$(now_ms)
	(echo 0 >/proc/self/oom_score_adj && cd "$dir" &&
		exec env BENCH_CELL="$id" BENCH_ATTEMPT_LOG="$dir/attempts.log" "${cmd[@]}") \
		</dev/null >"$dir/launcher.out" 2>"$dir/launcher.err" &
	local lpid=$!
	while kill -0 "$lpid" 2>/dev/null; do
		if (($(now_ms) - t0 > deadline * 1000)); then
			deadline_hit=true
			break
		fi
		sleep 0.2
	done
	if $deadline_hit; then
		kill -TERM "$lpid" 2>/dev/null || true
		sleep 5
		kill -KILL "$lpid" 2>/dev/null || true
	fi
	wait "$lpid" || lstatus=$?
	t1=$(now_ms)
	# xargs stops at a task killed by a signal and leaves the others running: they are waited for too.
	local left orphans=false
	while left=$(tagged_pids "$id") && [[ -n $left ]]; do
		if (($(now_ms) - t0 > deadline * 1000)); then
			deadline_hit=true
			# shellcheck disable=SC2086 # pids
			kill -KILL $left 2>/dev/null || true
			break
		fi
		orphans=true
		sleep 0.2
	done
	t2=$(now_ms)
	sleep 1 # the sampler sees the end
	kill -TERM "$heartbeat" "$sampler" 2>/dev/null || true
	wait "$heartbeat" || true
	wait "$sampler" || true

	cp -a "$dir/." "$raw/"
	dmesg >"$raw/dmesg"
	printf '{"variant":"%s","rep":%d,"n":%d,"launch_ms":%d,"launcher_end_ms":%d,"all_end_ms":%d,"orphans":%s,"launcher_status":%d,"deadline_s":%d,"deadline_hit":%s,"share_kib":%d,"memfree_mib":%d,"mem_total_kib":%d,"mem_available_start_kib":%d,"kernel":"%s","parallel":"%s","xargs":"%s"}\n' \
		"$v" "$rep" "$n" "$t0" "$t1" "$t2" "$orphans" "$lstatus" "$deadline" "$deadline_hit" "$share_kib" "$memfree_mib" \
		"$total" "$avail_start" "$(uname -r)" "$(parallel --version 2>/dev/null | head -n 1)" \
		"$(xargs --version | head -n 1)" >"$raw/meta.json"
	echo "sweep: rep $rep $v: $(((t1 - t0) / 1000)) s, status $lstatus$($deadline_hit && echo ', deadline hit')" >&2
}

for v in "$@"; do
	run_variant "$v"
done
rm -rf "$state"
