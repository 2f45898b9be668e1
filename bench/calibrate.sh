#!/bin/bash
# Runs inside the guest (bench/run.sh --calibrate): how big PyPy's heap grows for tests/programs/churn.py
# under its default GC, and whether the same task fits its share under memguard's heap flag.
#   calibrate.sh OUT.jsonl BUILD_DIR SECONDS LIVE_MIB...
# For each LIVE_MIB: one churn.py alone with PyPy's defaults (peak = VmHWM), then one under
# memguard with the share of one of the lazygc scenario's 4 tasks (peak = the cgroup's memory.peak). One JSON line
# each. lazygc needs 4 x the default peak > MemTotal, and the memguard run to succeed.
set -euo pipefail

out=$1 build=$2 seconds=$3
shift 3
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
churn=$top/tests/programs/churn.py
tmp=$(mktemp -d /tmp/calibrate.XXXXXX)
echo -1000 >/proc/self/oom_score_adj
total_kib=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)

for live in "$@"; do
	sync
	echo 3 >/proc/sys/vm/drop_caches
	start=$EPOCHREALTIME
	(echo 0 >/proc/self/oom_score_adj && exec pypy3 "$churn" "$live" "$seconds" 1) >"$tmp/out" 2>&1 &
	pid=$!
	hwm=0
	while kill -0 "$pid" 2>/dev/null; do
		v=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
		[[ -n $v ]] && hwm=$v
		sleep 0.2
	done
	rc=0
	wait "$pid" || rc=$?
	secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	printf '{"kind":"calibrate","gc":"default","live_mib":%s,"seconds":%s,"status":%s,"peak_kib":%s,"mem_total_kib":%s,"wall_s":%s}\n' \
		"$live" "$seconds" "$rc" "$hwm" "$total_kib" "$secs" | tee -a "$out"

	sync
	echo 3 >/proc/sys/vm/drop_caches
	# One task with the share each of the lazygc scenario's 4 tasks gets.
	share=$("$build/bin/memguard" --strict -n 4 --dry-run --explain -- true 2>&1 |
		sed -n 's/.*share per task *\([^ ]*\).*/\1/p')
	start=$EPOCHREALTIME
	rc=0
	(echo 0 >/proc/self/oom_score_adj &&
		exec "$build/bin/memguard" --strict -n 1 --mem-per-task "$share" --report "$tmp/r.json" --explain -- \
			pypy3 "$churn" "$live" "$seconds" 1) >"$tmp/out" 2>&1 || rc=$?
	secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	flag=$(sed -n 's/.*heap flag *\(PYPY_GC_MAX=[^ ]*\).*/\1/p' "$tmp/out" | head -n 1)
	peak=$(grep -o '"peak_bytes":[0-9]*' "$tmp/r.json" 2>/dev/null | head -n 1 | cut -d: -f2 || true)
	printf '{"kind":"calibrate","gc":"memguard","share":"%s","flag":"%s","live_mib":%s,"seconds":%s,"status":%s,"peak_kib":%s,"mem_total_kib":%s,"wall_s":%s}\n' \
		"$share" "$flag" "$live" "$seconds" "$rc" "$((${peak:-0} / 1024))" "$total_kib" "$secs" | tee -a "$out"
	((rc == 0)) || sed 's/^/    | /' "$tmp/out" | tail -n 15
done
rm -rf "$tmp"
