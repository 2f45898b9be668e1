#!/usr/bin/env bash
# Runs that come and go quickly under memguardd leave no PSI trigger behind in
# the kernel. A trigger written into a cgroup's memory.pressure while that
# cgroup is being removed is never destroyed on kernels without the fix of
# April 2026 ("sched/psi: fix race between file release and pressure write";
# Debian 12's 6.1 lacks it): the kernel warns "psi: trigger leak", and the
# trigger's psimon thread goes on polling a freed cgroup. memguardd arms no
# trigger on a cgroup that can be removed under it. Every trigger has its
# psimon thread, so once the daemon has stopped their count must be back
# where it was. Three launchers at once beside a busy loop: memguardd used to
# leak about 30 triggers here.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon_lib.sh"
require_cgroup2

psimon() { pgrep -c -x psimon || true; }

mark_kernel_log
before=$(psimon)
start_daemon
busy=
trap 'stop_daemon; [ -z "$busy" ] || kill "$busy" 2>/dev/null || true; rm -rf "$work"' EXIT
(while :; do :; done) &
busy=$!
launchers=()
for j in 1 2 3; do
	(for i in $(seq 30); do
		"$memguard" -n 2 --elastic --mem 128M -- true 2>>"$work/err" || echo "run $j.$i failed" >>"$work/failed"
	done) &
	launchers+=($!)
done
wait "${launchers[@]}"
kill "$busy"
busy=
[ ! -s "$work/failed" ] || fail "$(wc -l <"$work/failed") runs failed: $(tail -1 "$work/err")"
guarded=$(grep -c "guarding cgroup" "$work/daemon.log" || true)
stop_daemon
sleep 0.5
leaks=$(dmesg | sed -n "/$kernel_mark/,\$p" | grep -c "psi: trigger leak" || true)
after=$(psimon)
note "$guarded cgroups guarded; psimon threads before $before, after $after; 'trigger leak' warnings $leaks"
[ "$guarded" -gt 0 ] || fail "memguardd guarded none of the runs' cgroups: the test saw nothing"
assert_eq "$after" "$before" "psimon threads once 90 runs and the daemon are gone"
assert_eq "$leaks" 0 "kernel warnings 'psi: trigger leak'"
assert_no_leftover
