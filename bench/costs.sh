#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# Runs inside a systemd guest (bench/run.sh boots it with tests/vm/vm.sh --systemd): what it costs to
# start N trivial tasks (/bin/true) each way, N = 16, 256, 1024.
#   costs.sh [-b BUILD_DIR] [-B BENCH_BIN_DIR] [-r REPS] [-s SYSTEMD_REPEAT_MAX] RUN_DIR N...
#   fork+exec, parallel    bench/spawn.c: N fork()+execv() at once, then wait for all
#   fork+exec, sequential  bench/spawn.c -s: one after another
#   memguard               memguard --strict -q -n N -- /bin/true: all N at once, each in its own cgroup
#                          with memory.max, swap.max and oom.group set, reaped, reported, removed; started
#                          by bench/spawn.c, which also reports the launcher's peak RSS (ru_maxrss)
#   systemd-run --scope    systemd-run --scope -p MemoryMax=(MemTotal-5%)/N -p MemorySwapMax=0 /bin/true,
#                          one after another (each client is a process of its own that talks to PID 1
#                          over D-Bus; a thousand at once do not fit in the 1 GiB guest). It takes about
#                          a third of a second a task under TCG, so it is repeated only for N up to
#                          SYSTEMD_REPEAT_MAX (default 16) and measured once above that.
# One JSON line per measurement to RUN_DIR/results.jsonl.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/daemons.sh"
build=$top/build-bench/build
bin=$top/build-bench/bin
reps=3
systemd_repeat_max=16
usage() {
	echo "usage: costs.sh [-b BUILD_DIR] [-B BENCH_BIN_DIR] [-r REPS] [-s SYSTEMD_REPEAT_MAX] RUN_DIR N..." >&2
	exit 2
}
while getopts b:B:r:s: opt; do
	case $opt in
	b) build=$OPTARG ;;
	B) bin=$OPTARG ;;
	r) reps=$OPTARG ;;
	s) systemd_repeat_max=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
(($# >= 2)) || usage
run_dir=$1
shift
results=$run_dir/results.jsonl
echo -1000 >/proc/self/oom_score_adj
conf=/tmp/bench-costs.conf
write_memguard_conf "$conf" /tmp/bench-costs-kills.jsonl
total_kib=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)

now() { echo "$EPOCHREALTIME"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", b - a }'; }

record() { # METHOD N REP SECONDS MAX_RSS_KIB STATUS (MAX_RSS_KIB: null when not measured)
	printf '{"kind":"cost","method":"%s","n":%d,"rep":%d,"seconds":%s,"max_rss_kib":%s,"status":%d,"kernel":"%s","systemd":"%s"}\n' \
		"$1" "$2" "$3" "$4" "$5" "$6" "$(uname -r)" "$(systemctl --version | awk 'NR == 1 { print $2 }')" >>"$results"
	printf 'costs: %-22s N=%-5d rep %d  %8.3f s  %7.2f ms/task  peak RSS %s KiB  (status %d)\n' "$1" "$2" "$3" \
		"$4" "$(awk -v s="$4" -v n="$2" 'BEGIN { print s * 1000 / n }')" "$5" "$6"
}

# Each prints "SECONDS MAX_RSS_KIB".
forkexec_par() { "$bin/spawn" "$1" /bin/true; }
forkexec_seq() { "$bin/spawn" -s "$1" /bin/true; }

run_memguard() {
	local rc=0
	"$bin/spawn" -o /tmp/mg.out 1 "$build/bin/memguard" --strict -q -n "$1" --config "$conf" -- /bin/true || rc=$?
	((rc == 0)) || tail -n 5 /tmp/mg.out >&2
	return "$rc"
}

run_systemd() {
	local a b rc=0 i max=$((total_kib * 1024 * 95 / 100 / $1))
	a=$(now)
	for ((i = 0; i < $1; i++)); do
		systemd-run --scope --quiet -p MemoryMax="$max" -p MemorySwapMax=0 /bin/true || rc=$?
	done
	b=$(now)
	echo "$(secs "$a" "$b") null"
	return "$rc"
}

# Warm the page cache and systemd up once, untimed.
forkexec_par 4 >/dev/null
run_memguard 4 >/dev/null || true
run_systemd 4 >/dev/null || true

for ((rep = 1; rep <= reps; rep++)); do
	for n in "$@"; do
		for m in forkexec_par forkexec_seq run_memguard run_systemd; do
			if [[ $m == run_systemd ]] && ((rep > 1 && n > systemd_repeat_max)); then
				continue
			fi
			rc=0 out=
			out=$($m "$n") || rc=$?
			read -r t kib <<<"$out" || true
			case $m in
			forkexec_par) name="fork+exec parallel" ;;
			forkexec_seq) name="fork+exec sequential" ;;
			run_memguard) name=memguard ;;
			run_systemd) name="systemd-run --scope" ;;
			esac
			record "$name" "$n" "$rep" "${t:-0}" "${kib:-null}" "$rc"
		done
	done
done
