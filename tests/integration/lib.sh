# Shared by the integration scripts: paths and assertions. Sourced, not run.
# These tests need root and cgroup v2 with the memory controller: they run in
# the VM (tests/vm/run-suite.sh) or on such a host. They never skip.
. "$(dirname "${BASH_SOURCE[0]}")/base.sh"

require_cgroup2() {
	grep -qw memory "$cgroot/cgroup.controllers" 2>/dev/null ||
		fail "no cgroup v2 memory controller at $cgroot: run inside tests/vm"
	[ "$(id -u)" -eq 0 ] || fail "needs root"
}

# keeps_of CGROUP: its user.memguard.keeps (what memguardd left it of its job beside the runs), or "none".
keeps_of() {
	python3 -c 'import os, sys
try:
    print(os.getxattr(sys.argv[1], "user.memguard.keeps").decode())
except OSError:
    print("none")' "$1"
}

# cg_kill CGROUP: SIGKILL to everything in it and below, through cgroup.kill
# where the kernel has it (5.14), else process by process (5.10).
cg_kill() {
	if [ -e "$1/cgroup.kill" ]; then
		echo 1 >"$1/cgroup.kill"
	else
		find "$1" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
	fi
}
# Lets scratch cgroups below the root have memory and pids, as memguard
# does for its own (a fresh guest enables nothing).
enable_root_controllers() { echo "+memory +pids" >"$cgroot/cgroup.subtree_control"; }

# kernel_has FEATURE: whether this kernel has FEATURE, one of cgroup.kill (5.14), process_mrelease (5.15),
# oom_group_kill (5.17, in memory.events) and memory.peak (5.19) (docs/platforms.md). The answer follows
# the kernel's version and is checked against the kernel itself (the file in a scratch cgroup, the key in
# its memory.events, the system call's errno): a disagreement fails the test, so that an assertion about
# which way memguard went never rests on a wrong premise. Sets kernel_has_why to what was seen.
kernel_has() {
	local since major minor probe cg=$cgroot/mgtest-probe.$$
	case $1 in
	cgroup.kill) since=5014 ;;
	process_mrelease) since=5015 ;;
	oom_group_kill) since=5017 ;;
	memory.peak) since=5019 ;;
	*) fail "kernel_has: no such feature: $1" ;;
	esac
	IFS=.- read -r major minor _ <<<"$(uname -r)"
	echo +memory >"$cgroot/cgroup.subtree_control"
	mkdir "$cg"
	case $1 in
	cgroup.kill | memory.peak) [ -e "$cg/$1" ] && probe=yes || probe=no ;;
	oom_group_kill) grep -q '^oom_group_kill ' "$cg/memory.events" && probe=yes || probe=no ;;
	process_mrelease)
		# process_mrelease(-1, 0): EBADF where the kernel has it, ENOSYS where it does not.
		probe=$(python3 -c 'import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall(448, -1, 0)
e = ctypes.get_errno()
print({errno.EBADF: "yes", errno.ENOSYS: "no"}.get(e, "errno %d" % e))')
		;;
	esac
	rmdir "$cg"
	kernel_has_why="$1 on $(uname -r): $probe"
	if ((major * 1000 + minor >= since)); then
		[ "$probe" = yes ] || fail "kernel $(uname -r) should have $1, but the probe says $probe"
		return 0
	fi
	[ "$probe" = no ] || fail "kernel $(uname -r) should not have $1, but the probe says $probe"
	return 1
}

# No cgroup of a finished run may be left behind.
assert_no_leftover() {
	local left
	left=$(find "$cgroot/memguard" -mindepth 1 -maxdepth 1 -type d -name 'run-*' 2>/dev/null | wc -l)
	assert_eq "$left" 0 "leftover run cgroups under $cgroot/memguard"
}


# kill_recorded: SIGKILLs every pid a test recorded in $work/pid.*, so what a
# failed run leaves behind does not outlive the test; then removes $work.
kill_recorded() {
	local f
	for f in "$work"/pid.*; do
		[ -s "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null || true
	done
	rm -rf "$work"
}

# wait_for SECONDS CONDITION...: polls until CONDITION holds; 1 after SECONDS.
wait_for() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS < deadline)) || return 1
		sleep 0.1
	done
}

# mark_kernel_log: a line in the kernel's log that kernel_kills reads from: earlier tests in the guest
# leave their own OOM kills there.
kernel_marks=0
mark_kernel_log() {
	kernel_mark="memguard test: $(basename "$0") $$ mark $((++kernel_marks))"
	echo "$kernel_mark" >/dev/kmsg
}
# kernel_kills: the processes the kernel's OOM killer killed since mark_kernel_log.
kernel_kills() { dmesg | sed -n "/${kernel_mark:?mark_kernel_log first}/,\$p" | grep -i "killed process" || true; }

# alive PID: the process exists and is not a zombie (no fork: TCG is slow).
alive() {
	local stat
	read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
	[[ $stat != *") Z "* ]]
}

require_cgroup2

# MemAvailable counts only part of the page cache a run leaves behind, and
# the budget follows MemAvailable: the PyPy tests start each part from the
# same clean state.
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }

# pypy_lazy_stage NAME: the lazy-GC scenario's sizes for this guest, for four
# pypy3 tasks running $churn for $seconds: cap (the PYPY_GC_MAX memguard
# derives), live (three quarters of it: the live set follows the share the
# guest gives, and MemAvailable moves by tens of MiB between boots) and alone
# (one copy's peak under PyPy's default GC, in a cgroup NAME of its own
# without a limit). Fails when four unguarded copies would fit in
# MemAvailable: the scenario would then show nothing.
pypy_lazy_stage() {
	local cg=$cgroot/$1 available
	drop_caches
	"$memguard" -n 4 --dry-run --explain -- pypy3 "$churn" 2>"$work/explain"
	cap=$(sed -n 's/.*PYPY_GC_MAX=\([0-9]*\)MB.*/\1/p' "$work/explain")
	[ -n "$cap" ] || { cat "$work/explain"; fail "no PYPY_GC_MAX in memguard --explain for pypy3"; }
	live=$((cap * 3 / 4))
	available=$(awk '/^MemAvailable:/ { print $2 * 1024 }' /proc/meminfo)
	rmdir "$cg" 2>/dev/null || true
	mkdir "$cg"
	if [ -e "$cg/memory.peak" ]; then
		sh -c 'echo $$ >'"$cg"'/cgroup.procs; exec pypy3 '"$churn $live $seconds"' 1' >/dev/null ||
			fail "pypy3 churn.py failed on its own"
		alone=$(cat "$cg/memory.peak")
	else
		# No memory.peak before 5.19 (the VM's --kernel 5.10): memory.current sampled every 100 ms.
		# A sampled peak is at most the real one, so the check below stays on the safe side.
		local pid cur
		sh -c 'echo $$ >'"$cg"'/cgroup.procs; exec pypy3 '"$churn $live $seconds"' 1' >/dev/null &
		pid=$!
		alone=0
		while alive "$pid"; do
			read -r cur <"$cg/memory.current" && [ "$cur" -gt "$alone" ] && alone=$cur
			sleep 0.1
		done
		wait "$pid" || fail "pypy3 churn.py failed on its own"
		note "no memory.peak on this kernel: one copy's peak is memory.current's largest sample"
	fi
	rmdir "$cg"
	note "PYPY_GC_MAX=${cap}MB, so $live MiB live; one copy with PyPy's default GC peaked at $((alone >> 20)) MiB," \
		"four at $((4 * alone >> 20)) MiB against MemAvailable $((available >> 20)) MiB"
	[ $((4 * alone)) -gt "$available" ] ||
		fail "four unguarded copies ($((4 * alone >> 20)) MiB) fit in MemAvailable: the test no longer shows anything"
}
