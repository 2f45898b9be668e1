#!/usr/bin/env bash
# One task list across two nodes of a real Slurm (Debian's slurm-wlm, two slurmd in the systemd
# guest, /work/shared/notes/slurm-vm.md), run by an ordinary user:
#   tests/vm/run-suite.sh --systemd --mem 1536 --test-timeout 900 tests/integration/systemd/slurm_farm.sh
# 1. `srun -N2 --ntasks-per-node=1 memguard --tasks ... --joblog sweep.log` completes every line exactly
#    once, on both nodes: each memguard knows its rank (SLURM_PROCID, SLURM_STEP_NUM_TASKS), writes
#    sweep.log.<rank> and claims lines in sweep.log.claims/<job>.<step>; memguard report merges them;
# 2. a sweep scancel'ed halfway, then a new job with --resume-failed: every line's work completed
#    exactly once, the lines completed before not run again;
# 3. one memguard in the batch script of a -N2 job, no srun of ours: each task a Slurm step, spread over
#    both nodes, every line once, one joblog whose Host column names the node;
# 4. the same scancel'ed halfway: nothing of it (process or cgroup) left on either node; a new job with
#    --resume-failed completes the rest exactly once.
# Both "nodes" share the guest's kernel and filesystem, as the job's directory on a cluster
# filesystem would be shared; NFS itself and pbsdsh are not tested (docs/sweeps.md).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=slurm_lib.sh
. "$(dirname "$0")/slurm_lib.sh"

need_mib=1400
total_mib=$(($(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) / 1024))
[ "$total_mib" -ge "$need_mib" ] || fail "the guest has ${total_mib} MiB, this test needs ${need_mib}: --mem 1536"
install -m 0755 "$memguard" /usr/local/bin/memguard

SLURM_NODES=2 slurm_up
trap 'slurm_down; kill_recorded' EXIT
home=$(getent passwd "$slurm_user" | cut -d: -f6)

# sweep N SECONDS [MEMGUARD-ARGS...]: a job script of N lines, each noting its start, sleeping, then
# noting its completion with the node it ran on.
sweep() {
	local n=$1 secs=$2
	shift 2
	seq 1 "$n" | sed 's/^/line-/' >"$home/list"
	chown "$slurm_user" "$home/list"
	cat >"$work/sweep.sh" <<-EOF
		#!/bin/bash
		cd "$home"
		srun memguard -n 2 --grace 2s --tasks list --joblog sweep.log $* -- \\
			sh -c 'echo "\$0" >>started; sleep $secs; echo "\$0 \$SLURMD_NODENAME" >>completed' {}
	EOF
}
reset_files() {
	rm -rf "$home"/sweep.log* "$home/started" "$home/completed"
	runuser -u "$slurm_user" -- touch "$home/started" "$home/completed"
}

# 1. Every line once, on both nodes.
reset_files
sweep 12 1
id=$(slurm_submit "$work/sweep.sh" -N 2 --ntasks-per-node=1 --mem=300M)
slurm_wait_end "$id"
out=$(slurm_job_out "$id")
cat "$out"
slurm_assert_eq "$(slurm_field "$id" JobState)" COMPLETED "job $id state"
slurm_assert_eq "$(wc -l <"$home/completed")" 12 "lines completed"
slurm_assert_eq "$(cut -d' ' -f1 "$home/completed" | sort -u | wc -l)" 12 "distinct lines completed"
on1=$(awk '$2 == "node1"' "$home/completed" | wc -l)
on2=$(awk '$2 == "node2"' "$home/completed" | wc -l)
note "node1 ran $on1 lines, node2 $on2"
[ "$on1" -ge 1 ] && [ "$on2" -ge 1 ] || slurm_fail "one node ran every line ($on1 and $on2)"
[ -s "$home/sweep.log.0" ] && [ -s "$home/sweep.log.1" ] || slurm_fail "no joblog per rank: $(ls "$home")"
grep -q "node 0 of 2 (SLURM_PROCID)" "$out" || slurm_fail "rank 0 did not say it is one of two"
claims=$(find "$home/sweep.log.claims" -mindepth 2 -type f | wc -l)
slurm_assert_eq "$claims" 12 "claims"
slurm_assert_eq "$(find "$home/sweep.log.claims" -mindepth 1 -maxdepth 1 -type d -name "$id.*" | wc -l)" 1 \
	"the run's claim folder, named by job and step"
(cd "$home" && memguard report sweep.log.0 sweep.log.1) >"$work/report" || { cat "$work/report"; slurm_fail "memguard report"; }
cat "$work/report"
grep -q "12 tasks in 2 joblogs: 12 done, 0 failed" "$work/report" || slurm_fail "memguard report's sums"
slurm_assert_gone "$id"

# cancel_and_resume MAKE SCRIPT N SECS WAIT: a sweep of N lines of SECS each (MAKE writes SCRIPT)
# scancel'ed once WAIT lines are completed, then resumed with --resume-failed in a new job: every line
# completed exactly once, those completed before the scancel not started again, nothing of the first
# job (process or cgroup) left on either node.
cancel_and_resume() {
	local make=$1 script=$2 n=$3 secs=$4 want=$5 id id2 i done1 c
	reset_files
	"$make" "$n" "$secs"
	id=$(slurm_submit "$work/$script" -N 2 --ntasks-per-node=1 --mem=300M)
	slurm_wait_state "$id" RUNNING
	for ((i = 0; i < 180; i++)); do
		[ "$(wc -l <"$home/completed")" -ge "$want" ] && break
		sleep 1
	done
	[ "$(wc -l <"$home/completed")" -ge "$want" ] || slurm_fail "$want lines were not completed within 180 s"
	runuser -u "$slurm_user" -- scancel "$id"
	slurm_wait_end "$id"
	cat "$(slurm_job_out "$id")"
	done1=$(wc -l <"$home/completed")
	note "job $id ($script) completed $done1 of $n lines before scancel"
	[ "$done1" -lt "$n" ] || slurm_fail "every line completed before scancel"
	slurm_assert_gone "$id"

	"$make" "$n" "$secs" --resume-failed
	id2=$(slurm_submit "$work/$script" -N 2 --ntasks-per-node=1 --mem=300M)
	slurm_wait_end "$id2"
	cat "$(slurm_job_out "$id2")"
	slurm_assert_eq "$(slurm_field "$id2" JobState)" COMPLETED "resumed job $id2 state"
	slurm_assert_eq "$(cut -d' ' -f1 "$home/completed" | sort | uniq -d | wc -l)" 0 "lines completed twice"
	slurm_assert_eq "$(cut -d' ' -f1 "$home/completed" | sort -u | wc -l)" "$n" "lines completed after the resume"
	for c in $(head -n "$done1" "$home/completed" | cut -d' ' -f1); do
		slurm_assert_eq "$(grep -cx "$c" "$home/started")" 1 "$c, completed before scancel, started"
	done
	slurm_assert_gone "$id2"
}

# 2. scancel halfway, then a resume in a new job.
cancel_and_resume sweep sweep.sh 16 4 4
(cd "$home" && memguard report sweep.log.0 sweep.log.1) >"$work/report" || true
cat "$work/report"
grep -q "16 tasks in 2 joblogs: 16 done, 0 failed" "$work/report" || slurm_fail "memguard report after the resume"

# 3. One memguard, no srun: each task a step on either node.
# steps N SECONDS [MEMGUARD-ARGS...]: the job script, memguard exec'd in it.
steps() {
	local n=$1 secs=$2
	shift 2
	seq 1 "$n" | sed 's/^/line-/' >"$home/list"
	chown "$slurm_user" "$home/list"
	cat >"$work/steps.sh" <<-EOF
		#!/bin/bash
		cd "$home"
		exec memguard -n 2 --grace 2s --tasks list --joblog steps.log --report steps.json $* -- \\
			sh -c 'echo "\$0" >>started; sleep $secs; echo "\$0 \$SLURMD_NODENAME" >>completed' {}
	EOF
}
reset_files
rm -f "$home"/steps.log "$home"/steps.json
steps 12 1
id=$(slurm_submit "$work/steps.sh" -N 2 --ntasks-per-node=1 --mem=300M)
slurm_wait_end "$id"
out=$(slurm_job_out "$id")
cat "$out"
cat "$home/steps.log"
slurm_assert_eq "$(slurm_field "$id" JobState)" COMPLETED "job $id state"
grep -q "steps mode (Slurm job $id, each task a job step of 1 CPU with --mem at its share, on every node of the job)" \
	"$out" || slurm_fail "job $id: the mode line does not say steps on every node"
slurm_assert_eq "$(wc -l <"$home/completed")" 12 "lines completed"
slurm_assert_eq "$(cut -d' ' -f1 "$home/completed" | sort -u | wc -l)" 12 "distinct lines completed"
on1=$(awk '$2 == "node1"' "$home/completed" | wc -l)
on2=$(awk '$2 == "node2"' "$home/completed" | wc -l)
note "one memguard, steps: node1 ran $on1 lines, node2 $on2"
[ "$on1" -ge 1 ] && [ "$on2" -ge 1 ] || slurm_fail "one node ran every line ($on1 and $on2)"
hosts=$(awk -F'\t' 'NR > 1 { print $2 }' "$home/steps.log" | sort | uniq -c | tr -s ' ' | tr '\n' ',')
note "the joblog's Host column: $hosts"
slurm_assert_eq "$(awk -F'\t' 'NR > 1 { print $2 }' "$home/steps.log" | sort -u | tr '\n' ' ')" "node1 node2 " \
	"the joblog's hosts"
# The Host column says where each ran, as the task itself saw it.
while read -r line node; do
	awk -F'\t' -v l="$line" -v n="$node" '$NF ~ (" " l "$") && $2 != n { bad = 1 } END { exit bad }' \
		"$home/steps.log" || slurm_fail "$line ran on $node, but the joblog says otherwise"
done <"$home/completed"
[ ! -e "$home/steps.log.0" ] || slurm_fail "one memguard wrote per-rank joblogs"
slurm_assert_gone "$id"

# 4. scancel halfway, then a resume in a new job.
rm -f "$home"/steps.log "$home"/steps.json
cancel_and_resume steps steps.sh 10 6 3
