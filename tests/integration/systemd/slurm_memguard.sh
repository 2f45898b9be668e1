#!/usr/bin/env bash
# memguard in a job script under a real Slurm (Debian's slurm-wlm, cgroup/v2, ConstrainRAMSpace), run
# by an ordinary user, in the systemd guest:
#   tests/vm/run-suite.sh --systemd --mem 1536 --test-timeout 600 tests/integration/systemd/slurm_memguard.sh
# 1. a steady job: COMPLETED, exit 0, the report's budget within the job's --mem, every task ok;
# 2. a runaway among steady tasks: the runaway is stopped, the others finish, the summary names it;
# 3. scancel of a job whose script runs memguard without exec: the launcher, placed by memguardd
#    outside the step's cgroup and tethered to the job, tells its tasks (SIGTERM), writes its report,
#    and nothing of the job (process or cgroup) outlives it;
# 4. the same for a job of root's;
# 5. two memguard at once in one job: the first placed, the second refused a run of its own (it would
#    take the job's limit again) and run in the job's own cgroup, degraded, under the job's limit.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=slurm_lib.sh
. "$(dirname "$0")/slurm_lib.sh"

# Slurm's cgroups are root's (not delegated to the job's user): memguardd's placement service gives
# the run a real cgroup. Without memguardd the mode would be "degraded".
EXPECT_MODE=${EXPECT_MODE:-cgroup}
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
# Placed runs under systemd are transient scopes memguard.slice/memguard-user-*.scope.
placed_runs() { find "$cgroot/memguard.slice" -mindepth 1 -maxdepth 1 -name 'memguard-user-*' 2>/dev/null || true; }
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
memguardd_up
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
if [ "$EXPECT_MODE" = degraded ]; then
	grep -q "running without cgroups" "$out" || slurm_fail "job $id: degraded, but memguard did not say why"
else
	# Placed by memguardd, limited by the job's own memory.max.
	case $r_placed in
	"placed by memguardd; its limit 400MiB is memory.max of system.slice/"*"slurmstepd.scope/job_$id") ;;
	*) slurm_fail "job $id: placed_by is '$r_placed'" ;;
	esac
	case $r_where in
	memguard.slice/memguard-user-"$uid"-*.scope) ;;
	*) slurm_fail "job $id: run cgroup $r_where is not a placed scope" ;;
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
if [ "$EXPECT_MODE" = degraded ]; then
	# Without a cgroup of its own, the runaway meets its RLIMIT_AS (mmap fails, memhog exits 2; the
	# reason may add how near it came) or the RSS watchdog; never Slurm's memory.max, which would make
	# the job OUT_OF_MEMORY.
	case $reason in
	"killed by memguard: RSS "* | "failed with exit code 2"*) ;;
	*) slurm_fail "runaway stopped by something else than RLIMIT_AS or the watchdog: $reason" ;;
	esac
else
	# In its own cgroup the runaway meets a memory limit inside the run (the kernel, in the run's
	# cgroup, not Slurm's) or memguardd; the reason says which.
	case $reason in
	"killed by the kernel: "* | "killed by memguardd: "*) ;;
	*) slurm_fail "runaway stopped by something else than a memory limit: $reason" ;;
	esac
fi
# Slurm sees the job fail with memguard's exit status: the runaway's.
slurm_assert_eq "$(slurm_field "$id" JobState)" FAILED "job $id state (scontrol)"
slurm_assert_eq "$(slurm_field "$id" ExitCode)" "$status:0" "job $id exit code (scontrol)"
slurm_assert_eq "$(slurm_jobcomp_field "$id" JobState)" FAILED "job $id state (jobcomp)"
grep -q "memguard: 3 succeeded, 1 failed" "$out" || slurm_fail "job $id: no '3 succeeded, 1 failed' summary"
awk '$1 == 2' "$out" | grep -qF -- "$reason" ||
	slurm_fail "job $id: the summary table does not name task 2 with its reason"
slurm_assert_gone "$id"

# ---- 3. scancel, memguard not exec'd -----------------------------------------------------------
# Slurm sends SIGTERM to the batch shell only, then SIGKILLs what is left in the step's cgroup. The
# launcher is not there: memguardd placed it in a scope of its own, tethered to the job's cgroup.
# When that empties, memguardd gives the launcher SIGTERM; it tells its tasks and writes its report.
cat >"$work/cancel.sh" <<-'EOF'
	#!/bin/bash
	memguard -n 2 --report "$REPORT" -- memhog -H 600000 8
	echo "after memguard: $?"
EOF
# scancel_job NAME REPORT SUBMIT...: runs cancel.sh, cancels it once its 2 tasks run, and checks
# that the tasks were told, the report written, and nothing of the job left.
scancel_job() {
	local name=$1 report=$2 id launcher tasks i out pid
	shift 2
	id=$("$@")
	note "[${SECONDS}s] job $id ($name): scancel while memguard (not exec'd) runs 2 tasks"
	slurm_wait_state "$id" RUNNING
	for ((i = 0; i < SLURM_JOB_TIMEOUT; i++)); do
		tasks=$(pgrep -d' ' -f "memhog -H 600000 8" || true)
		[ "$(wc -w <<<"$tasks")" -ge 2 ] && break
		sleep 1
	done
	[ "$(wc -w <<<"$tasks")" -ge 2 ] || slurm_fail "job $id: the 2 tasks never ran"
	launcher=$(pgrep -f "memguard -n 2 --report $report") || slurm_fail "job $id: no memguard process"
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
	journalctl -u memguardd -b --no-pager -o cat | grep -q "job_$id ended; telling its launcher" ||
		slurm_fail "job $id: memguardd did not say it ended the run with the job"
}
submit_as_root() { # SCRIPT ARGS...: sbatch as root, from /root
	local id
	install -m 0755 "$1" "/root/${1##*/}"
	id=$(cd /root && sbatch --parsable --chdir=/root --output=/root/job-%j.out "${@:2}" "/root/${1##*/}") ||
		slurm_fail "sbatch as root failed"
	echo "${id%%;*}"
}
scancel_job "$slurm_user" "$home/r3.json" slurm_submit "$work/cancel.sh" --mem="${JOB_MEM_MIB}M" \
	--export=ALL,REPORT="$home/r3.json"
# Nothing of the run (a user's systemd --user from runuser may linger: it is not the job's).
! pgrep -u "$uid" -x 'memguard|memhog' >/dev/null ||
	slurm_fail "processes of $slurm_user's run outlived job 3: $(pgrep -a -u "$uid" -x 'memguard|memhog')"

# ---- 4. the same for root ----------------------------------------------------------------------
scancel_job root /root/r4.json submit_as_root "$work/cancel.sh" --mem="${JOB_MEM_MIB}M" \
	--export=ALL,REPORT=/root/r4.json

# ---- 5. two memguard at once in one job ---------------------------------------------------------
if [ "$EXPECT_MODE" = cgroup ]; then
	cat >"$work/two.sh" <<-'EOF'
		#!/bin/bash
		memguard -n 1 --report "$HOME/r5a.json" -- sleep 6 &
		for _ in $(seq 200); do
			ls -d /sys/fs/cgroup/memguard.slice/memguard-user-"$(id -u)"-*.scope >/dev/null 2>&1 && break
			sleep 0.1
		done
		memguard -n 1 --report "$HOME/r5b.json" -- sh -c 'cut -d: -f3 /proc/self/cgroup >"$HOME/r5b.cgroup"'
		wait
	EOF
	run_job "$work/two.sh" "two memguard at once"
	slurm_assert_eq "$(slurm_field "$id" JobState)" COMPLETED "job $id state (scontrol)"
	report_read "$home/r5a.json"
	slurm_assert_eq "$r_mode" cgroup "the first memguard's mode"
	report_read "$home/r5b.json"
	slurm_assert_eq "$r_mode" degraded "the second memguard's mode"
	case $(cat "$home/r5b.cgroup") in
	/system.slice/*slurmstepd.scope/job_"$id"/*) ;;
	*) slurm_fail "job $id: the second memguard's task ran in $(cat "$home/r5b.cgroup"), not in the job" ;;
	esac
	grep -q "already takes the limit of cgroup system.slice/.*job_$id" "$out" ||
		slurm_fail "job $id: the second memguard did not say why it ran degraded"
	slurm_assert_gone "$id"
	assert_no_placed_run
fi

left=$(find "$cgroot" -type d \( -name 'run-*' -o -name 'task-*' -o -name 'memguard-user-*' \) 2>/dev/null || true)
[ -z "$left" ] || slurm_fail "memguard cgroups left behind: $left"
note "[${SECONDS}s] all jobs as expected (mode $EXPECT_MODE)"
