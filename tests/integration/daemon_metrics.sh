#!/usr/bin/env bash
# Metrics for node_exporter's textfile collector:
#  1. memguardd with metrics_file writes it at start; it passes promtool check
#     metrics and counts no kill yet.
#  2. A runaway is killed: the file is written at once, still passes promtool,
#     counts one kill under reason "available_min" (the only rule that can
#     hold: available_pressure = available_min, no lead time) and a
#     MemAvailable above 0.
#  3. memguard --metrics FILE of that run passes promtool and names each
#     task's outcome; an unwritable --metrics is one line and 125.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon_lib.sh"

command -v promtool >/dev/null || fail "promtool is not installed (Debian package prometheus; scripts/deps.sh test)"

prom=$work/memguard.prom
daemon_pid=
trap 'stop_daemon; rm -rf "$work"' EXIT

# promtool_ok FILE: promtool check metrics accepts FILE and says nothing.
promtool_ok() {
	local said status=0
	said=$(promtool check metrics <"$1" 2>&1) || status=$?
	[ "$status" = 0 ] && [ -z "$said" ] || { cat "$1"; fail "promtool check metrics $1: exit $status: $said"; }
}

# sample FILE SERIES: the value of the sample SERIES (name and labels, as written) in FILE.
sample() {
	awk -v s="$2" 'substr($0, 1, length(s) + 1) == s " " { print $NF; found = 1 } END { exit !found }' "$1" ||
		fail "no sample $2 in $1"
}

# 1. At start.
start_daemon "throttle = no
available_min = 15%
available_pressure = 15%
lead_time = 0
metrics_file = $prom
metrics_interval = 1s"
for _ in $(seq 100); do
	[ -s "$prom" ] && break
	sleep 0.1
done
[ -s "$prom" ] || { cat "$work/daemon.log"; fail "memguardd wrote no $prom"; }
promtool_ok "$prom"
assert_eq "$(stat -c %a "$prom")" 644 "mode of the metrics file"
assert_eq "$(sample "$prom" 'memguardd_kills_total{reason="available_min"}')" 0 "kills at start"
assert_eq "$(sample "$prom" memguardd_degraded)" 0 "degraded at start"
assert_contains "$prom" '^memguardd_build_info{version="' "build info"
sed 's/^/    /' "$prom" | grep -v '^    #'

# 2. and 3. A run of four, task 3 a runaway that memguardd kills.
status=0
"$memguard" --metrics "$work/run.prom" --report "$work/r.json" -n 4 --mem 860M -- sh -c \
	'if [ "$MEMGUARD_TASK" = 3 ]; then exec '"$memhog"' -d 20 -H 8000 1200;
	 else exec '"$memhog"' -d 40 -H 6000 150; fi' 2>"$work/err" || status=$?
cat "$work/err"
# The kill wrote the file at once; wait for it all the same on a slow guest.
for _ in $(seq 100); do
	[ "$(sample "$prom" 'memguardd_kills_total{reason="available_min"}')" -ge 1 ] && break
	sleep 0.1
done
stop_daemon
sed 's/^/    /' "$work/daemon.log"
assert_eq "$(json "$work/r.json" "[t['status'] for t in r['tasks']]")" "[0, 0, 0, 137]" "statuses"
assert_eq "$status" 137 "exit status"
assert_eq "$(wc -l <"$work/kills.jsonl")" 1 "exactly one kill in the kill log"

sed 's/^/    /' "$prom" | grep -v '^    #'
promtool_ok "$prom"
assert_eq "$(sample "$prom" 'memguardd_kills_total{reason="available_min"}')" 1 "kills under available_min"
assert_eq "$(sample "$prom" 'memguardd_kills_total{reason="pressure"}')" 0 "kills under pressure"
assert_eq "$(sample "$prom" 'memguardd_kills_total{reason="falling"}')" 0 "kills while falling"
assert_eq "$(sample "$prom" memguardd_kill_failures_total)" 0 "failed kills"
avail=$(sample "$prom" memguardd_mem_available_bytes)
[ "$avail" -gt 0 ] || fail "MemAvailable gauge is $avail"
kill_s=$(sample "$prom" memguardd_last_kill_seconds)
python3 -c "import sys; v = float(sys.argv[1]); sys.exit(not 0 < v < 30)" "$kill_s" ||
	fail "decision-to-kill time $kill_s s"

# 3. The launcher's file.
sed 's/^/    /' "$work/run.prom" | grep -v '^    #'
promtool_ok "$work/run.prom"
# The task label counts from 1, as the summary does: MEMGUARD_TASK 3 is task 4.
for t in 1 2 3; do
	assert_eq "$(sample "$work/run.prom" "memguard_task_outcome{task=\"$t\",outcome=\"ok\"}")" 1 "task $t outcome"
done
assert_eq "$(sample "$work/run.prom" 'memguard_task_outcome{task="4",outcome="killed_by_memguardd"}')" 1 \
	"task 4 outcome"
assert_eq "$(sample "$work/run.prom" memguard_run_exit_status)" 137 "the run's exit status"
assert_eq "$(sample "$work/run.prom" memguard_run_tasks)" 4 "tasks in the run"
# The share follows MemAvailable at the start (183 MiB as well as 215 MiB has been seen): compare with it.
peak=$(sample "$work/run.prom" 'memguard_task_peak_bytes{task="4"}')
share=$(sample "$work/run.prom" 'memguard_task_share_bytes{task="4"}')
[ "$peak" -gt "$share" ] || fail "task 4's peak $peak is not above its share $share"
assert_eq "$(sample "$work/run.prom" memguard_run_share_bytes)" "$(json "$work/r.json" "r['share_bytes']")" \
	"share as in the report"
assert_eq "$(sample "$work/run.prom" memguard_run_budget_bytes)" "$(json "$work/r.json" "r['budget_bytes']")" \
	"budget as in the report"
assert_no_leftover

# An unwritable --metrics: one line, 125, before anything runs.
status=0
"$memguard" --metrics /nonexistent/run.prom -- true 2>"$work/err" || status=$?
assert_eq "$status" 125 "exit status for an unwritable --metrics"
assert_eq "$(wc -l <"$work/err")" 1 "lines on stderr"
assert_contains "$work/err" "cannot write the metrics file /nonexistent/run.prom: No such file or directory" \
	"message"
note "memguardd's and memguard's metrics pass promtool and count the kill"
