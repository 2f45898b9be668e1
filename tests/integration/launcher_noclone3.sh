#!/usr/bin/env bash
# Tasks start inside their own cgroups without clone3's CLONE_INTO_CGROUP
# too. No kernel from 5.10 up lacks it, so a seccomp filter makes clone3 fail
# (tests/programs/noclone3): ENOSYS as before 5.7 and under most container
# runtimes, EPERM as under some. memguard then probes the run's cgroup and
# starts each task by fork and a write to cgroup.procs before exec: every
# task is in its cgroup from its first instruction, and its limit holds there.
. "$(dirname "$0")/lib.sh"

noclone3=$build/tests/programs/noclone3
for err in ENOSYS EPERM; do
	case $err in
	ENOSYS) words="Function not implemented" ;;
	EPERM) words="Operation not permitted" ;;
	esac
	# Each task first says where it is; task 2 then grows until its 64 MiB limit stops it.
	set +e
	"$noclone3" "$err" "$memguard" -v -n 3 --mem-per-task 64M --report "$work/$err.json" -- sh -c \
		'cat /proc/self/cgroup >'"$work/$err"'.cg.$MEMGUARD_TASK
		 if [ "$MEMGUARD_TASK" = 2 ]; then exec '"$memhog"' inf; else exec '"$memhog"' -H 500 16; fi' \
		2>"$work/$err.err"
	status=$?
	set -e
	grep -v '^memguard: debug: ' "$work/$err.err" || true
	assert_eq "$status" 137 "$err: exit status (task 2's OOM kill)"
	assert_contains "$work/$err.err" \
		"debug: clone3 with CLONE_INTO_CGROUP failed ($words): tasks start by fork, then join their cgroup" \
		"$err: the fallback ran"
	assert_eq "$(json "$work/$err.json" "r['mode']")" cgroup "$err: mode"
	assert_eq "$(json "$work/$err.json" "[t['status'] for t in r['tasks']]")" "[0, 0, 137]" "$err: statuses"
	run=
	for i in 0 1 2; do
		cg=$(sed -n 's/^0:://p' "$work/$err.cg.$i")
		note "$err: task $i started in $cg"
		[[ $cg == /memguard/run-*/task-$i ]] || fail "$err: task $i started in $cg, not in its own cgroup"
		[ -z "$run" ] || [ "${cg%/*}" = "$run" ] || fail "$err: task $i in ${cg%/*}, task 0 in $run"
		run=${cg%/*}
	done
	# The limit held in the cgroup the fallback put task 2 in.
	assert_eq "$(json "$work/$err.json" "r['tasks'][2]['oom_kills'] >= 1")" True "$err: task 2's OOM kill counted"
	peak=$(json "$work/$err.json" "r['tasks'][2]['peak_bytes']")
	[[ $peak =~ ^[0-9]+$ ]] || fail "$err: no peak for task 2 ($peak)"
	note "$err: task 2 peaked at $((peak >> 20)) MiB"
	[ "$peak" -le $((64 << 20)) ] || fail "$err: task 2 peaked at $peak bytes, above its 64 MiB"
done
assert_no_leftover
