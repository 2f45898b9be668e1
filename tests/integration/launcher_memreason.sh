#!/usr/bin/env bash
# A task that fails near a memory limit says so: a CPython task stopped by
# RLIMIT_AS (a MemoryError, exit 1) names the address-space limit in the
# summary, the report and the log, in cgroup and degraded mode, also when it
# only reserved its address space (sampled VmPeak); a task that
# fails far below its limits says just its exit code; an OOM kill under
# memory.max still says the kernel killed it.
. "$(dirname "$0")/lib.sh"

# Task 1 (MEMGUARD_TASK 0) grows in 8 MiB steps, written so they are resident,
# until CPython raises MemoryError and exits 1; task 2 fails at once, using
# next to nothing. The summary and the log count from 1.
cat >"$work/hog.py" <<'PY'
import os, sys
if os.environ["MEMGUARD_TASK"] == "1":
    sys.exit(1)
x = [bytearray(8 << 20) for _ in range(100000)]
PY

# row FILE INDEX: the summary table's row for a task.
row() { awk -v i="$2" '$1 == i' "$1"; }

# run_hog NAME ARGS...: runs the two tasks under memguard ARGS, with the
# report in $work/NAME.json and stderr in $work/NAME.err, and checks them.
run_hog() {
	local name=$1 status reason
	shift
	set +e
	"$memguard" -n 2 --mem 512M --report "$work/$name.json" "$@" -- python3 "$work/hog.py" 2>"$work/$name.err"
	status=$?
	set -e
	cat "$work/$name.err"
	note "$name: exit $status"
	assert_eq "$status" 1 "$name: exit status (task 1's MemoryError)"
	assert_eq "$(json "$work/$name.json" "r['runtime']")" cpython "$name: runtime"
	assert_contains "$work/$name.err" "^MemoryError" "$name: CPython's own MemoryError"
	# The summary's row, the report and the log name the limit.
	row "$work/$name.err" 1 >"$work/$name.row0"
	assert_contains "$work/$name.row0" "failed with exit code 1 after reaching at least [0-9]*% of its" \
		"$name: task 1's row"
	assert_contains "$work/$name.row0" "address-space limit (RLIMIT_AS)" "$name: task 1's row"
	assert_contains "$work/$name.row0" "MemoryError" "$name: task 1's row"
	reason=$(json "$work/$name.json" "r['tasks'][0]['reason']")
	case $reason in
	*"address-space limit (RLIMIT_AS): likely out of address space (a MemoryError in Python)") ;;
	*) fail "$name: task 1's reason in the report: $reason" ;;
	esac
	assert_eq "$(json "$work/$name.json" "r['tasks'][0]['near_limit']")" RLIMIT_AS "$name: near_limit"
	assert_eq "$(json "$work/$name.json" "r['tasks'][0]['near_limit_percent'] >= 90")" True \
		"$name: near_limit_percent"
	assert_eq "$(json "$work/$name.json" "r['tasks'][0]['rlimit_as_bytes'] == r['share_bytes']")" True \
		"$name: RLIMIT_AS is the share"
	assert_eq "$(json "$work/$name.json" \
		"r['tasks'][0]['address_space_peak_bytes'] >= 0.9 * r['share_bytes']")" True \
		"$name: the address space reached, near RLIMIT_AS"
	assert_eq "$(json "$work/$name.json" "r['tasks'][0]['oom_kills']")" 0 "$name: no kernel OOM kill"
	assert_contains "$work/$name.err" \
		"^memguard: warning: task 1 likely ran out of memory: failed with exit code 1 after reaching" \
		"$name: the log line"
	# Task 1 failed far below everything: no memory claim anywhere.
	assert_eq "$(json "$work/$name.json" "r['tasks'][1]['reason']")" "failed with exit code 1" \
		"$name: task 2's reason"
	assert_eq "$(json "$work/$name.json" "r['tasks'][1]['near_limit']")" None "$name: task 2's near_limit"
	row "$work/$name.err" 2 >"$work/$name.row1"
	assert_contains "$work/$name.row1" "failed with exit code 1$" "$name: task 2's row"
	if grep -q "task 2 .*ran out of memory" "$work/$name.err"; then
		fail "$name: task 2 logged as out of memory"
	fi
}

note "cgroup mode: RLIMIT_AS = memory.max = the share"
run_hog cgroup
assert_eq "$(json "$work/cgroup.json" "r['mode']")" cgroup "cgroup: mode"
assert_eq "$(json "$work/cgroup.json" "r['tasks'][0]['memory_max_bytes'] == r['share_bytes']")" True \
	"cgroup: memory.max is the share"
assert_no_leftover

note "degraded mode: RLIMIT_AS = the share, the RSS watchdog"
run_hog degraded --no-cgroups
assert_eq "$(json "$work/degraded.json" "r['mode']")" degraded "degraded: mode"
assert_eq "$(json "$work/degraded.json" "r['tasks'][0]['memory_max_bytes']")" None "degraded: no memory.max"

note "cgroup mode: address space reserved but never touched is seen by sampling VmPeak"
cat >"$work/reserve.py" <<'PY'
import mmap, sys, time
maps = []
try:
    while True:
        maps.append(mmap.mmap(-1, 1 << 20))
except (OSError, MemoryError):
    pass
time.sleep(2)
sys.exit(1)
PY
set +e
"$memguard" -n 1 --mem 256M --report "$work/reserve.json" -- python3 "$work/reserve.py" 2>"$work/reserve.err"
status=$?
set -e
cat "$work/reserve.err"
assert_eq "$status" 1 "reserve: exit status"
assert_eq "$(json "$work/reserve.json" "r['mode']")" cgroup "reserve: mode"
assert_eq "$(json "$work/reserve.json" "r['tasks'][0]['near_limit']")" RLIMIT_AS "reserve: near_limit"
assert_eq "$(json "$work/reserve.json" "r['tasks'][0]['peak_bytes'] < r['share_bytes'] / 2")" True \
	"reserve: memory.peak far below (nothing touched)"
assert_eq "$(json "$work/reserve.json" \
	"r['tasks'][0]['address_space_peak_bytes'] >= 0.95 * r['tasks'][0]['rlimit_as_bytes']")" True \
	"reserve: VmPeak sampled near RLIMIT_AS"
assert_no_leftover

note "an OOM kill under memory.max (no RLIMIT_AS for a C program) says so, as before"
set +e
"$memguard" -n 2 --mem 512M --report "$work/oom.json" -- sh -c \
	'if [ "$MEMGUARD_TASK" = 0 ]; then exec '"$memhog"' inf; fi' 2>"$work/oom.err"
status=$?
set -e
cat "$work/oom.err"
assert_eq "$status" 137 "oom: exit status (SIGKILL)"
assert_eq "$(json "$work/oom.json" "r['tasks'][0]['rlimit_as_bytes']")" None "oom: no RLIMIT_AS"
assert_eq "$(json "$work/oom.json" "r['tasks'][0]['oom_kills'] >= 1")" True "oom: OOM kill counted"
assert_eq "$(json "$work/oom.json" "r['tasks'][0]['near_limit']")" None "oom: an OOM kill is no near miss"
reason=$(json "$work/oom.json" "r['tasks'][0]['reason']")
case $reason in
"killed by the kernel: "*) ;;
*) fail "oom: reason: $reason" ;;
esac
assert_eq "$(json "$work/oom.json" "r['tasks'][1]['reason']")" ok "oom: the other task"
assert_contains "$work/oom.err" "^memguard: warning: task 1 ran out of memory: killed by the kernel: " "oom: log line"
assert_no_leftover
