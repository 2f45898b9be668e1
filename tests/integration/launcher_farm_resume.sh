#!/usr/bin/env bash
# The farm's joblog and resume: a sweep stopped by SIGTERM halfway and
# resumed with --resume-failed completes every line exactly once; the lines
# completed before are not run again, the interrupted ones are. SIGALRM
# prints a status line at any time. A resume with everything done runs
# nothing; a task file edited since is an error that names the joblog line.
. "$(dirname "$0")/lib.sh"

seq 1 12 | sed 's/^/case-/' >"$work/list"
# Each task notes that it started and, 1.5 s later, that it completed.
task='echo {} >>'"$work"'/started; echo $MEMGUARD_NTASKS >>'"$work"'/ntasks; sleep 1.5; echo {} >>'"$work"'/completed'
touch "$work/started" "$work/completed"

"$memguard" -n 3 --tasks "$work/list" --joblog "$work/sweep.log" -- sh -c "$task" 2>"$work/err1" &
pid=$!
echo "$pid" >"$work/pid.run1"
wait_for 60 sh -c '[ $(wc -l <'"$work"'/completed) -ge 4 ]' || fail "4 tasks did not complete within 60 s"
kill -TERM "$pid"
set +e
wait "$pid"
status=$?
set -e
cat "$work/err1"
assert_eq "$status" 143 "exit status of the stopped run (a task's SIGTERM)"
done1=$(wc -l <"$work/completed")
note "the first run completed $done1 of 12 before SIGTERM"
[ "$done1" -lt 12 ] || fail "the whole sweep completed before SIGTERM: nothing to resume"
head -1 "$work/sweep.log" | grep -q $'^Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tShare\tPeak\tOOMKills\tOutcome\tAttempt\tCommand$' ||
	fail "joblog header: $(head -1 "$work/sweep.log")"
ok1=$(awk -F'\t' 'NR > 1 && $12 == "ok"' "$work/sweep.log" | wc -l)
assert_eq "$ok1" "$done1" "ok lines in the joblog after the first run"
interrupted=$(awk -F'\t' 'NR > 1 && $12 == "interrupted"' "$work/sweep.log" | wc -l)
[ "$interrupted" -ge 1 ] || { cat "$work/sweep.log"; fail "no task logged as interrupted"; }
awk -F'\t' 'NR > 1 && $12 == "interrupted" && $8 != 15 { exit 1 }' "$work/sweep.log" ||
	fail "an interrupted task's Signal column is not 15"

# The resume, and a status line on SIGALRM while it runs.
"$memguard" -n 3 --tasks "$work/list" --joblog "$work/sweep.log" --resume-failed -- sh -c "$task" \
	2>"$work/err2" &
pid=$!
echo "$pid" >"$work/pid.run2"
wait_for 30 sh -c '[ $(wc -l <'"$work"'/started) -gt '"$((done1 + interrupted))"' ]' ||
	fail "the resume started nothing within 30 s"
kill -ALRM "$pid"
wait "$pid" || { cat "$work/err2"; fail "the resumed run failed"; }
cat "$work/err2"
assert_contains "$work/err2" "resuming from $work/sweep.log: $done1 of 12 tasks done" "resume summary"
assert_contains "$work/err2" "memguard: [0-9]*/$((12 - done1)) done (0 failed), [0-9]* running" "status line on SIGALRM"

# A resumed task still sees the whole list's size, not the resumed run's.
assert_eq "$(sort -u "$work/ntasks")" 12 "MEMGUARD_NTASKS of every task"
# Every line's work completed exactly once.
assert_eq "$(sort "$work/completed" | uniq -d | wc -l)" 0 "lines completed twice"
assert_eq "$(sort -u "$work/completed" | wc -l)" 12 "lines completed"
# The completed ones started once; each interrupted one twice.
for c in $(head -n "$done1" "$work/completed"); do
	assert_eq "$(grep -cx "$c" "$work/started")" 1 "$c, completed in the first run, started"
done
# An interrupted task may have been stopped before it noted its start.
starts=$(wc -l <"$work/started")
[ "$starts" -ge 12 ] && [ "$starts" -le $((12 + interrupted)) ] ||
	fail "$starts starts in all: expected 12 to $((12 + interrupted))"
# One ok line per seq; an interrupted seq's rerun is attempt 2.
assert_eq "$(awk -F'\t' 'NR > 1 && $12 == "ok" { print $1 }' "$work/sweep.log" | sort -n | uniq | wc -l)" 12 "seqs ok"
assert_eq "$(awk -F'\t' 'NR > 1 && $12 == "ok"' "$work/sweep.log" | wc -l)" 12 "ok lines"
awk -F'\t' 'NR > 1 && $12 == "interrupted" { i[$1] = 1 } NR > 1 && $12 == "ok" && ($1 in i) && $13 != 2 { exit 1 }' \
	"$work/sweep.log" || fail "a rerun of an interrupted task is not attempt 2"

# Everything done: nothing runs.
"$memguard" -n 3 --tasks "$work/list" --joblog "$work/sweep.log" --resume -- sh -c "$task" 2>"$work/err3" ||
	fail "a resume with nothing to do failed"
assert_contains "$work/err3" "nothing to run" "nothing to run"
assert_eq "$(wc -l <"$work/started")" "$starts" "starts after a resume of a finished sweep"

# An edited task file: the joblog's line for it is named, exit 125.
sed -i 's/^case-5$/case-5-edited/' "$work/list"
set +e
"$memguard" -n 3 --tasks "$work/list" --joblog "$work/sweep.log" --resume -- sh -c "$task" 2>"$work/err4"
status=$?
set -e
cat "$work/err4"
assert_eq "$status" 125 "exit status with an edited task file"
assert_contains "$work/err4" "joblog .*sweep.log: line [0-9]*: task 5 ran .*case-5.*the task file changed" "edited line named"
assert_no_leftover
