#!/usr/bin/env bash
# Each task a Slurm job step (--backend=auto picks it: no memguardd, no delegation) under a real Slurm
# with slurmdbd on MariaDB, as an ordinary user, in the systemd guest:
#   tests/vm/run-suite.sh --systemd --mem 2048 --test-timeout 900 tests/integration/systemd/slurm_steps.sh
# 1. memguard -n 3 in a --mem=600M -c 2 job: every task runs in a step of its own
#    (job_<id>/step_<n>/user/task_0) whose memory.max is the task's share, two at a time (the job's two
#    CPUs), and the mode is "steps";
# 2. a task that needs more than its share among steady ones: the kernel kills it in its own step, the
#    others finish, the report and the joblog say memory, and --retries 1 runs it again with a larger
#    share as a new step, which finishes;
# 3. sacct: one step per attempt, named task-<seq>; the OOM-killed attempt OUT_OF_MEMORY; a task that
#    held 200 MiB for 20 s a MaxRSS of at least 180 MiB;
# 4. a task whose command cannot run, and --backend=degraded: what they say;
# 5. GNU parallel's command line as steps: -k and grouped output as parallel gives them, each task's
#    stderr whole, without the helper's records;
# 6. a Slurm without ConstrainRAMSpace: the steps have no limit, memguard says so and the helper's RSS
#    watchdog stops a task past its share.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=slurm_lib.sh
. "$(dirname "$0")/slurm_lib.sh"

need_mib=1900
total_mib=$(($(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) / 1024))
[ "$total_mib" -ge "$need_mib" ] || fail "the guest has ${total_mib} MiB, this test needs ${need_mib}: --mem 2048"
install -m 0755 "$memguard" /usr/local/bin/memguard
install -m 0755 "$memhog" /usr/local/bin/memhog

SLURM_ACCOUNTING=1 slurm_up
trap 'slurm_down; rm -rf "$work"' EXIT
home=$(getent passwd "$slurm_user" | cut -d: -f6)
# Without memguardd: an earlier test in this guest may have left its units running.
systemctl stop memguardd.socket memguardd.service 2>/dev/null || true
rm -f /run/memguard/place.sock
[ ! -e /run/memguard/place.sock ] || fail "memguardd's socket is still there: this test runs without it"

# json_get FILE EXPR: a Python expression over the report `r`.
json_get() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

run_job() { # SCRIPT WHAT SBATCH-ARGS...: submits, waits for the end, shows the output; sets id, out
	local script=$1 what=$2
	shift 2
	id=$(slurm_submit "$script" "$@")
	note "[${SECONDS}s] job $id: $what"
	slurm_wait_end "$id"
	out=$(slurm_job_out "$id")
	sed 's/^/    job: /' "$out"
}

# ---- 1. three tasks, two CPUs ------------------------------------------------------------------
cat >"$work/three.sh" <<-'EOF'
	#!/bin/bash
	memguard -n 3 --report "$HOME/r1.json" -- sh -c '
		cg=$(cut -d: -f3 /proc/self/cgroup)
		echo "$MEMGUARD_TASK $cg $(cat /sys/fs/cgroup$cg/../memory.max) $(date +%s.%N)" >>"$HOME/s1.start"
		memhog -H 4000 40
		echo "$MEMGUARD_TASK $(date +%s.%N)" >>"$HOME/s1.end"'
EOF
run_job "$work/three.sh" "memguard -n 3 in a --mem=600M -c 2 job" --mem=600M -c 2
slurm_assert_eq "$(slurm_field "$id" JobState)" COMPLETED "job $id state"
slurm_assert_eq "$(json_get "$home/r1.json" "r['mode']")" steps "the mode"
slurm_assert_eq "$(json_get "$home/r1.json" "' '.join(str(t['status']) for t in r['tasks'])")" "0 0 0" "statuses"
grep -q "steps mode (Slurm job $id, each task a job step of 1 CPU with --mem at its share" "$out" ||
	slurm_fail "job $id: the summary's mode line does not say steps"
! grep -q "running without cgroups" "$out" || slurm_fail "job $id: degraded"
share=$(json_get "$home/r1.json" "r['tasks'][0]['share_bytes']")
note "[${SECONDS}s] share $share; tasks' cgroups and memory.max:"
sed 's/^/    /' "$home/s1.start"
slurm_assert_eq "$(wc -l <"$home/s1.start")" 3 "tasks started"
while read -r task cg max _; do
	case $cg in
	/system.slice/*slurmstepd.scope/job_"$id"/step_[0-9]*/user/task_0) ;;
	*) slurm_fail "task $task ran in $cg, not in a step of job $id" ;;
	esac
	slurm_assert_eq "$max" "$share" "task $task's step's memory.max"
done <"$home/s1.start"
slurm_assert_eq "$(cut -d' ' -f2 "$home/s1.start" | sort -u | wc -l)" 3 "distinct steps"
# At most two at once: at each start, fewer than two others were running.
most=$(python3 - "$home/s1.start" "$home/s1.end" <<-'EOF'
	import sys
	start = {l.split()[0]: float(l.split()[3]) for l in open(sys.argv[1])}
	end = {l.split()[0]: float(l.split()[1]) for l in open(sys.argv[2])}
	print(max(sum(1 for t in start if start[t] <= start[u] < end[t]) for u in start))
EOF
)
note "[${SECONDS}s] at most $most tasks ran at once"
slurm_assert_eq "$most" 2 "tasks at once in a job of two CPUs"
! grep -q "step creation temporarily disabled" "$out" || slurm_fail "job $id: srun had to wait for resources"
slurm_assert_gone "$id"

# ---- 2. one task needs more than its share; --retries 1 ----------------------------------------
printf 'small-1\nbig\nsmall-2\n' >"$home/list2"
chown "$slurm_user" "$home/list2"
cat >"$work/retry.sh" <<-'EOF'
	#!/bin/bash
	cd "$HOME"
	exec memguard -n 3 --tasks list2 --retries 1 --joblog j2.log --report r2.json -- sh -c \
		'if [ "$0" = big ]; then exec memhog -s 4 -d 20 -H 3000 260; else exec memhog -H 6000 40; fi' {}
EOF
run_job "$work/retry.sh" "a task past its share among steady ones, --retries 1" --mem=600M -c 2
cat "$home/j2.log"
slurm_assert_eq "$(json_get "$home/r2.json" "' '.join(str(t['status']) for t in r['tasks'])")" "0 0 0" \
	"statuses after the retry"
big=$(awk -F'\t' '$NF ~ / big$/' "$home/j2.log")
slurm_assert_eq "$(wc -l <<<"$big")" 2 "the big task's attempts in the joblog"
read -r o1 o2 <<<"$(awk -F'\t' '{ print $12 }' <<<"$big" | tr '\n' ' ')"
slurm_assert_eq "$o1 $o2" "oom_killed ok" "the big task's outcomes"
grep -q "task 2 ran out of memory: killed by the kernel" "$out" || slurm_fail "job $id: no 'ran out of memory' line"
grep -q "task 2: attempt 1 failed for memory (oom_killed); retry 1 of 1" "$out" ||
	slurm_fail "job $id: the retry was not said"
s1=$(awk -F'\t' 'NR == 1 { print $9 }' <<<"$big")
s2=$(awk -F'\t' 'NR == 2 { print $9 }' <<<"$big")
note "[${SECONDS}s] the big task's shares: $s1, then $s2"
[ "$s2" -gt "$s1" ] 2>/dev/null || slurm_fail "the retry's share $s2 is not larger than $s1"
steps2=$(json_get "$home/r2.json" "r['tasks'][1]['slurm_step']")
note "[${SECONDS}s] the retry ran as step $steps2"
retry_id=$id
slurm_assert_gone "$id"

# ---- 3. what sacct says ------------------------------------------------------------------------
cat >"$work/acct.sh" <<-'EOF'
	#!/bin/bash
	exec memguard -n 1 --report "$HOME/r3.json" -- memhog -H 20000 200
EOF
run_job "$work/acct.sh" "a task holding 200 MiB for 20 s" --mem=600M -c 2
# slurmdbd takes the last records a moment after the job.
for ((i = 0; i < 30; i++)); do
	[ "$(slurm_sacct "$retry_id" JobName,State | grep -c '^task-2|')" -ge 2 ] &&
		slurm_sacct "$id" JobName,MaxRSS | grep -q '^task-1|[0-9]' && break
	sleep 1
done
note "[${SECONDS}s] sacct of job $retry_id:"
slurm_sacct "$retry_id" JobID,JobName,MaxRSS,State,ExitCode | sed 's/^/    /'
slurm_assert_eq "$(slurm_sacct "$retry_id" JobName,State | grep '^task-2|' | cut -d'|' -f2 | tr '\n' ' ')" \
	"OUT_OF_MEMORY COMPLETED " "the big task's two steps in sacct"
slurm_assert_eq "$(slurm_sacct "$retry_id" JobName | grep -c '^task-')" 4 "steps in sacct (3 tasks, 1 retry)"
note "[${SECONDS}s] sacct of job $id:"
slurm_sacct "$id" JobID,JobName,MaxRSS,State | sed 's/^/    /'
maxrss=$(slurm_sacct "$id" JobName,MaxRSS | awk -F'|' '$1 == "task-1" { print $2 }')
case $maxrss in
*K) kib=${maxrss%K} ;;
*M) kib=$((${maxrss%M} * 1024)) ;;
*G) kib=$((${maxrss%G} * 1024 * 1024)) ;;
*) slurm_fail "job $id: sacct's MaxRSS of task-1 is '$maxrss'" ;;
esac
[ "$kib" -ge $((180 * 1024)) ] || slurm_fail "job $id: MaxRSS $maxrss of a task that held 200 MiB"
slurm_assert_eq "$(json_get "$home/r3.json" "r['tasks'][0]['slurm_step']")" "$id.0" "the report's step"

# ---- 4. a command that cannot run; --backend=degraded -------------------------------------------
cat >"$work/bad.sh" <<-'EOF'
	#!/bin/bash
	printf 'x\n' >"$HOME/list4"
	memguard -n 1 --tasks "$HOME/list4" --report "$HOME/r4.json" -- no-such-command-{}
	echo "memguard: exit $?"
	memguard --backend=degraded -n 1 -- true
	echo "degraded: exit $?"
EOF
run_job "$work/bad.sh" "a command that cannot run; --backend=degraded" --mem=300M
grep -q "memguard: exit 127" "$out" || slurm_fail "job $id: a missing command is not exit 127"
slurm_assert_eq "$(json_get "$home/r4.json" "r['tasks'][0]['reason']")" "cannot execute: No such file or directory" "its reason"
grep -q "running without cgroups (--backend=degraded)" "$out" || slurm_fail "job $id: --backend=degraded not said"
grep -q "degraded: exit 0" "$out" || slurm_fail "job $id: --backend=degraded failed"

# ---- 5. GNU parallel's command line, each task a step ----------------------------------------------
cat >"$work/par.sh" <<-'EOF'
	#!/bin/bash
	cd "$HOME"
	memguard -j 2 -k 'printf "out %s\n" {}; sleep 0.$((RANDOM % 5)); printf "err %s\n" {} >&2' ::: a b c \
		>par.out 2>par.err
	echo "memguard: exit $?"
	parallel -j 2 -k 'printf "out %s\n" {}' ::: a b c >par.want
EOF
run_job "$work/par.sh" "GNU parallel's command line as steps" --mem=600M -c 2
grep -q "memguard: exit 0" "$out" || slurm_fail "job $id: the sweep failed"
cat "$home/par.err"
cmp "$home/par.out" "$home/par.want" || slurm_fail "job $id: stdout differs from parallel's: $(cat "$home/par.out")"
for w in a b c; do
	grep -qx "err $w" "$home/par.err" || slurm_fail "job $id: task $w's stderr is missing"
done
! grep -q "memguard-step" "$home/par.err" || slurm_fail "job $id: a helper's record reached stderr"
grep -q "steps mode" "$home/par.err" || slurm_fail "job $id: the sweep did not run as steps"
slurm_assert_gone "$id"

# ---- 6. no ConstrainRAMSpace --------------------------------------------------------------------
sed -i 's/^ConstrainRAMSpace=yes/ConstrainRAMSpace=no/' /etc/slurm/cgroup.conf
systemctl restart slurmd
for ((i = 0; i < SLURM_UP_TIMEOUT; i++)); do
	[ "$(timeout 10 sinfo -h -o %T 2>/dev/null)" = idle ] && break
	sleep 1
done
cat >"$work/free.sh" <<-'EOF'
	#!/bin/bash
	exec memguard -n 2 --report "$HOME/r6.json" -- sh -c \
		'if [ "$MEMGUARD_TASK" = 1 ]; then exec memhog -s 2 -d 20 inf; else exec memhog -H 3000 20; fi'
EOF
run_job "$work/free.sh" "steps without a memory limit" --mem=400M -c 2
grep -q "has no memory limit (Slurm's ConstrainRAMSpace is off?)" "$out" || slurm_fail "job $id: the missing limit not said"
reason=$(json_get "$home/r6.json" "r['tasks'][1]['reason']")
note "[${SECONDS}s] the runaway: $reason"
case $reason in
"killed by memguard: RSS "* | "failed with exit code 2"*) ;;
*) slurm_fail "job $id: the runaway in an unlimited step was not stopped by the watchdog or RLIMIT_AS: $reason" ;;
esac
slurm_assert_eq "$(json_get "$home/r6.json" "r['tasks'][0]['status']")" 0 "the steady task"
slurm_assert_gone "$id"
note "[${SECONDS}s] all steps as expected"
