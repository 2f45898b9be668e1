#!/usr/bin/env bash
# The farm's retries, results and progress, with real limits: -n 4 in a
# 400 MiB budget (100 MiB shares). A task that needs 1.5 shares is killed at
# its share, retried with 200 MiB once that much is free, and succeeds; a
# task that grows without end is killed at 100, 200 and 400 MiB and then
# fails for good (--retries 2), and the run ends. The shares running never
# pass the budget. --results holds every attempt's output, --progress
# prints status lines. On GNU parallel's command line, a failure that a retry
# follows is none for --halt. A retry cut off by a stop resumes with its share.
. "$(dirname "$0")/lib.sh"
trap kill_recorded EXIT

MiB=$((1 << 20))
{
	for i in 1 2 3 4 5 6; do echo 40; done
	echo 150
	echo inf
} >"$work/list"
set +e
timeout 300 "$memguard" -n 4 --mem 400M --strict --retries 2 --tasks "$work/list" \
	--joblog "$work/sweep.log" --results "$work/out" --progress=1s --report "$work/r.json" -- \
	sh -c 'echo "start {} share $MEMGUARD_MEM_BYTES"; echo "to stderr {}" >&2; exec '"$memhog"' -s 10 -d 20 -H 500 {}' \
	2>"$work/err"
status=$?
set -e
cat "$work/err"
cat "$work/sweep.log"
assert_eq "$status" 137 "exit status (the runaway's SIGKILL)"
share=$(json "$work/r.json" "r['share_bytes']")
budget=$(json "$work/r.json" "r['budget_bytes']")
assert_eq "$share" $((100 * MiB)) "share"
assert_eq "$budget" $((400 * MiB)) "budget"

# The six small tasks: one attempt each, ok.
for seq in 1 2 3 4 5 6; do
	assert_eq "$(awk -F'\t' -v s=$seq 'NR > 1 && $1 == s { print $12 "/" $13 }' "$work/sweep.log")" "ok/1" "task $seq"
done
# 1.5 shares: killed at 100 MiB, then ok with 200 MiB.
assert_eq "$(awk -F'\t' 'NR > 1 && $1 == 7 { printf "%s/%s/%d ", $12, $13, $9 / 1048576 }' "$work/sweep.log")" \
	"oom_killed/1/100 ok/2/200 " "the 150 MiB task's attempts"
# Without end: 100, 200, 400 MiB, all killed, no fourth attempt.
assert_eq "$(awk -F'\t' 'NR > 1 && $1 == 8 { printf "%s/%s/%d ", $12, $13, $9 / 1048576 }' "$work/sweep.log")" \
	"oom_killed/1/100 oom_killed/2/200 oom_killed/3/400 " "the runaway's attempts"
assert_eq "$(json "$work/r.json" "[t['status'] for t in r['tasks']]")" "[0, 0, 0, 0, 0, 0, 0, 137]" "final statuses"
assert_contains "$work/err" "task 7: attempt 1 failed for memory (oom_killed); retry 1 of 2 with a 200MiB share" "retry notice"

# Never overcommitted: at every attempt's start, the shares of the attempts
# running then (the joblog's Starttime and JobRuntime) fit in the budget.
awk -F'\t' -v budget="$budget" 'NR > 1 { s[NR] = $3; e[NR] = $3 + $4; sh[NR] = $9 }
	END { for (i in s) { sum = 0; for (j in s) if (s[j] <= s[i] && e[j] > s[i]) sum += sh[j];
		if (sum > budget) { print "at " s[i] ": " sum " > " budget; bad = 1 } } exit bad }' "$work/sweep.log" ||
	fail "the shares running at once passed the budget"

# --results: one folder per attempt, each with its own output.
lines=$(($(wc -l <"$work/sweep.log") - 1))
assert_eq "$(find "$work/out" -name stdout | wc -l)" "$lines" "stdout files (one per attempt)"
assert_eq "$(find "$work/out" -name stderr | wc -l)" "$lines" "stderr files"
assert_eq "$(cat "$work/out/7/1/stdout")" "start 150 share $((100 * MiB))" "task 7 attempt 1 stdout"
assert_eq "$(cat "$work/out/7/2/stdout")" "start 150 share $((200 * MiB))" "task 7 attempt 2 stdout"
assert_eq "$(cat "$work/out/8/3/stdout")" "start inf share $((400 * MiB))" "task 8 attempt 3 stdout"
assert_eq "$(cat "$work/out/3/1/stderr")" "to stderr 40" "task 3 stderr"

# --progress: status lines while it ran (not a terminal: lines of their own).
n=$(grep -c '^memguard: [0-9]*/8 done ([0-9]* failed), [0-9]* running, [0-9]* retried' "$work/err" || true)
note "$n status lines"
[ "$n" -ge 3 ] || fail "only $n status lines from --progress=1s"
assert_contains "$work/err" "8/8 done (1 failed), 0 running, 3 retried" "the last status line"
assert_no_leftover

# The same tasks on GNU parallel's command line, under --halt now,fail=1: the
# 150 MiB task's first attempt, killed at its share, is no failure for
# --halt, since its retry follows; it succeeds, and so does the run. Its
# output is the retry's alone (grouped output: the killed attempt's is
# dropped). Only the runaway's final failure halts the run.
set +e
timeout 300 "$memguard" -j 4 --mem 400M --strict --retries 2 --halt now,fail=1 -k \
	'echo "start {} share $MEMGUARD_MEM_BYTES"; exec '"$memhog"' -s 10 -d 20 -H 500 {}' \
	::: 40 40 150 40 >"$work/halt.out" 2>"$work/halt.err"
status=$?
set -e
cat "$work/halt.err"
assert_eq "$status" 0 "--halt now,fail=1: a retried memory failure does not halt the run"
assert_eq "$(cat "$work/halt.out")" "start 40 share $((100 * MiB))
start 40 share $((100 * MiB))
start 150 share $((200 * MiB))
start 40 share $((100 * MiB))" "the output, in order, the retry's for the 150 MiB task"
assert_contains "$work/halt.err" "task 3: attempt 1 failed for memory (oom_killed); retry 1 of 2" "the retry"
set +e
timeout 300 "$memguard" -j 4 --mem 400M --strict --retries 1 --halt now,fail=1 -- \
	"$memhog" -s 10 -d 20 -H 2000 {} ::: inf 40 >"$work/halt2.out" 2>"$work/halt2.err"
status=$?
set -e
cat "$work/halt2.err"
assert_eq "$status" 137 "--halt now,fail=1: the runaway's final failure halts, with its status"
assert_contains "$work/halt2.err" "task 1 ended with status 137: --halt now" "the halt said"

# B3: a memory retry a stop cut off keeps its larger share. The 150 MiB task
# is killed at its 100 MiB share; its retry with 200 MiB holds its memory
# when the job is stopped (exit 143, the retry logged interrupted); the
# resume runs it at 200 MiB, and it succeeds (main restarted it at 100 MiB).
echo 150 >"$work/one"
# The same command both times (a resume matches it); how long it holds comes from the environment.
b3_task='echo "$MEMGUARD_MEM_BYTES" >'"$work"'/b3.share; exec '"$memhog"' -s 10 -d 20 -H "$HOLD" {}'
HOLD=60000 "$memguard" -n 1 --mem-per-task 100M --mem 400M --strict --retries 2 --tasks "$work/one" \
	--joblog "$work/b3.log" -- sh -c "$b3_task" 2>"$work/b3.err" &
pid=$!
echo "$pid" >"$work/pid.b3"
wait_for 120 grep -qx $((200 * MiB)) "$work/b3.share" || fail "B3: the retry with 200 MiB did not start"
sleep 2 # it holds its 150 MiB by now
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
cat "$work/b3.err"
assert_eq "$status" 143 "B3: the stopped run"
assert_eq "$(awk -F'\t' 'NR > 1 { printf "%s/%s/%d ", $12, $13, $9 / 1048576 }' "$work/b3.log")" \
	"oom_killed/1/100 interrupted/2/200 " "B3: the attempts before the stop"
status=0
HOLD=200 timeout 300 "$memguard" -n 1 --mem-per-task 100M --mem 400M --strict --retries 2 --tasks "$work/one" \
	--joblog "$work/b3.log" --resume -- sh -c "$b3_task" 2>"$work/b3r.err" || status=$?
cat "$work/b3r.err"
cat "$work/b3.log"
assert_eq "$status" 0 "B3: the resumed retry succeeds"
assert_eq "$(awk -F'\t' 'NR > 1 && $13 == 3 { printf "%s/%d", $12, $9 / 1048576 }' "$work/b3.log")" "ok/200" \
	"B3: attempt 3 ran with the retry's 200 MiB"
assert_no_leftover
