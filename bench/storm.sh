#!/bin/bash
# The cost of an event storm (docs/security.md, "Event storms"): memguardd's pressure path and its
# placement service while an ordinary user makes and removes cgroups in their own placed run as fast as
# they can, against the same guest without the storm. Each repetition boots a fresh 1 GiB swapless
# guest (tests/vm/vm.sh) and measures both phases there, in alternating order:
#   decisions  memguardd in a dry run with available_min = 99%: memory is always short, so it decides
#              every poll (100 ms) and each verdict is the kill it would carry out. The gap between two
#              decisions (how late a kill can come) and what one took, from its "decided:" lines, stamped
#              as they are written.
#   placement  the wall time of "memguard -n 1 -- true" as a second user, five times: the socket served.
#   kill       a real runaway (memguardd not in a dry run) in a placed run, beside three steady tasks,
#              that grows at 50 MiB/s: its life from start to SIGKILL (the report's seconds), and
#              whether memguardd killed it.
# The storm: 3,000 empty cgroups in the user's run, then mkdir and rmdir of one more without pause.
#   bench/storm.sh [--reps N] [--out DIR]      (host: builds, boots the guests, prints the summary)
# Raw logs and one JSON line per phase and repetition in DIR (default build-bench/storm/).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
top=$(cd "$here/.." && pwd -P)

if [[ ${1:-} != --guest ]]; then
	reps=5 out=$top/build-bench/storm
	while (($#)); do
		case $1 in
		--reps) reps=$2; shift 2 ;;
		--out) out=$2; shift 2 ;;
		*) echo "usage: bench/storm.sh [--reps N] [--out DIR]" >&2; exit 2 ;;
		esac
	done
	build=$top/build-bench/build
	mkdir -p "$out"
	if ! cmake -S "$top" -B "$build" -DMEMGUARD_TESTS=ON >"$out/cmake.log" 2>&1 ||
		! cmake --build "$build" -j2 >>"$out/cmake.log" 2>&1; then
		tail -n 40 "$out/cmake.log" >&2
		exit 1
	fi
	rm -f "$out/results.jsonl"
	for ((rep = 1; rep <= reps; rep++)); do
		order=(calm storm)
		((rep % 2)) || order=(storm calm)
		echo "storm: repetition $rep/$reps (${order[*]})" >&2
		"$top/tests/vm/vm.sh" --mem 1024 --timeout 900 -- "$here/storm.sh" --guest "$build" "$out" "$rep" "${order[@]}" \
			>"$out/guest-$rep.log" 2>&1 || { tail -n 30 "$out/guest-$rep.log" >&2; exit 1; }
	done
	python3 - "$out/results.jsonl" <<-'PY'
		import json, statistics, sys
		rows = [json.loads(l) for l in open(sys.argv[1])]
		def show(key, unit):
		    for phase in ("calm", "storm"):
		        v = sorted(r[key] for r in rows if r["phase"] == phase and r[key] is not None)
		        if v:
		            print(f"  {phase:5}  median {statistics.median(v):8.1f} {unit}  range {v[0]:.1f}-{v[-1]:.1f}  (n={len(v)})")
		print("gap between decisions, median of each run:"); show("gap_median_ms", "ms")
		print("gap between decisions, worst of each run:"); show("gap_max_ms", "ms")
		print("one decision, median of each run:"); show("decide_median_ms", "ms")
		print("placement, median of five:"); show("place_median_ms", "ms")
		print("runaway's life until killed:"); show("kill_life_ms", "ms")
		print("rescans per second:"); show("rescans_per_s", "/s")
		print("changes per second (the storm's rate):"); show("changes_per_s", "/s")
	PY
	exit 0
fi

# --- in the guest: storm.sh --guest BUILD OUT REP PHASE... ---
build=$2 out=$3 rep=$4
shift 4
memguardd=$build/bin/memguardd memguard=$build/bin/memguard memhog=$build/tests/programs/memhog
cg=/sys/fs/cgroup
work=$(mktemp -d /tmp/storm.XXXXXX)
chmod 755 "$work"
mkdir "$work/out"
raw=$out/raw-$rep
mkdir -p "$raw"
echo "+memory +pids" >"$cg/cgroup.subtree_control"
for u in stormer placer; do id "$u" >/dev/null 2>&1 || useradd -M -s /bin/sh "$u"; done
chmod 1777 "$work/out" # the stormer's files, and the placer's report
cp "$memhog" "$work/memhog"
now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }
job() { mkdir -p "$cg/$1/task"; echo "+memory +pids" >"$cg/$1/cgroup.subtree_control"; }
# as USER JOB CMD...: CMD as USER from JOB/task, as a job script runs.
as() {
	local u=$1 j=$2
	shift 2
	sh -c 'echo $$ >"$0/cgroup.procs" && u=$1 && shift && exec setpriv --reuid="$u" --regid="$u" --init-groups -- env -u MEMGUARD_PLACE_SOCKET "$@"' \
		"$cg/$j/task" "$u" "$@"
}
# The storm itself, copied where the stormer (another uid) can read it.
install -m 644 "$top/tests/programs/cgstorm.py" "$work/storm.py"
# Stamps each line of memguardd's log with the time it was read (ms).
cat >"$work/stamp.py" <<'PY'
import sys, time
for line in sys.stdin:
    sys.stdout.write(f"{time.monotonic() * 1000:.1f} {line}")
    sys.stdout.flush()
PY
chmod 644 "$work"/*.py

# daemon DRY LOG: memguardd with its placement service, its log stamped into LOG.
daemon() {
	mkdir -p /run/memguard
	rm -f /run/memguard/memguardd.pid
	{
		echo "[daemon]"
		echo "kill_log = $work/kills.jsonl"
		echo "metrics_file = $work/metrics.prom"
		echo "metrics_interval = 1s"
		if [[ $1 == yes ]]; then printf 'dry_run = yes\navailable_min = 99%%\navailable_pressure = 99%%\nkill_outside = no\n'; fi
	} >"$work/memguard.conf"
	# As the unit runs it: SCHED_FIFO 1.
	(chrt -f 1 "$memguardd" -v -c "$work/memguard.conf" 2>&1 | python3 "$work/stamp.py" >"$2") &
	for _ in $(seq 200); do [[ -S /run/memguard/place.sock ]] && grep -q watching "$2" && return 0; sleep 0.05; done
	echo "storm: memguardd did not start" >&2
	cat "$2" >&2
	exit 1
}
undaemon() {
	pkill -TERM -x memguardd || true
	for _ in $(seq 100); do pgrep -x memguardd >/dev/null || return 0; sleep 0.05; done
	pkill -KILL -x memguardd || true
}
metric() { awk -v k="$1" '$1 == k { print $2 }' "$work/metrics.prom" 2>/dev/null; }

for phase in "$@"; do
	echo "storm: $phase" >&2
	log=$raw/$phase-decisions.log
	job stormjob
	job placejob
	stormer=
	if [[ $phase == storm ]]; then
		rm -f "$work/out/ops" "$work/out/stop"
		daemon no "$raw/$phase-setup.log"
		as stormer stormjob "$memguard" -n 1 -- python3 "$work/storm.py" "$work/out/ops" "$work/out/stop" 2>"$raw/stormer.err" &
		stormer=$!
		for _ in $(seq 1200); do [[ -s $work/out/ops ]] && break; sleep 0.1; done
		[[ -s $work/out/ops ]] || { echo "storm: the storm did not start" >&2; cat "$raw/stormer.err" >&2; exit 1; }
		undaemon # the run stays: a restarted memguardd adopts it
	fi

	# Decisions, dry run, 20 s.
	daemon yes "$log"
	ops0=$(cat "$work/out/ops" 2>/dev/null || echo 0)
	sleep 3
	r0=$(metric memguardd_guard_rescans_total) t0=$(now_ms)
	from=$(wc -l <"$log")
	sleep 20
	r1=$(metric memguardd_guard_rescans_total) t1=$(now_ms)
	ops1=$(cat "$work/out/ops" 2>/dev/null || echo 0)
	tail -n +"$((from + 1))" "$log" | grep 'decided: ' >"$raw/$phase-decided.txt" || true
	undaemon

	# Placement and a real kill, memguardd not in a dry run.
	rm -f "$work/kills.jsonl"
	daemon no "$raw/$phase-kill.log"
	place=()
	for _ in 1 2 3 4 5; do
		t=$(now_ms)
		as placer placejob "$memguard" -n 1 --require-cgroups -- true 2>>"$raw/$phase-place.err" ||
			{ echo "storm: placement failed" >&2; cat "$raw/$phase-place.err" >&2; exit 1; }
		place+=($(($(now_ms) - t)))
	done
	t=$(now_ms)
	# The runaway is task 0 beside three steady ones: past its share, it is memguardd's to stop.
	# shellcheck disable=SC2016 # expanded by the task's own shell
	as placer placejob "$memguard" -n 4 --report "$work/out/runaway.json" -- sh -c \
		'if [ "$MEMGUARD_TASK" = 0 ]; then exec "$0" -d 20 inf; else exec "$0" -H 15000 60; fi' "$work/memhog" \
		2>"$raw/$phase-runaway.err" || true
	# The runaway's own life, start to SIGKILL, from the run's report.
	life=$(python3 -c 'import json, sys; print(round(json.load(open(sys.argv[1]))["tasks"][0]["seconds"] * 1000))' \
		"$work/out/runaway.json")
	cp "$work/out/runaway.json" "$raw/$phase-runaway.json"
	# Whoever killed it: memguardd (its kill log), or the kernel at the run's limit.
	killed=$(grep -c . "$work/kills.jsonl" 2>/dev/null || true)
	cp "$work/kills.jsonl" "$raw/$phase-kills.jsonl" 2>/dev/null || true
	undaemon

	if [[ -n $stormer ]]; then
		touch "$work/out/stop"
		wait "$stormer" || true
	fi
	python3 - "$raw/$phase-decided.txt" "$phase" "$rep" "$r0" "$r1" "$t0" "$t1" "$ops0" "$ops1" "$life" "$killed" "${place[@]}" >>"$out/results.jsonl" <<-'PY'
		import json, re, statistics, sys
		f, phase, rep = sys.argv[1], sys.argv[2], int(sys.argv[3])
		r0, r1, t0, t1, ops0, ops1, life, killed = (float(x or 0) for x in sys.argv[4:12])
		place = [float(x) for x in sys.argv[12:]]
		stamps, took = [], []
		for line in open(f):
		    m = re.match(r"([0-9.]+) .*decided: .* in ([0-9.]+) ms", line)
		    if m:
		        stamps.append(float(m.group(1)))
		        took.append(float(m.group(2)))
		gaps = [b - a for a, b in zip(stamps, stamps[1:])]
		secs = (t1 - t0) / 1000
		print(json.dumps({"phase": phase, "rep": rep, "decisions": len(took),
		                  "gap_median_ms": statistics.median(gaps) if gaps else None,
		                  "gap_max_ms": max(gaps) if gaps else None,
		                  "decide_median_ms": statistics.median(took) if took else None,
		                  "place_median_ms": statistics.median(place) if place else None,
		                  "kill_life_ms": life, "killed_by_memguardd": killed > 0,
		                  "rescans_per_s": (r1 - r0) / secs if secs > 0 else None,
		                  "changes_per_s": (ops1 - ops0) / 23 if phase == "storm" else 0}))
	PY
	for j in stormjob placejob; do find "$cg/$j" -depth -type d -exec rmdir {} + 2>/dev/null || true; done
done
rm -rf "$work"
