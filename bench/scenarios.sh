# Scenarios and variants of the benchmark. Sourced by bench/guest.sh and bench/run.sh, not run.
# shellcheck shell=bash
#
# Every scenario is a list of tasks: a command template and one parameter line per task, the way
# `memguard --tasks FILE -- CMD {}` takes them; "{}" in the template becomes the task's line. Every
# variant runs exactly these commands. Sizes are fixed MiB, chosen for the 1 GiB swapless guest
# (MemTotal 960 MiB, so (MemTotal - 5%) / 4 = 228 MiB a task for N = 4, as the careful script splits
# it; memguard gives about 200 MiB, since the guest has only about 850 MiB available when idle).

# shellcheck disable=SC2034 # the S_* variables are read by the scripts that source this file

BENCH_SCENARIOS=(runaway lazygc creep uneven fork sigterm hog many)
BENCH_VARIANTS=(kernel earlyoom nohang careful strict elastic)

# PyPy's live set in lazygc: calibrated in the guest with `bench/run.sh --calibrate` (docs/benchmarks.md):
# 4 default-GC peaks of 241 MiB outgrow the guest, and 80 MiB live runs under memguard's PYPY_GC_MAX of
# about 105 MB (88 MiB did once, and failed with MemoryError at 100-103 MB elsewhere).
BENCH_CHURN_LIVE=${BENCH_CHURN_LIVE:-80}
BENCH_CHURN_SECONDS=${BENCH_CHURN_SECONDS:-20}
# How long the well-behaved workers compute.
BENCH_WORK_SECONDS=${BENCH_WORK_SECONDS:-8}

# scenario NAME BIN_DIR MEMHOG CHURN: sets
#   S_N         tasks (all start at once)
#   S_OFFENDER  the task that misbehaves, -1 when none does (then every task is innocent)
#   S_DEADLINE  seconds after which the cell is stopped and counted as timed out
#   S_TEMPLATE  the command template (array), S_PARAMS one line per task (array)
#   S_DESC      one line for the report
#   S_SIDE      a command started beside the tasks, outside every variant's launcher, in a top-level
#               cgroup of its own (bench-side) as another user's job would be (array; empty: none)
scenario() {
	local name=$1 bin=$2 memhog=$3 churn=$4 w=$BENCH_WORK_SECONDS i
	S_OFFENDER=-1
	S_PARAMS=()
	S_SIDE=()
	case $name in
	runaway)
		S_N=4 S_OFFENDER=3 S_DEADLINE=120
		S_TEMPLATE=(sh -c '{}')
		S_PARAMS=("exec $bin/worker 120 $w" "exec $bin/worker 120 $w" "exec $bin/worker 120 $w"
			"exec $memhog inf")
		S_DESC="3 workers hold 120 MiB and compute for ${w} s; task 3 allocates 4 MiB steps without end"
		;;
	lazygc)
		S_N=4 S_DEADLINE=240
		S_TEMPLATE=(pypy3 "$churn" "$BENCH_CHURN_LIVE" "$BENCH_CHURN_SECONDS" '{}')
		S_PARAMS=(1 2 3 4)
		S_DESC="4 × pypy3 churn.py $BENCH_CHURN_LIVE MiB live for $BENCH_CHURN_SECONDS s, seeds 1-4, PyPy's default GC"
		;;
	creep)
		S_N=4 S_DEADLINE=150
		S_TEMPLATE=("$memhog" -s 4 -d 150 -H 3000 260)
		S_PARAMS=(0 1 2 3)
		S_DESC="4 tasks each grow to 260 MiB in 4 MiB steps every 150 ms (1040 MiB together), hold 3 s"
		;;
	uneven)
		S_N=4 S_DEADLINE=120
		S_TEMPLATE=(sh -c '{}')
		S_PARAMS=("exec $bin/worker 454 $w" "exec $bin/worker 113 $w" "exec $bin/worker 113 $w"
			"exec $bin/worker 113 $w")
		S_DESC="task 0 needs 454 MiB (2 shares), tasks 1-3 need 113 MiB (half a share); compute ${w} s"
		;;
	fork)
		S_N=4 S_OFFENDER=0 S_DEADLINE=120
		S_TEMPLATE=(sh -c '{}')
		S_PARAMS=("exec $memhog -f 4 inf" "exec $bin/worker 120 $w" "exec $bin/worker 120 $w"
			"exec $bin/worker 120 $w")
		S_DESC="task 0 forks 4 children that each allocate without end; 3 workers hold 120 MiB for ${w} s"
		;;
	sigterm)
		S_N=4 S_OFFENDER=3 S_DEADLINE=120
		S_TEMPLATE=(sh -c '{}')
		S_PARAMS=("exec $bin/worker 120 $w" "exec $bin/worker 120 $w" "exec $bin/worker 120 $w"
			"exec $memhog -i inf")
		S_DESC="as runaway, but task 3 ignores SIGTERM"
		;;
	hog)
		S_N=4 S_DEADLINE=120
		S_TEMPLATE=(sh -c '{}')
		S_PARAMS=("exec $bin/worker 120 $w" "exec $bin/worker 120 $w" "exec $bin/worker 120 $w"
			"exec $bin/worker 120 $w")
		S_SIDE=("$memhog" inf)
		S_DESC="4 workers hold 120 MiB (half a share) for ${w} s; a second after they start, a process outside the run, in a cgroup of its own, allocates 4 MiB steps without end"
		;;
	many)
		S_N=256 S_DEADLINE=240
		S_TEMPLATE=("$memhog" -s 1 -H 2000 2)
		for ((i = 0; i < 256; i++)); do
			S_PARAMS+=("$i")
		done
		S_DESC="256 tasks at once, each touches 2 MiB and holds it 2 s (512 MiB together)"
		;;
	*)
		return 1
		;;
	esac
}

variant_desc() {
	case $1 in
	kernel) echo "the kernel alone: tasks started with & and wait" ;;
	earlyoom) echo "earlyoom with the Debian package's defaults (/etc/default/earlyoom)" ;;
	nohang) echo "nohang with the Debian package's unit and /etc/nohang/nohang.conf" ;;
	careful) echo "a careful user's script: one cgroup per task, memory.max = (MemTotal - 5%)/N, no swap" ;;
	strict) echo "memguard --strict -n N (the launcher alone)" ;;
	elastic) echo "memguardd + memguard --elastic -n N" ;;
	*) return 1 ;;
	esac
}
