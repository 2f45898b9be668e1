#!/usr/bin/env bash
# memguard in a job script under a real Slurm (Debian's slurm-wlm, cgroup/v2, ConstrainRAMSpace), run
# by an ordinary user, in the systemd guest:
#   tests/vm/run-suite.sh --systemd --mem 1536 --test-timeout 600 tests/integration/systemd/slurm_memguard.sh
# 1. a steady job: COMPLETED, exit 0, the report's budget within the job's --mem, every task ok, the
#    run placed inside the job's step (beside task_0) and nothing of the job left;
# 2. a runaway among steady tasks: the runaway is stopped, the others finish, the summary names it;
# 3. scancel of a job whose script runs memguard without exec: Slurm signals only its own task
#    cgroup; memguardd sees it empty and tells the launcher, which tells its tasks (SIGTERM) and
#    writes its report; no process outlives the job;
# 4. the same for a job of root's;
# 5. scancel of a job whose script execs memguard: the launcher's first process gets Slurm's SIGTERM
#    and relays it, the report is written, and nothing of the job (process or cgroup) is left;
# 6. two memguard at once in one job: both placed inside the job, under its one limit;
# 7. the job's memory: a run holding 250 MiB and a plain process growing beside it in a 300 MiB job
#    hold at most the job's limit together; the one stopped is the plain process, at what the run
#    leaves of the job in task_0, and the run's task finishes; another user's job on the node at the
#    same time, within its own limit, loses nothing;
# 8. the job's CPUs and devices: in a job given 1 CPU and no GPU (the test's "GPU" is /dev/full), every
#    task of the run sees that CPU only and cannot open the device;
# 9. srun memguard inside a batch job, a memguardd restart, then scancel: nothing of the run is left;
# 10. accounting: what sstat's MaxRSS shows of a run holding 200 MiB (measured, for docs/batch.md).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=slurm_lib.sh
. "$(dirname "$0")/slurm_lib.sh"

# Slurm's cgroups are root's (not delegated to the job's user): memguardd's placement service gives
# the run a real cgroup. EXPECT_MODE=steps runs parts 1 and 2 without memguardd, where each task is a
# Slurm step of its own (tests/integration/systemd/slurm_steps.sh tests that backend in full); the
# rest are about placed runs.
EXPECT_MODE=${EXPECT_MODE:-cgroup}
case $EXPECT_MODE in cgroup | steps) ;; *) fail "EXPECT_MODE is cgroup or steps, not '$EXPECT_MODE'" ;; esac
JOB_MEM_MIB=400
NEED_MEM_MIB=1400

total_mib=$(($(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) / 1024))
[ "$total_mib" -ge "$NEED_MEM_MIB" ] ||
	fail "the guest has ${total_mib} MiB, this test needs ${NEED_MEM_MIB}: run-suite.sh --mem 1536"

# Where the job's user can run them: the build tree may not be reachable for other users.
install -m 0755 "$memguard" /usr/local/bin/memguard
install -m 0755 "$memhog" /usr/local/bin/memhog

# memguardd as the package installs it: the service and the socket that holds the placement socket.
memguardd_up() {
	install -m 0755 "$memguardd" /usr/sbin/memguardd
	cp "$top/packaging/systemd/memguardd.service" "$top/packaging/systemd/memguardd.socket" /etc/systemd/system/
	systemctl daemon-reload
	systemctl start memguardd.socket memguardd.service ||
		{ journalctl -u memguardd -b --no-pager; fail "memguardd did not start"; }
}
# Placed runs are beside the job's task cgroups: .../job_<id>/step_<step>/user/memguard-run-<uid>-<n>.
placed_runs() { find "$cgroot" -mindepth 1 -type d -name 'memguard-run-*' -prune 2>/dev/null || true; }
assert_no_placed_run() {
	local i
	for ((i = 0; i < 30; i++)); do
		[ -z "$(placed_runs)" ] && return 0
		sleep 1
	done
	slurm_fail "placed runs left behind: $(placed_runs)"
}

r_mode='' r_where='' r_placed='' r_budget='' r_exit='' r_statuses='' r_signals='' r_reasons=()
# report_read FILE: the report's fields in r_mode, r_where, r_budget, r_exit, r_statuses ("0 0 137 0")
# and r_reasons (an array), from one python3 (each start costs a second under TCG).
report_read() {
	[ -s "$1" ] || slurm_fail "no report $1"
	eval "$(python3 - "$1" <<-'EOF'
		import json, shlex, sys
		r = json.load(open(sys.argv[1]))
		q = lambda v: shlex.quote(str(v))
		print(f"r_mode={q(r['mode'])} r_where={q(r['where'])} r_budget={q(r['budget_bytes'])}")
		print(f"r_placed={q(r.get('placed_by') or '')}")
		print(f"r_signals={q(' '.join(str(t['signal']) for t in r['tasks']))}")
		print(f"r_exit={q(r['exit_status'])} r_statuses={q(' '.join(str(t['status']) for t in r['tasks']))}")
		print("r_reasons=(" + " ".join(q(t['reason']) for t in r['tasks']) + ")")
	EOF
	)" || slurm_fail "cannot read the report $1"
}

# run_job SCRIPT WHAT: submits SCRIPT with --mem=JOB_MEM_MIB, waits for its end and shows its
# output; sets id and out.
run_job() {
	id=$(slurm_submit "$1" --mem="${JOB_MEM_MIB}M")
	note "[${SECONDS}s] job $id: $2"
	slurm_wait_end "$id"
	out=$(slurm_job_out "$id")
	sed 's/^/    job: /' "$out"
}

trap 'slurm_down; rm -rf "$work"' EXIT
slurm_up
[ "$EXPECT_MODE" = steps ] || memguardd_up
home=$(getent passwd "$slurm_user" | cut -d: -f6)
uid=$(id -u "$slurm_user")

# ---- 1. a steady job ---------------------------------------------------------------------------
cat >"$work/steady.sh" <<-'EOF'
	#!/bin/bash
	cat /proc/self/cgroup >"$HOME/steady.cgroup"
	memguard -n 4 --report "$HOME/r1.json" -- memhog -H 2000 32
EOF
run_job "$work/steady.sh" "steady, --mem=${JOB_MEM_MIB}M"
slurm_assert_eq "$(slurm_field "$id" JobState)" COMPLETED "job $id state (scontrol)"
slurm_assert_eq "$(slurm_field "$id" ExitCode)" 0:0 "job $id exit code (scontrol)"
slurm_assert_eq "$(slurm_jobcomp_field "$id" JobState)" COMPLETED "job $id state (jobcomp)"
# The job ran where Debian's slurmd puts it: <node>_slurmstepd.scope (docs/batch.md relies on it).
cg=$(cut -d: -f3 "$home/steady.cgroup")
note "[${SECONDS}s] job $id cgroup: $cg"
case $cg in
/system.slice/*slurmstepd.scope/job_"$id"/step_batch/user/task_0) ;;
*) slurm_fail "job $id ran in $cg, not in system.slice/*slurmstepd.scope/job_$id/step_batch/user/task_0" ;;
esac
report_read "$home/r1.json"
note "[${SECONDS}s] report: mode $r_mode, where: $r_where, budget $r_budget"
if [ "$r_budget" -le 0 ] || [ "$r_budget" -gt $((JOB_MEM_MIB << 20)) ]; then
	slurm_fail "budget $r_budget is not within the job's --mem=${JOB_MEM_MIB}M"
fi
slurm_assert_eq "$r_mode" "$EXPECT_MODE" "memguard's mode inside the job"
slurm_assert_eq "$r_statuses" "0 0 0 0" "task statuses"
slurm_assert_eq "$r_exit" 0 "report's exit status"
grep -q "memguard: 4 succeeded, 0 failed" "$out" || slurm_fail "job $id: no '4 succeeded, 0 failed' summary"
if [ "$EXPECT_MODE" = steps ]; then
	grep -q "steps mode (Slurm job $id, each task a job step" "$out" || slurm_fail "job $id: not in steps mode"
else
	# Placed by memguardd, limited by the job's own memory.max.
	case $r_placed in
	"placed by memguardd; its limit 400MiB is memory.max of system.slice/"*"slurmstepd.scope/job_$id") ;;
	*) slurm_fail "job $id: placed_by is '$r_placed'" ;;
	esac
	case $r_where in
	system.slice/*slurmstepd.scope/job_"$id"/step_batch/user/memguard-run-"$uid"-*) ;;
	*) slurm_fail "job $id: run cgroup $r_where is not inside the job's batch step" ;;
	esac
fi
slurm_assert_gone "$id"

# ---- 2. a runaway among steady tasks -----------------------------------------------------------
# Task 2 grows until stopped (1 MiB every 20 ms); the others hold 16 MiB for 3 s.
cat >"$work/runaway.sh" <<-'EOF'
	#!/bin/bash
	memguard -n 4 --report "$HOME/r2.json" -- sh -c \
		'if [ "$MEMGUARD_TASK" = 2 ]; then exec memhog -s 1 -d 20 inf; else exec memhog -H 3000 16; fi'
EOF
run_job "$work/runaway.sh" "a runaway among steady tasks"
report_read "$home/r2.json"
slurm_assert_eq "$r_mode" "$EXPECT_MODE" "memguard's mode inside the job"
read -r s0 s1 status s3 <<<"$r_statuses"
reason=${r_reasons[2]}
note "[${SECONDS}s] runaway: status $status, reason: $reason"
[ "$status" != 0 ] || slurm_fail "the runaway (task 2) was not stopped: statuses $r_statuses"
slurm_assert_eq "$s0 $s1 $s3" "0 0 0" "the steady tasks' statuses"
slurm_assert_eq "$r_exit" "$status" "report's exit status (the runaway's)"
if [ "$EXPECT_MODE" = steps ]; then
	# In a step of its own, the kernel stops the runaway at the step's memory.max, its share.
	case $reason in
	"killed by the kernel: "*" share exceeded") ;;
	*) slurm_fail "runaway stopped by something else than its step's limit: $reason" ;;
	esac
else
	# In its own cgroup the runaway meets a memory limit inside the run (the kernel, in the run's
	# cgroup, not Slurm's) or memguardd; the reason says which.
	case $reason in
	"killed by the kernel: "* | "killed by memguardd: "*) ;;
	*) slurm_fail "runaway stopped by something else than a memory limit: $reason" ;;
	esac
fi
# Placed, the run is inside the batch step: the kernel stopped the runaway there, in Slurm's own
# cgroup, and Slurm says so. As steps, the batch step itself saw no OOM kill: the job fails with
# memguard's exit status, the runaway's, and the runaway's own step is OUT_OF_MEMORY.
want_state=OUT_OF_MEMORY want_code=0:125
[ "$EXPECT_MODE" = cgroup ] || want_state=FAILED want_code=$status:0
slurm_assert_eq "$(slurm_field "$id" JobState)" "$want_state" "job $id state (scontrol)"
slurm_assert_eq "$(slurm_field "$id" ExitCode)" "$want_code" "job $id exit code (scontrol)"
slurm_assert_eq "$(slurm_jobcomp_field "$id" JobState)" "$want_state" "job $id state (jobcomp)"
grep -q "memguard: 3 succeeded, 1 failed" "$out" || slurm_fail "job $id: no '3 succeeded, 1 failed' summary"
# The summary counts from 1: MEMGUARD_TASK 2 is its row 3.
awk '$1 == 3' "$out" | grep -qF -- "$reason" ||
	slurm_fail "job $id: the summary table does not name task 3 (MEMGUARD_TASK 2) with its reason"
slurm_assert_gone "$id"
if [ "$EXPECT_MODE" = steps ]; then
	note "[${SECONDS}s] parts 1 and 2 as expected (mode steps); the rest is about placed runs"
	exit 0
fi

# ---- 3. scancel, memguard not exec'd -----------------------------------------------------------
# Slurm sends SIGTERM to the batch shell only, then SIGKILLs what is left in task_0 (22.05 reads the
# cgroup.procs of its own cgroups only). The launcher is not there: memguardd placed it beside task_0,
# tethered to it. When task_0 empties, memguardd gives the launcher SIGTERM; it tells its tasks and
# writes its report.
cat >"$work/cancel.sh" <<-'EOF'
	#!/bin/bash
	memguard -n 2 --report "$REPORT" -- memhog -H 600000 8
	echo "after memguard: $?"
EOF
# scancel_job NAME REPORT SUBMIT...: runs cancel.sh, cancels it once its 2 tasks run, and checks
# that the tasks were told, the report written, and nothing of the job left.
scancel_job() {
	local name=$1 report=$2 exec=$3 id launcher tasks i out pid
	shift 3
	id=$("$@")
	note "[${SECONDS}s] job $id ($name): scancel while memguard (exec'd: $exec) runs 2 tasks"
	slurm_wait_state "$id" RUNNING
	for ((i = 0; i < SLURM_JOB_TIMEOUT; i++)); do
		tasks=$(pgrep -d' ' -f "memhog -H 600000 8" || true)
		[ "$(wc -w <<<"$tasks")" -ge 2 ] && break
		sleep 1
	done
	[ "$(wc -w <<<"$tasks")" -ge 2 ] || slurm_fail "job $id: the 2 tasks never ran"
	launcher=$(pgrep -d' ' -f "memguard -n 2 --report $report") || slurm_fail "job $id: no memguard process"
	scancel "$id" || slurm_fail "scancel $id"
	slurm_wait_end "$id"
	slurm_assert_eq "$(slurm_field "$id" JobState)" CANCELLED "job $id state (scontrol)"
	for ((i = 0; i < 60; i++)); do
		[ -s "$report" ] && ! kill -0 "$launcher" 2>/dev/null && break
		sleep 1
	done
	out=$(slurm_job_out "$id")
	[ "$name" != root ] || out=/root/job-$id.out
	[ -e "$out" ] || out=/dev/null
	sed 's/^/    job: /' "$out"
	report_read "$report"
	note "[${SECONDS}s] job $id ($name): tasks' signals $r_signals; report at $report"
	slurm_assert_eq "$r_signals" "SIGTERM SIGTERM" "job $id: the tasks were told (SIGTERM)"
	! grep -q "after memguard" "$out" || slurm_fail "job $id: the batch shell outlived the SIGTERM"
	for pid in $launcher $tasks; do
		[ ! -e "/proc/$pid" ] || slurm_fail "job $id: pid $pid outlived the job"
	done
	assert_no_placed_run
	if [ "$exec" = no ]; then
		journalctl -u memguardd -b --no-pager -o cat |
			grep -q "job_$id/step_batch/user/task_0 ended; telling its launcher" ||
			slurm_fail "job $id: memguardd did not say it ended the run with the job"
		# Slurm 22.05 removes the step's cgroups while the run is still there and does not try again
		# (docs/batch.md): measured, not asserted.
		sleep 5
		note "[${SECONDS}s] job $id ($name): the job's cgroups 5 s later: '$(slurm_job_cgroups "$id" | tr '\n' ' ')'"
	else
		slurm_assert_gone "$id"
	fi
}
submit_as_root() { # SCRIPT ARGS...: sbatch as root, from /root
	local id
	install -m 0755 "$1" "/root/${1##*/}"
	id=$(cd /root && sbatch --parsable --chdir=/root --output=/root/job-%j.out "${@:2}" "/root/${1##*/}") ||
		slurm_fail "sbatch as root failed"
	echo "${id%%;*}"
}
scancel_job "$slurm_user" "$home/r3.json" no slurm_submit "$work/cancel.sh" --mem="${JOB_MEM_MIB}M" \
	--export=ALL,REPORT="$home/r3.json"
# Nothing of the run (a user's systemd --user from runuser may linger: it is not the job's).
! pgrep -u "$uid" -x 'memguard|memhog' >/dev/null ||
	slurm_fail "processes of $slurm_user's run outlived job 3: $(pgrep -a -u "$uid" -x 'memguard|memhog')"

# ---- 4. the same for root ----------------------------------------------------------------------
scancel_job root /root/r4.json no submit_as_root "$work/cancel.sh" --mem="${JOB_MEM_MIB}M" \
	--export=ALL,REPORT=/root/r4.json

# ---- 5. scancel, memguard exec'd ---------------------------------------------------------------
sed 's/^memguard/exec memguard/' "$work/cancel.sh" >"$work/cancel-exec.sh"
scancel_job "$slurm_user" "$home/r5.json" yes slurm_submit "$work/cancel-exec.sh" --mem="${JOB_MEM_MIB}M" \
	--export=ALL,REPORT="$home/r5.json"

# ---- 6. two memguard at once in one job ---------------------------------------------------------
if [ "$EXPECT_MODE" = cgroup ]; then
	cat >"$work/two.sh" <<-'EOF'
		#!/bin/bash
		memguard -n 1 --report "$HOME/r6a.json" -- sleep 6 &
		for _ in $(seq 200); do
			[ -n "$(find /sys/fs/cgroup/system.slice -name 'memguard-run-*' -print -quit)" ] && break
			sleep 0.1
		done
		memguard -n 1 --report "$HOME/r6b.json" -- sh -c 'cut -d: -f3 /proc/self/cgroup >"$HOME/r6b.cgroup"'
		wait
	EOF
	run_job "$work/two.sh" "two memguard at once"
	slurm_assert_eq "$(slurm_field "$id" JobState)" COMPLETED "job $id state (scontrol)"
	for r in r6a r6b; do
		report_read "$home/$r.json"
		slurm_assert_eq "$r_mode" cgroup "the mode of memguard $r"
	done
	case $(cat "$home/r6b.cgroup") in
	/system.slice/*slurmstepd.scope/job_"$id"/step_batch/user/memguard-run-*) ;;
	*) slurm_fail "job $id: the second memguard's task ran in $(cat "$home/r6b.cgroup"), not in the job" ;;
	esac
	slurm_assert_gone "$id"
	assert_no_placed_run
fi

# ---- 7. the job's memory: a run and a plain process beside it ----------------------------------
# The run's task holds 250 MiB; beside it, in the job script, a plain process grows to 250 MiB. The
# job has 300 MiB: together they must stay within it, sampled every 100 ms.
cat >"$work/memory.sh" <<-'EOF'
	#!/bin/bash
	memguard -n 1 --report "$HOME/r7.json" -- memhog -H 8000 250 &
	for _ in $(seq 300); do
		[ -n "$(find /sys/fs/cgroup/system.slice -path '*memguard-run-*/task-0' -print -quit)" ] && break
		sleep 0.1
	done
	sleep 2
	memhog -s 4 -d 20 -H 4000 250
	echo "plain process: exit $?"
	wait
EOF
# Meanwhile another user's job holds 120 MiB within its own 200 MiB: it must lose nothing.
id -u mgother >/dev/null 2>&1 || useradd -m -s /bin/bash mgother
cat >"$work/other.sh" <<-'EOF'
	#!/bin/bash
	exec memguard -n 1 --report "$HOME/r7-other.json" -- memhog -H 15000 120
EOF
other=$(slurm_user=mgother slurm_submit "$work/other.sh" --mem=200M)
slurm_wait_state "$other" RUNNING
id=$(slurm_submit "$work/memory.sh" --mem=300M)
note "[${SECONDS}s] job $id: a 250 MiB run and a 250 MiB plain process in a 300 MiB job (job $other of mgother beside it)"
slurm_wait_state "$id" RUNNING
max=0
while [ "$(slurm_field "$id" JobState)" = RUNNING ]; do
	rss=$({ ps -u "$uid" -o rss= || true; } | awk '{ s += $1 } END { print s + 0 }')
	[ "$rss" -le "$max" ] || max=$rss
	sleep 0.1
done
slurm_wait_end "$id"
out=$(slurm_job_out "$id")
sed 's/^/    job: /' "$out"
note "[${SECONDS}s] job $id: the user's processes held at most $((max / 1024)) MiB"
[ "$max" -le $(((300 + 16) * 1024)) ] ||
	slurm_fail "job $id: the user's processes held $((max / 1024)) MiB, over 300 + 16"
report_read "$home/r7.json"
# The run took its budget out of the job: the job script's cgroup (task_0) keeps the rest, and the
# kernel stops the plain process there, not the run's task within its share at the job's limit.
grep -q "plain process: exit 137" "$out" ||
	slurm_fail "job $id: the plain process beside the run was not stopped (SIGKILL) in task_0"
slurm_assert_eq "$r_statuses" 0 "job $id: the run's task, within its share"
note "[${SECONDS}s] job $id: the plain process was stopped in task_0, the run's task finished; Slurm: $(slurm_field "$id" JobState)"
slurm_assert_gone "$id"
slurm_wait_end "$other"
report_read "$(getent passwd mgother | cut -d: -f6)/r7-other.json"
slurm_assert_eq "$r_statuses" 0 "job $other: the other user's task, within its job"
slurm_assert_eq "$(slurm_field "$other" JobState)" COMPLETED "job $other state (scontrol)"

# ---- 8. the job's CPUs -------------------------------------------------------------------------
cat >"$work/cpus.sh" <<-'EOF'
	#!/bin/bash
	dev() { if head -c1 /dev/full >/dev/null 2>&1; then echo open; else echo closed; fi; }
	grep Cpus_allowed_list /proc/self/status >"$HOME/r8.shell"
	dev >"$HOME/r8.shell.dev"
	export -f dev
	exec memguard -n 2 -- bash -c 'grep Cpus_allowed_list /proc/self/status >"$HOME/r8.task$MEMGUARD_TASK"
		dev >"$HOME/r8.task$MEMGUARD_TASK.dev"'
EOF
id=$(slurm_submit "$work/cpus.sh" --mem="${JOB_MEM_MIB}M" -c 1)
note "[${SECONDS}s] job $id: CPUs of a job given 1 CPU"
slurm_wait_end "$id"
shell_cpus=$(cut -f2 "$home/r8.shell")
note "[${SECONDS}s] job $id: the batch shell's CPUs: $shell_cpus; the tasks': $(cut -f2 "$home"/r8.task? | tr '\n' ' ')"
[ "$(nproc --all)" -gt 1 ] && [ "$shell_cpus" = "0-$(($(nproc --all) - 1))" ] &&
	slurm_fail "job $id: the batch shell has every CPU: ConstrainCores is not in force"
for t in 0 1; do
	slurm_assert_eq "$(cut -f2 "$home/r8.task$t")" "$shell_cpus" "task $t's CPUs"
done
# The job was given no GPU: Slurm's device program closes /dev/full to the batch shell (so the setup
# is in force), and to every task of the run, which is inside the job.
slurm_assert_eq "$(cat "$home/r8.shell.dev")" closed "the batch shell's /dev/full (ConstrainDevices)"
for t in 0 1; do
	slurm_assert_eq "$(cat "$home/r8.task$t.dev")" closed "task $t's /dev/full"
done
slurm_assert_gone "$id"

# ---- 9. srun memguard inside a batch job, then scancel -----------------------------------------
# The step's task holds memguard's first process; the run is beside it in step_0/user. scancel gives
# that process SIGTERM, it relays it, and the run is gone before Slurm removes the step.
cat >"$work/srun.sh" <<-'EOF'
	#!/bin/bash
	srun -n1 --mem=200M memguard -n 1 --report "$HOME/r9.json" -- memhog -H 600000 8
EOF
id=$(slurm_submit "$work/srun.sh" --mem=300M)
note "[${SECONDS}s] job $id: srun memguard in a batch job, then scancel"
slurm_wait_state "$id" RUNNING
for ((i = 0; i < SLURM_JOB_TIMEOUT; i++)); do
	[ -n "$(placed_runs)" ] && pgrep -u "$uid" -f "memhog -H 600000 8" >/dev/null && break
	sleep 1
done
case $(placed_runs) in
*/job_"$id"/step_0/user/memguard-run-*) ;;
*) slurm_fail "job $id: the srun step's run is not inside the step: '$(placed_runs)'" ;;
esac
# A restart mid-job: the new memguardd finds the run in its registry and still ends it with the job.
systemctl restart memguardd.service
for ((i = 0; i < 30; i++)); do
	journalctl -u memguardd -b --no-pager -o cat | grep -q "job_$id/step_0/user/memguard-run-.*adopted (launcher running)" && break
	sleep 1
done
((i < 30)) || slurm_fail "job $id: the restarted memguardd did not adopt the run"
scancel "$id" || slurm_fail "scancel $id"
slurm_wait_end "$id"
sed 's/^/    job: /' "$(slurm_job_out "$id")"
report_read "$home/r9.json"
slurm_assert_eq "$r_signals" SIGTERM "job $id: the srun step's task was told (SIGTERM)"
slurm_assert_gone "$id"
assert_no_placed_run

# ---- 10. what Slurm's accounting sees of a run -------------------------------------------------
# jobacct_gather/cgroup reads task_<n>'s memory.stat: a run beside task_0 is not in it. Measured for
# docs/batch.md, not asserted.
cat >"$work/acct.sh" <<-'EOF'
	#!/bin/bash
	exec memguard -n 1 -- memhog -H 20000 200
EOF
id=$(slurm_submit "$work/acct.sh" --mem=300M)
slurm_wait_state "$id" RUNNING
for ((i = 0; i < 30; i++)); do
	[ -n "$(find "$cgroot" -path "*job_$id/*/memguard-run-*/task-0" -print -quit)" ] && break
	sleep 1
done
sleep 8
maxrss=$(sstat -n -P -j "$id.batch" -o MaxRSS 2>&1 | head -1)
held=$(($(cat "$(find "$cgroot" -path "*job_$id/*/memguard-run-*" -prune -print -quit)/memory.current") >> 20))
note "[${SECONDS}s] job $id: the run holds ${held} MiB; sstat MaxRSS of $id.batch: '${maxrss}'"
[ -n "$maxrss" ] || slurm_fail "job $id: sstat printed nothing"
scancel "$id"
slurm_wait_end "$id"
slurm_assert_gone "$id"

left=$(find "$cgroot" -type d \( -name 'run-*' -o -name 'task-*' -o -name 'memguard-run-*' \) 2>/dev/null || true)
[ -z "$left" ] || slurm_fail "memguard cgroups left behind: $left"
note "[${SECONDS}s] all jobs as expected (mode $EXPECT_MODE)"
