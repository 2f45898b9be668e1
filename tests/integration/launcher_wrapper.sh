#!/usr/bin/env bash
# A runtime behind a wrapper: the task's program is a shell (sh -c, a script
# file), so memguard sees a generic task, and gives it the heap variables
# that only their own runtime reads (docs/runtimes.md, Generic tasks).
#  1. The lazy-GC scenario of launcher_pypy.sh with pypy3 behind sh -c: all
#     four copies finish within their shares, as pypy3 given directly does.
#  2. PyPy, Go and Node behind sh -c and behind a script file see the cap a
#     direct run of the same runtime gets from the same share.
#  3. A plain C program and a CPython script behind a wrapper: their
#     environment differs from a --no-heap-flags run only by those
#     variables, and their summary rows are the same.
#  4. A JVM behind a wrapper is left to size itself (no JAVA_TOOL_OPTIONS):
#     a script's own -Xms above memguard's cap starts, where --runtime jvm's
#     -Xmx, which memguard cannot check against the script, stops the JVM.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
for p in pypy3 go node java; do
	command -v $p >/dev/null || fail "$p is not installed (scripts/deps.sh test installs it)"
done

# run1 NAME MEMGUARD-ARGS... -- COMMAND...: one memguard run whose stdout,
# stderr and report are $work/NAME.out, .err and .json.
run1() {
	local name=$1
	shift
	"$memguard" --report "$work/$name.json" "$@" >"$work/$name.out" 2>"$work/$name.err" ||
		{ cat "$work/$name.err"; fail "$name: memguard $*"; }
}

# A wrapper script file, the way job scripts have them: set up, then exec.
cat >"$work/run_one.sh" <<'EOF'
#!/bin/sh
cd "$(dirname "$0")" || exit 1
exec "$@"
EOF
chmod +x "$work/run_one.sh"

# --- 1. The lazy-GC scenario behind sh -c -----------------------------------
churn=$top/tests/programs/churn.py
seconds=12
# The cap pypy3 given directly would get at this share.
pypy_lazy_stage memguard-itest-wrapper

drop_caches
set +e
"$memguard" -n 4 --explain --report "$work/lazy.json" -- \
	sh -c 'echo "GCMAX=$PYPY_GC_MAX"; exec pypy3 "$@"' sh "$churn" "$live" "$seconds" >"$work/lazy.out" 2>"$work/lazy.err"
status=$?
set -e
cat "$work/lazy.err"
assert_eq "$status" 0 "all four pypy3 behind sh -c finished"
assert_eq "$(json "$work/lazy.json" "sum(t['oom_kills'] for t in r['tasks'])")" 0 "OOM kills behind sh -c"
assert_contains "$work/lazy.err" "4 succeeded, 0 failed" "summary"
guarded=$(json "$work/lazy.json" "max(t['peak_bytes'] for t in r['tasks'])")
share=$(json "$work/lazy.json" "r['share_bytes']")
note "behind sh -c: the largest peak was $((guarded >> 20)) MiB of a $((share >> 20)) MiB share"
[ "$guarded" -lt "$alone" ] || fail "PYPY_GC_MAX did not lower the peak: $guarded >= $alone"
assert_eq "$(json "$work/lazy.json" "r['runtime']")" generic "runtime of sh -c"
# MemAvailable, and so the share, moves a little between the runs.
run_cap=$(sed -n 's/.*heap flag  *PYPY_GC_MAX=\([0-9]*MB\)$/\1/p' "$work/lazy.err")
[ -n "$run_cap" ] || fail "no PYPY_GC_MAX in --explain for sh -c"
assert_eq "$(grep GCMAX= "$work/lazy.out" | sort -u)" "GCMAX=$run_cap" "PYPY_GC_MAX every task saw"
assert_contains "$work/lazy.err" "runtime generic (sh: PYPY_GC_MAX, GOMEMLIMIT, NODE_OPTIONS, DOTNET_GCHeapHardLimit, R_MAX_VSIZE set for any runtime the task starts)" "summary's runtime line"
assert_contains "$work/lazy.err" "memguard: generic task .*; no -Xmx (a JVM: --runtime jvm)" "--explain's generic line"

# --- 2. PyPy, Go and Node: the same cap behind a wrapper as given directly ---
# A fixed share, so that every run below gets the same one.
fixed=(-n 1 --mem-per-task 256M)
cat >"$work/golimit.go" <<'EOF'
package main

import (
	"fmt"
	"runtime/debug"
)

// The limit the Go runtime applies: GOMEMLIMIT as it parsed it.
func main() { fmt.Println(debug.SetMemoryLimit(-1)) }
EOF
# Built in the guest with Debian's Go, its cache in $work: seconds, even under TCG.
(cd "$work" && HOME=$work GOCACHE=$work/gocache GOPATH=$work/gopath GOFLAGS='' go build -o golimit golimit.go) ||
	fail "go build golimit.go"

pypy_probe=(pypy3 -c 'import os; print(os.environ.get("PYPY_GC_MAX"))')
go_probe=("$work/golimit")
node_probe=(node -e 'console.log(require("v8").getHeapStatistics().heap_size_limit)')
for rt in pypy go node; do
	probe="${rt}_probe[@]"
	run1 "$rt.direct" "${fixed[@]}" -- "${!probe}"
	run1 "$rt.none" "${fixed[@]}" --no-heap-flags -- "${!probe}"
	run1 "$rt.shc" "${fixed[@]}" -- sh -c 'cd /tmp && exec "$@"' sh "${!probe}"
	run1 "$rt.script" "${fixed[@]}" -- "$work/run_one.sh" "${!probe}"
	direct=$(cat "$work/$rt.direct.out")
	note "$rt: direct $direct, without heap flags $(cat "$work/$rt.none.out")"
	[ "$direct" != "$(cat "$work/$rt.none.out")" ] || fail "$rt: the direct run's cap is the runtime's default"
	assert_eq "$(json "$work/$rt.direct.json" "r['runtime']")" "$rt" "$rt given directly"
	assert_eq "$(cat "$work/$rt.shc.out")" "$direct" "$rt behind sh -c"
	assert_eq "$(cat "$work/$rt.script.out")" "$direct" "$rt behind run_one.sh"
	assert_eq "$(json "$work/$rt.script.json" "r['runtime']")" generic "runtime of run_one.sh"
done

# --- 3. A C program and a CPython script: nothing that changes them ---------
# Each writes the names in its environment (but the run's token, which
# differs by run) to $work/<prog>.<on|off>.env.
cat >"$work/hold.py" <<'EOF'
import os, sys, time
data = bytearray(48 << 20)
for i in range(0, len(data), 4096):  # touched: 48 MiB resident
    data[i] = 1
with open(sys.argv[1], "w") as f:
    f.write("".join(n + "\n" for n in sorted(os.environ) if n != "MEMGUARD_RUN"))
time.sleep(1)  # held: a peak sampled every 250 ms (before 5.19) sees it
EOF
for prog in c py; do
	for flags in on off; do
		extra=()
		[ "$flags" = on ] || extra=(--no-heap-flags)
		if [ "$prog" = c ]; then
			task=(sh -c 'env | sed "s/=.*//" | grep -vx MEMGUARD_RUN >"$0"; exec "$1" -H 1000 48' \
				"$work/c.$flags.env" "$memhog")
		else
			task=("$work/run_one.sh" python3 "$work/hold.py" "$work/py.$flags.env")
		fi
		run1 "$prog.$flags" -n 2 --mem-per-task 200M "${extra[@]}" -- "${task[@]}"
		LC_ALL=C sort -o "$work/$prog.$flags.env" "$work/$prog.$flags.env"
	done
	added=$(LC_ALL=C comm -23 "$work/$prog.on.env" "$work/$prog.off.env" | tr '\n' ' ')
	assert_eq "$added" "DOTNET_GCHeapHardLimit GOMEMLIMIT NODE_OPTIONS PYPY_GC_MAX R_MAX_VSIZE " \
		"$prog: the variables heap flags add"
	assert_eq "$(LC_ALL=C comm -13 "$work/$prog.on.env" "$work/$prog.off.env")" "" \
		"$prog: the variables heap flags take away"
	# The rows but the seconds: status, exit, signal, OOM kills, reason; the
	# peak within 4 MiB.
	row="[(t['status'], t['exit_code'], t['signal'], t['oom_kills'], t['reason']) for t in r['tasks']]"
	assert_eq "$(json "$work/$prog.on.json" "$row")" "$(json "$work/$prog.off.json" "$row")" "$prog: summary rows"
	on=$(json "$work/$prog.on.json" "max(t['peak_bytes'] for t in r['tasks'])")
	off=$(json "$work/$prog.off.json" "max(t['peak_bytes'] for t in r['tasks'])")
	note "$prog behind a wrapper: peak $((on >> 20)) MiB with the variables, $((off >> 20)) MiB without"
	[ $((on - off)) -lt $((4 << 20)) ] && [ $((off - on)) -lt $((4 << 20)) ] ||
		fail "$prog: peak $on with the variables, $off without"
	assert_eq "$(json "$work/$prog.on.json" "r['exit_status']")" 0 "$prog: exit status"
done

# --- 4. A JVM behind a wrapper sizes itself --------------------------------
# The share is 256 MiB and memguard's JVM cap 144 MiB; the script asks for
# a 200 MiB initial heap, which memguard cannot see behind the wrapper.
jvm_task=(sh -c 'echo "JTO=$JAVA_TOOL_OPTIONS"; java -Xms200m -XX:+PrintFlagsFinal -version 2>&1 | grep -e "Picked up" -e "Initial heap" -e " MaxHeapSize "')
run1 jvm "${fixed[@]}" -- "${jvm_task[@]}"
cat "$work/jvm.out"
assert_contains "$work/jvm.out" "^JTO=$" "no JAVA_TOOL_OPTIONS behind a wrapper"
if grep -q "Picked up" "$work/jvm.out"; then fail "the JVM picked up options memguard set"; fi
assert_eq "$(awk '$2 == "MaxHeapSize" { print $4 }' "$work/jvm.out")" $((200 << 20)) "the script's own heap size"
set +e
"$memguard" "${fixed[@]}" --runtime jvm --report "$work/jvmforced.json" -- "${jvm_task[@]}" \
	>"$work/jvmforced.out" 2>"$work/jvmforced.err"
set -e
cat "$work/jvmforced.out"
assert_contains "$work/jvmforced.out" "^JTO=-Xmx144m$" "--runtime jvm sets -Xmx"
assert_contains "$work/jvmforced.out" "Initial heap size set to a larger value than the maximum heap size" \
	"--runtime jvm stops a JVM whose -Xms it cannot see"
assert_no_leftover
