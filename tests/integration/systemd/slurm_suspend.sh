#!/usr/bin/env bash
# scontrol suspend and resume of a job whose script runs memguard, under a real Slurm (Debian's
# slurm-wlm 22.05, cgroup/v2) with memguardd placing the run beside task_0, in the systemd guest:
#   tests/vm/run-suite.sh --systemd --mem 1536 --test-timeout 900 tests/integration/systemd/slurm_suspend.sh
# Suspended, the run's tasks use no CPU (Slurm freezes the step's user/ cgroup, which holds the run; its
# SIGTSTP to task_0 reaches memguard's first process, which passes it on to the launcher); resumed, they
# go on (Slurm's SIGCONT is passed on too: a launcher left stopped would never end), and the job
# completes with every task's report. (a1c1d0c passed this too: Slurm's freeze of user/ holds the run,
# and its first process passed neither signal on.)
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=slurm_lib.sh
. "$(dirname "$0")/slurm_lib.sh"

install -m 0755 "$memguard" /usr/local/bin/memguard
install -m 0755 "$memguardd" /usr/sbin/memguardd
cp "$top/packaging/systemd/memguardd.service" "$top/packaging/systemd/memguardd.socket" /etc/systemd/system/
trap 'slurm_down; rm -rf "$work"' EXIT
slurm_up
systemctl daemon-reload
systemctl start memguardd.socket memguardd.service ||
	{ journalctl -u memguardd -b --no-pager; fail "memguardd did not start"; }
home=$(getent passwd "$slurm_user" | cut -d: -f6)

# ticks PID: the CPU time of PID, user and system, in clock ticks.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# Two tasks, each busy until it used 8 s of CPU (the job's one CPU shared: 16 s), then done: the
# suspend comes well before that, and must not use it up.
cat >"$work/busy.sh" <<-'EOF'
	#!/bin/bash
	memguard -n 2 --report "$HOME/suspend.json" -- python3 -c '
	import os
	while sum(os.times()[:2]) < 8:
	    pass'
	echo "memguard: exit $?"
EOF
id=$(slurm_submit "$work/busy.sh" --mem=300M)
slurm_wait_state "$id" RUNNING
for ((i = 0; i < 5 * SLURM_JOB_TIMEOUT; i++)); do
	tasks=$(find "$cgroot/system.slice" -path "*job_$id/step_batch/user/memguard-run-*/task-*" -name cgroup.procs \
		-exec cat {} + 2>/dev/null | tr '\n' ' ')
	[ "$(wc -w <<<"$tasks")" -ge 2 ] && break
	sleep 0.2
done
[ "$(wc -w <<<"$tasks")" -ge 2 ] || slurm_fail "job $id: the run's 2 tasks did not start in a placed run"
run=$(find "$cgroot/system.slice" -path "*job_$id/step_batch/user/memguard-run-*" -prune -print -quit)
note "[${SECONDS}s] job $id: run ${run#"$cgroot"/}, tasks $tasks, launcher $(cat "$run/supervisor/cgroup.procs")"

[ -d "$run" ] || slurm_fail "job $id: no placed run"
scontrol suspend "$id" || slurm_fail "scontrol suspend $id"
slurm_wait_state "$id" SUSPENDED
for ((i = 0; i < 50; i++)); do
	grep -qx "frozen 1" "$run/cgroup.events" 2>/dev/null && break
	sleep 0.2
done
[ -e "$run/cgroup.events" ] || slurm_fail "job $id: its run ended before the suspend took hold: make the tasks longer"
grep -qx "frozen 1" "$run/cgroup.events" || slurm_fail "job $id suspended, but its run is not frozen: $(cat "$run/cgroup.events")"
before=0
for t in $tasks; do before=$((before + $(ticks "$t"))); done
sleep 5
after=0
for t in $tasks; do after=$((after + $(ticks "$t"))); done
note "[${SECONDS}s] job $id suspended: the run is frozen; its tasks' CPU time $before, 5 s later $after ticks"
slurm_assert_eq "$after" "$before" "job $id: the tasks' CPU time while suspended"

scontrol resume "$id" || slurm_fail "scontrol resume $id"
slurm_wait_end "$id"
out=$(slurm_job_out "$id")
sed 's/^/    job: /' "$out"
slurm_assert_eq "$(slurm_field "$id" JobState)" COMPLETED "job $id state after the resume"
grep -q "memguard: exit 0" "$out" || slurm_fail "job $id: memguard did not end with 0 after the resume"
statuses=$(python3 -c 'import json, sys
print(" ".join(str(t["status"]) for t in json.load(open(sys.argv[1]))["tasks"]))' "$home/suspend.json")
slurm_assert_eq "$statuses" "0 0" "job $id: the tasks' statuses"
slurm_assert_gone "$id"
journalctl -u memguardd -b --no-pager -o cat | grep "placed run .*job_$id/.* \(frozen\|thawed\)" | sed 's/^/    /' || true
note "[${SECONDS}s] suspended, the run used no CPU; resumed, it finished"
