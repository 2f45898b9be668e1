#!/usr/bin/env bash
# One task list across "nodes": two memguards started as ranks 0 and 1 of
# one run (PMI_RANK/PMI_SIZE, as an MPI launcher sets them; Slurm's srun is
# the same with SLURM_PROCID) share one task file and one joblog name. Each
# line runs exactly once, on one of them, each writes its own joblog
# (FILE.0, FILE.1) and the claims are O_EXCL files beside it. Then a sweep
# where node 1 dies (SIGKILL) halfway: a resume on both nodes, a new run,
# runs the lines node 1 had claimed but not finished, and every line is
# done exactly once.
. "$(dirname "$0")/lib.sh"

seq 1 16 | sed 's/^/line-/' >"$work/list"
# Lines of different lengths, so the load balances: each node takes a line
# when it has room.
task='n=${0#line-}; echo "$0" >>'"$work"'/started; sleep $((n % 3)).$((n % 2 * 5)); echo "$0 $PMI_RANK" >>'"$work"'/done'
touch "$work/started" "$work/done"

two_nodes() { # RUN EXTRA-ARGS...: both nodes, in the background; pids in $work/pid.0 and .1
	local run=$1 r
	shift
	for r in 0 1; do
		PMI_RANK=$r PMI_SIZE=2 PMI_KVSNAME="$run" "$memguard" -n 2 --tasks "$work/list" \
			--joblog "$work/sweep.log" "$@" -- sh -c "$task" {} 2>"$work/err.$run.$r" &
		echo $! >"$work/pid.$r"
	done
}

two_nodes run1
wait "$(cat "$work/pid.0")" || { cat "$work/err.run1.0"; fail "node 0 failed"; }
wait "$(cat "$work/pid.1")" || { cat "$work/err.run1.1"; fail "node 1 failed"; }
cat "$work/err.run1.0" "$work/err.run1.1"
assert_contains "$work/err.run1.0" "node 0 of 2 (PMI_RANK): joblog $work/sweep.log.0" "node 0 says so"
assert_eq "$(cut -d' ' -f1 "$work/done" | sort | uniq -d | wc -l)" 0 "lines done twice"
assert_eq "$(wc -l <"$work/done")" 16 "lines done"
on0=$(awk '$2 == 0' "$work/done" | wc -l)
on1=$(awk '$2 == 1' "$work/done" | wc -l)
note "node 0 ran $on0 lines, node 1 ran $on1"
[ "$on0" -ge 1 ] && [ "$on1" -ge 1 ] || fail "one node ran everything ($on0 and $on1)"
assert_eq "$(($(wc -l <"$work/sweep.log.0") + $(wc -l <"$work/sweep.log.1") - 2))" 16 "lines in the two joblogs"
assert_eq "$(awk -F'\t' 'FNR > 1 && $12 == "ok"' "$work/sweep.log.0" | wc -l)" "$on0" "node 0's joblog"
assert_eq "$(ls "$work/sweep.log.claims/run1" | wc -l)" 16 "claims"
[ ! -e "$work/sweep.log" ] || fail "a joblog without a rank was written"
"$memguard" report "$work"/sweep.log.[01] >"$work/report" || { cat "$work/report"; fail "memguard report failed"; }
cat "$work/report"
assert_contains "$work/report" "16 tasks in 2 joblogs: 16 done, 0 failed" "memguard report's sums"

# The second sweep: node 1 dies halfway.
rm -rf "$work/sweep.log"* && : >"$work/started" && : >"$work/done"
two_nodes run2
wait_for 60 sh -c '[ $(wc -l <'"$work"'/done) -ge 5 ]' || fail "5 lines were not done within 60 s"
kill -KILL "$(cat "$work/pid.1")"
set +e
wait "$(cat "$work/pid.1")"
wait "$(cat "$work/pid.0")"
set -e
done2=$(wc -l <"$work/done")
note "$done2 lines done before node 1 died, node 0 went on alone"
lost=$(comm -23 <(ls "$work/sweep.log.claims/run2" | sort) \
	<(awk -F'\t' 'FNR > 1 { print $1 }' "$work/sweep.log.0" "$work/sweep.log.1" | sort -u) | wc -l)
note "$lost lines claimed by node 1 with no joblog line"
[ "$lost" -ge 1 ] || fail "node 1 died with no line claimed and unfinished: nothing shows"
[ "$done2" -lt 16 ] || fail "every line was done before node 1 died"

# The resume, on both nodes again, as a new run.
two_nodes run3 --resume
wait "$(cat "$work/pid.0")" || { cat "$work/err.run3.0"; fail "node 0 failed on resume"; }
wait "$(cat "$work/pid.1")" || { cat "$work/err.run3.1"; fail "node 1 failed on resume"; }
cat "$work/err.run3.0" "$work/err.run3.1"
assert_eq "$(cut -d' ' -f1 "$work/done" | sort | uniq -d | wc -l)" 0 "lines done twice after the resume"
assert_eq "$(cut -d' ' -f1 "$work/done" | sort -u | wc -l)" 16 "lines done after the resume"
assert_eq "$(awk -F'\t' 'FNR > 1 && $12 == "ok" { print $1 }' "$work/sweep.log.0" "$work/sweep.log.1" | sort | uniq -d | wc -l)" \
	0 "seqs ok twice in the joblogs"
assert_eq "$(awk -F'\t' 'FNR > 1 && $12 == "ok" { print $1 }' "$work/sweep.log.0" "$work/sweep.log.1" | sort -u | wc -l)" \
	16 "seqs ok in the joblogs"
# The next run of memguard removed what node 1's SIGKILL left behind.
assert_no_leftover
