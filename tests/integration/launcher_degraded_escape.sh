#!/usr/bin/env bash
# Degraded mode (no cgroups, forced with --no-cgroups) follows every process a
# task starts: one that leaves with setsid and a double fork, so that neither
# its process group nor any ppid leads back to the task, still counts against
# the task's share, is killed by the RSS watchdog, and nothing of it is alive
# after memguard exits. Before, it grew to 200 MiB against a 64 MiB share,
# never killed, and outlived the run.
. "$(dirname "$0")/lib.sh"

# Whatever a failed run leaves behind must not outlive the test.
trap kill_recorded EXIT

# The hog's shell exits at once, so the hog is re-parented to memguard (a
# subreaper) before the watchdog's first look: it is found by MEMGUARD_TASK.
cat >"$work/escape.sh" <<SCRIPT
#!/bin/sh
setsid sh -c '$memhog -s 8 -d 100 -H 30000 200 & echo \$! >$work/pid.hog' </dev/null >/dev/null 2>&1
sleep 20
SCRIPT
start=$(date +%s%N)
set +e
"$memguard" -n 1 --no-cgroups --mem-per-task 64M --rlimit-as off --report "$work/r.json" -- \
	sh "$work/escape.sh" 2>"$work/err"
status=$?
set -e
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
cat "$work/err"
note "exit $status after $elapsed_ms ms"
hog=$(cat "$work/pid.hog")
assert_eq "$(json "$work/r.json" "r['mode']")" degraded "mode"
assert_contains "$work/err" "killed by memguard: RSS" "watchdog reason"
assert_eq "$status" 137 "exit status (the task killed as a whole)"
[ "$elapsed_ms" -lt 15000 ] || fail "took $elapsed_ms ms: the watchdog did not stop the escaped hog"
if alive "$hog"; then fail "the escaped hog $hog outlived memguard"; fi

# One that cannot be told apart (MEMGUARD_TASK cleared, two tasks running,
# gone from the tree before the watchdog looked) is not charged to a task,
# but it does not outlive the run either.
cat >"$work/hide.sh" <<SCRIPT
#!/bin/sh
if [ "\$MEMGUARD_TASK" = 0 ]; then
	env -u MEMGUARD_TASK setsid sh -c 'sleep 300 & echo \$! >$work/pid.hidden' </dev/null >/dev/null 2>&1
fi
sleep 2
SCRIPT
set +e
"$memguard" -n 2 --no-cgroups --mem-per-task 64M --rlimit-as off -- sh "$work/hide.sh" 2>"$work/err"
status=$?
set -e
cat "$work/err"
assert_eq "$status" 0 "exit status of two tasks that end by themselves"
hidden=$(cat "$work/pid.hidden")
if alive "$hidden"; then fail "the hidden sleep $hidden outlived memguard"; fi
