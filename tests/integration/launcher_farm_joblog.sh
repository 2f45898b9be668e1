#!/usr/bin/env bash
# The sweep's bugs found in issue 47's trial, each reproduced as it was
# found, and what memguard does now:
#   B1  a joblog whose last line was cut off: the resume mends it before it
#       appends, so the next resume and memguard report read it (before: the
#       next line was appended onto the cut one, and the second resume failed
#       with exit 125, "Exitval or Signal is not a number");
#   B2  a results folder the user cannot write: an error before any task
#       starts (before: every task "not_started", and --resume then skipped
#       them all); a joblog's not_started tasks run on --resume;
#   lock: two memguards on one joblog: the second refuses (before: every
#       task ran twice without a word);
#   control bytes of a task line reach neither the summary nor the joblog
#       raw;
#   one numbering: the summary, the warnings, the joblog, --results and the
#       report count a task from 1;
#   a run stopped by SIGTERM exits 143, whatever its tasks did.
# Runs on the host through ctest (degraded: no cgroup, no memory used) and in
# the VM (cgroup mode), so base.sh: lib.sh insists on cgroup v2.
# shellcheck disable=SC2016,SC2154 # the tasks' $VARIABLES; the trap's own loop
. "$(dirname "${BASH_SOURCE[0]}")/base.sh"
W=$work
trap 'for f in "$W"/pid.*; do [ -s "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null || true; done; rm -rf "$W"' EXIT
memguard_here
[ "$(id -u)" -eq 0 ] || fail "needs root (to run memguard as nobody)"
command -v setpriv >/dev/null || fail "setpriv (util-linux) is missing"
header=$'Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tShare\tPeak\tOOMKills\tOutcome\tAttempt\tCommand'
chmod 755 "$W"

note "B1: a joblog whose last line was cut off"
printf 'a\nb\nc\n' >"$W/abc"
{
	echo "$header"
	printf '1\th\t1.0\t1.0\t0\t0\t0\t0\t1048576\t-\t0\tok\t1\techo a\n'
	printf '2\th\t1.0\t1.0\t0\t0\t0\t0\t1048576\t-\t0\tok\t1\techo' # a node died here
} >"$W/cut.log"
"${mg[@]}" -n 1 --tasks "$W/abc" --joblog "$W/cut.log" --resume -- echo {} >"$W/out1" 2>"$W/err1" ||
	{ cat "$W/err1"; fail "B1: the first resume failed"; }
assert_contains "$W/err1" "ended in a line cut off" "B1: the mend is said"
assert_eq "$(cat "$W/out1")" $'b\nc' "B1: the first resume ran the cut task and the new one"
status=0
"${mg[@]}" -n 1 --tasks "$W/abc" --joblog "$W/cut.log" --resume -- echo {} >"$W/out2" 2>"$W/err2" || status=$?
cat "$W/err2"
assert_eq "$status" 0 "B1: the second resume's exit status"
assert_contains "$W/err2" "nothing to run" "B1: the second resume has everything done"
status=0
"$memguard" report "$W/cut.log" >"$W/report" 2>&1 || status=$?
cat "$W/report"
assert_eq "$status" 0 "B1: memguard report of the mended joblog"
assert_eq "$(awk -F'\t' 'NR > 1 && $12 == "ok"' "$W/cut.log" | wc -l)" 3 "B1: ok lines"
# The picture of it, and one that cannot be written.
"$memguard" report --svg "$W/cut.svg" "$W/cut.log" >/dev/null || fail "memguard report --svg failed"
python3 -c 'import sys, xml.etree.ElementTree as ET; sys.exit(ET.parse(sys.argv[1]).getroot().tag != "{http://www.w3.org/2000/svg}svg")' \
	"$W/cut.svg" || fail "report --svg: not an SVG document"
status=0
"$memguard" report --svg /nonexistent/p.svg "$W/cut.log" >/dev/null 2>"$W/err-svg" || status=$?
assert_eq "$status" 125 "report --svg into a missing directory"
assert_contains "$W/err-svg" "cannot write the picture /nonexistent/p.svg: No such file" "report --svg: the reason"

note "lock: two memguards on one joblog"
"${mg[@]}" -n 1 --tasks "$W/abc" --joblog "$W/locked.log" -- sh -c 'touch '"$W"'/first.$MEMGUARD_TASK; exec sleep 30' \
	2>"$W/err-first" &
echo $! >"$W/pid.first"
for _ in $(seq 300); do [ -e "$W/first.0" ] && break; sleep 0.1; done
[ -e "$W/first.0" ] || fail "lock: the first run did not start"
status=0
"${mg[@]}" -n 1 --tasks "$W/abc" --joblog "$W/locked.log" --resume -- sh -c 'touch '"$W"'/second.$MEMGUARD_TASK' \
	2>"$W/err-second" || status=$?
cat "$W/err-second"
assert_eq "$status" 125 "lock: the second run's exit status"
assert_contains "$W/err-second" "the joblog .*locked.log is in use by another memguard" "lock: the reason"
[ "$(find "$W" -name 'second.*' | wc -l)" = 0 ] || fail "lock: the second run started a task"
kill -TERM "$(cat "$W/pid.first")"
status=0
wait "$(cat "$W/pid.first")" || status=$?
assert_eq "$status" 143 "lock: the first run, stopped by SIGTERM"

note "a run stopped by SIGTERM exits 143, whatever its tasks did"
# Task 1 fails at once with 3; task 2 ignores SIGTERM and is killed after the grace period.
printf 'x\ny\n' >"$W/xy"
"${mg[@]}" -n 2 --grace 1s --tasks "$W/xy" -- sh -c \
	'if [ {} = x ]; then exit 3; fi; trap "" TERM; touch '"$W"'/deaf; while :; do sleep 0.1; done' 2>"$W/err-stop" &
echo $! >"$W/pid.stop"
for _ in $(seq 300); do [ -e "$W/deaf" ] && break; sleep 0.1; done
sleep 0.3
kill -TERM "$(cat "$W/pid.stop")"
status=0
wait "$(cat "$W/pid.stop")" || status=$?
cat "$W/err-stop"
assert_eq "$status" 143 "stopped: 128 + SIGTERM, not the failed task's 3 or the killed one's 137"

note "B2: a results folder memguard cannot write"
mkdir "$W/ro" "$W/marks"
chmod 555 "$W/ro"
chmod 777 "$W/marks"
status=0
setpriv --reuid=65534 --regid=65534 --clear-groups -- "${mg[@]}" -n 2 --tasks "$W/abc" --results "$W/ro" \
	--joblog "$W/marks/ro.log" -- sh -c 'touch '"$W"'/marks/ran.$MEMGUARD_TASK' 2>"$W/err-ro" || status=$?
cat "$W/err-ro"
assert_eq "$status" 125 "B2: exit status"
assert_contains "$W/err-ro" "cannot write into the results folder .*ro: Permission denied" "B2: the reason"
assert_eq "$(grep -c "results folder\|output" "$W/err-ro")" 1 "B2: one line, not one per task"
[ "$(find "$W/marks" -name 'ran.*' | wc -l)" = 0 ] || fail "B2: a task ran"
[ ! -s "$W/marks/ro.log" ] || [ "$(wc -l <"$W/marks/ro.log")" -le 1 ] || fail "B2: the joblog has lines"

note "B2: tasks a joblog has as not_started run on --resume"
{
	echo "$header"
	printf '1\th\t1.0\t0.0\t0\t0\t125\t0\t1048576\t-\t0\tnot_started\t1\techo a\n'
	printf '2\th\t1.0\t1.0\t0\t0\t0\t0\t1048576\t-\t0\tok\t1\techo b\n'
	printf '3\th\t1.0\t0.0\t0\t0\t125\t0\t1048576\t-\t0\tnot_started\t1\techo c\n'
} >"$W/ns.log"
"${mg[@]}" -n 1 --tasks "$W/abc" --joblog "$W/ns.log" --resume -- echo {} >"$W/out-ns" 2>"$W/err-ns" ||
	{ cat "$W/err-ns"; fail "B2: the resume failed"; }
assert_eq "$(cat "$W/out-ns")" $'a\nc' "B2: the resume ran the tasks that never started"
assert_eq "$(awk -F'\t' '$12 == "ok" && $13 == 2 { print $1 }' "$W/ns.log" | tr '\n' ' ')" "1 3 " "B2: attempt 2 of each"

note "control bytes of a task line, and one numbering"
printf 'plain\nred \033[31mtext\033[0m and a bell \a\n' >"$W/ctl"
status=0
"${mg[@]}" -n 1 --tasks "$W/ctl" --joblog "$W/ctl.log" --results "$W/res" --report "$W/ctl.json" -- \
	sh -c 'test "$1" = plain' x {} 2>"$W/err-ctl" || status=$?
cat -v "$W/err-ctl"
assert_eq "$status" 1 "numbering: the failing task's status"
if grep -q $'\033\|\a' "$W/err-ctl" "$W/ctl.log"; then
	fail "control bytes reached the summary or the joblog raw"
fi
assert_contains "$W/err-ctl" 'red \\x1b\[31mtext\\x1b\[0m and a bell \\x07' "the summary shows them escaped"
grep -qF 'red \x1b[31mtext\x1b[0m and a bell \x07' "$W/ctl.log" || fail "the joblog escapes them"
# Task 2 failed: it is 2 in the summary's row, the joblog's Seq, --results and the report.
assert_eq "$(awk '$2 == "exit" && $3 == 1 { print $1 }' "$W/err-ctl")" 2 "numbering: the summary's row"
assert_eq "$(awk -F'\t' 'NR > 1 && $12 == "failed" { print $1 }' "$W/ctl.log")" 2 "numbering: the joblog's Seq"
[ -d "$W/res/2/1" ] || fail "numbering: --results has no 2/1"
assert_eq "$(json "$W/ctl.json" "[t['index'] for t in r['tasks'] if t['status']]")" "[2]" "numbering: the report's index"
# The same run again, resumed: the summary says task 2 again.
status=0
"${mg[@]}" -n 1 --tasks "$W/ctl" --joblog "$W/ctl.log" --resume-failed -- sh -c 'test "$1" = plain' x {} \
	2>"$W/err-ctl2" || status=$?
assert_eq "$(awk '$2 == "exit" && $3 == 1 { print $1 }' "$W/err-ctl2")" 2 "numbering: the resumed run's row"
note "all passed"
