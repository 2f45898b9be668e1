#!/usr/bin/env bash
# A run beside alice's task cgroup would escape every limit set on that cgroup itself (docs/security.md).
# memguardd counts every limit file of its controllers, not a list: the four a review found escaped
# (hugetlb.2MB.max, cgroup.max.descendants, cgroup.max.depth, memory.zswap.max), and a device program
# its parent does not apply. The same program on the parent too (as Slurm's on the job) is no reason to
# refuse. pids.max goes with the run, once: a second run beside the same cgroup would double that budget.
# Before (a1c1d0c), all but the first were placed.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
echo +hugetlb >"$cgroot/cgroup.subtree_control"
. "$(dirname "$0")/daemon_lib.sh"
. "$(dirname "$0")/place_lib.sh"
devprog=$build/tests/programs/devprog
[ -x "$devprog" ] || fail "no $devprog: build the tests"

# refused_by JOB FILE VALUE: JOB/task sets FILE to VALUE (root, as a batch system would); alice's
# request from there is refused, naming FILE, and no run is made.
refused_by() {
	local j=$1 file=$2 value=$3 reply
	job "$j" 300M
	echo +hugetlb >"$cgroot/$j/cgroup.subtree_control"
	mkdir "$cgroot/$j/task"
	if [ ! -e "$cgroot/$j/task/$file" ]; then
		# memory.zswap.max came in 5.19: before, there is no such limit to escape.
		[ "$file" = memory.zswap.max ] || fail "this kernel has no $file"
		note "kernel $(uname -r) has no $file: nothing to escape"
		remove_job "$j" || fail "$j could not be removed"
		return 0
	fi
	echo "$value" >"$cgroot/$j/task/$file"
	reply=$(client alice "$j" line "place budget=$((200 << 20))")
	note "$file = $value: $reply"
	case $reply in
	"err cgroup $j/task sets $file itself"*) ;;
	*) fail "alice's request from beside $file = $value got: $reply" ;;
	esac
	no_placed_runs || fail "a run was made beside $j/task: $(run_dirs)"
	remove_job "$j" || fail "$j could not be removed"
}

echo "every limit file of the task cgroup's controllers counts"
refused_by job1 hugetlb.2MB.max 0
refused_by job1 cgroup.max.descendants 10
refused_by job1 cgroup.max.depth 1
refused_by job1 memory.zswap.max 0

echo "a device program of the task cgroup's own: refused"
job job2 300M
mkdir "$cgroot/job2/task"
# Major 5 (/dev/tty and the like): nothing memguard or its task needs.
"$devprog" attach "$cgroot/job2/task" deny-major:5 || fail "cannot attach a device program"
reply=$(client alice job2 line "place budget=$((200 << 20))")
note "$reply"
case $reply in
"err cgroup job2/task sets a device program its parent does not apply itself"*) ;;
*) fail "alice's request from beside a device program got: $reply" ;;
esac
no_placed_runs || fail "a run was made beside job2/task: $(run_dirs)"

echo "the same program on the job too, as Slurm's: the run beside the task cgroup is held by it, and placed"
"$devprog" attach "$cgroot/job2" deny-major:5 || fail "cannot attach a device program to job2"
note "job2/task: $("$devprog" query "$cgroot/job2/task"); job2: $("$devprog" query "$cgroot/job2")"
# The task opens /dev/tty (5:0): EPERM from the job's program, not ENXIO (no terminal) as without it.
cat >"$share/tty.py" <<'PY'
import errno, sys
try:
    open("/dev/tty")
except OSError as e:
    sys.exit(0 if e.errno == errno.EPERM else 3)
sys.exit(4)
PY
as alice job2 "$memguard" -n 1 --report "$share/dev.json" -- python3 "$share/tty.py" 2>"$work/dev.err" ||
	{ cat "$work/dev.err"; fail "alice's task was not held by the job's device program (see its report)"; }
assert_eq "$(json "$share/dev.json" 'r["mode"]')" cgroup "alice's run beside a program the job applies too"
wait_for 10 no_placed_runs || fail "the run was left"

echo "pids.max goes with the run, once"
job job3 300M
mkdir "$cgroot/job3/task"
echo 20 >"$cgroot/job3/task/pids.max"
as alice job3 sh -c "$memguard -n 1 -- sleep 30 & sleep 0.1; while ! [ -e $share/second ]; do sleep 0.1; done; wait" \
	2>"$work/p1.err" &
first=$!
wait_for 30 sh -c '[ -n "$(find "$0"/job3 -path "*memguard-run-*/task-0" 2>/dev/null)" ]' "$cgroot" ||
	{ cat "$work/p1.err" "$work/daemon.log"; fail "alice's first run was not placed"; }
run=$(run_dirs)
assert_eq "$(cat "$run/pids.max")" 20 "pids.max of the run beside job3/task"
reply=$(client alice job3 line "place budget=$((100 << 20))")
note "a second run beside job3/task: $reply"
case $reply in
"err cgroup job3/task sets pids.max itself, and the run beside it has that budget already"*) ;;
*) fail "alice's second run beside job3/task got: $reply" ;;
esac
assert_eq "$(placed_runs)" 1 "placed runs beside job3/task"
touch "$share/second"
pkill -u alice -x sleep || true
wait "$first" || true
wait_for 20 no_placed_runs || fail "alice's run was left"

stop_daemon
grep -i "placement for" "$work/daemon.log" | sed 's/^/    /' || true
echo "PASS: every limit of the caller's own cgroup counts"
