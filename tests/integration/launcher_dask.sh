#!/usr/bin/env bash
# A Dask pool under memguard, with Debian's python3-distributed: 3 workers
# each report their task's share as their memory limit (memguard appends
# --memory-limit); a computation that fits finishes; the worker whose
# computation blows its share is the one killed, the summary names its task,
# and the 2 others keep serving. 3 workers and --no-nanny, not 4 with
# nannies: every Python process that imports distributed costs the TCG guest
# close to a minute, and the test must stay well within CI's 300 s.
. "$(dirname "$0")/lib.sh"
trap kill_recorded EXIT

# The non-systemd guest leaves loopback down; the scheduler listens on it.
ip link set lo up
export PATH=/usr/bin:/bin:/usr/sbin:/sbin # Debian's python3, which has dask
# A computation that kills its worker fails at once, instead of killing the
# next worker it is retried on (Dask's default allows 3 such failures).
export DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=0
port=8786

# Scheduler (with the client) and workers start together: a worker waits for
# its scheduler, and the imports overlap.
cd "$work"
python3 "$top/tests/integration/pools/dask_client.py" "$port" 3 2 600 >"$work/client.json" 2>"$work/client.err" &
echo $! >"$work/pid.client"
"$memguard" -n 3 --mem 600M --report "$work/r.json" -- \
	dask worker "tcp://127.0.0.1:$port" --nworkers 1 --nthreads 1 --no-nanny --no-dashboard \
	>"$work/workers.log" 2>"$work/err" &
echo $! >"$work/pid.memguard"
mg=$!

# wait_gone PID SECONDS: polls until PID has exited.
wait_gone() {
	local i
	for ((i = 0; i < $2 * 5; i++)); do
		alive "$1" || return 0
		sleep 0.2
	done
	return 1
}
client=$(cat "$work/pid.client")
wait_gone "$client" 250 || { tail -n 20 "$work/err" "$work/client.err"; fail "the client still runs after 250 s"; }
set +e
wait "$client"
status=$?
set -e
rm -f "$work/pid.client"
[ "$status" = 0 ] || { tail -n 30 "$work/err" "$work/client.err"; fail "the client failed ($status)"; }
cat "$work/client.json"

# The client shut the scheduler and the workers left down: memguard ends.
wait_gone "$mg" 30 || { cat "$work/err"; fail "memguard still runs 30 s after the shutdown"; }
set +e
wait "$mg"
status=$?
set -e
rm -f "$work/pid.memguard"
grep -v '^distributed\.\|^  \|^\s*$\|^---' "$work/err" || true

share=$(json "$work/r.json" "r['share_bytes']")
note "share $share"
assert_eq "$(json "$work/client.json" "sorted(r['limits'])")" "['0', '1', '2']" "one worker per task"
assert_eq "$(json "$work/client.json" "sorted(set(r['limits'].values()))")" "[$share]" \
	"every worker's memory_limit is its share"
assert_eq "$(json "$work/client.json" "r['fits']")" 20540 "a computation that fits"
assert_eq "$(json "$work/client.json" "r['hog']")" KilledWorker "the blowing computation"
assert_eq "$(json "$work/client.json" "r['left']")" "['0', '1']" "the other workers stay"
assert_eq "$(json "$work/client.json" "r['after']")" 146940 "a computation after the kill"

assert_eq "$status" 137 "memguard's exit status (the killed task's)"
assert_eq "$(json "$work/r.json" "[t['status'] for t in r['tasks']]")" "[0, 0, 137]" "task statuses"
assert_eq "$(json "$work/r.json" "r['tasks'][2]['oom_kills'] >= 1")" True "the victim's OOM kill counted"
assert_contains "$work/err" "share exceeded" "the summary says why task 2 died"
assert_contains "$work/err" "2 succeeded, 1 failed" "summary totals"
assert_no_leftover
