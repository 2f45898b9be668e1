#!/usr/bin/env bash
# A Celery pool under memguard, with Debian's celery and kombu's filesystem
# broker: 3 prefork workers (one child each) get a recycling limit from their
# task's share (CELERY_WORKER_MAX_MEMORY_PER_CHILD); a computation that fits
# finishes; the worker whose computation blows its share is the one killed,
# the summary names its task, and the 2 others keep serving. 3 workers, not
# 4: every Python process costs the TCG guest tens of seconds to start, and
# the test must stay within CI's 300 s. Without cgroups memguard gives both
# pools the same settings (checked with --dry-run, which starts no Python).
. "$(dirname "$0")/lib.sh"
trap kill_recorded EXIT

export PATH=/usr/bin:/bin:/usr/sbin:/sbin # Debian's python3, which has celery
export PYTHONPATH=$top/tests/integration/pools

# run_pool LABEL MEMGUARD-OPTIONS...: the pool, the client, then a warm
# shutdown of the workers that are left.
run_pool() {
	local label=$1 mg pid t started
	shift
	export POOL_DIR=$work/$label
	mkdir -p "$POOL_DIR"
	(cd "$POOL_DIR" && exec "$memguard" -n 3 --mem 600M --report "$POOL_DIR/r.json" "$@" -- \
		python3 -m celery -A poolapp worker --concurrency 1 --pool prefork --without-gossip --without-mingle \
		--without-heartbeat >"$POOL_DIR/workers.log" 2>"$POOL_DIR/err") &
	echo $! >"$work/pid.memguard"
	mg=$!

	set +e
	timeout 250 python3 "$top/tests/integration/pools/celery_client.py" 3 2 300 >"$POOL_DIR/client.json" \
		2>"$POOL_DIR/client.err"
	status=$?
	set -e
	started=$SECONDS
	[ "$status" = 0 ] || { tail -n 30 "$POOL_DIR/err" "$POOL_DIR/client.err"; fail "$label: the client failed ($status)"; }
	cat "$POOL_DIR/client.err" "$POOL_DIR/client.json"
	for t in 0 1; do
		pid=$(cat "$POOL_DIR/ready.$t")
		kill -TERM "$pid" 2>/dev/null || true
	done
	for _ in $(seq 300); do
		alive "$mg" || break
		sleep 0.2
	done
	alive "$mg" && { cat "$POOL_DIR/err"; fail "$label: memguard still runs 60 s after the workers were told to stop"; }
	set +e
	wait "$mg"
	status=$?
	set -e
	rm -f "$work/pid.memguard"
	note "$label: memguard ended $((SECONDS - started)) s after the client"
	grep -v '^\[\|^ \|^\s*$' "$POOL_DIR/err" || true
}

# check_pool LABEL REASON: what the client saw, what memguard reported.
check_pool() {
	local r=$work/$1/r.json c=$work/$1/client.json share want
	share=$(json "$r" "r['share_bytes']")
	# The share less 1/8 and 64 MiB for the main process, in KiB (docs/runtimes.md).
	want=$(((share - share / 8 - 64 * 1048576) / 1024))
	note "$1: share $share, per child $want KiB"
	assert_eq "$(json "$c" "sorted(r['limits'])")" "['0', '1', '2']" "$1: one worker per task"
	assert_eq "$(json "$c" "sorted(set(r['limits'].values()))")" "[$want]" "$1: every child's limit"
	assert_eq "$(json "$c" "r['fits']")" 506 "$1: a computation that fits"
	assert_eq "$(json "$c" "r['hog']")" "worker gone" "$1: the blowing computation's worker"
	assert_eq "$(json "$c" "r['left']")" "['0', '1']" "$1: the other workers stay"
	assert_eq "$(json "$c" "r['after']")" 3818 "$1: a computation after the kill"
	assert_eq "$status" 137 "$1: memguard's exit status (the killed task's)"
	assert_eq "$(json "$r" "[t['status'] for t in r['tasks']]")" "[0, 0, 137]" "$1: task statuses"
	assert_contains "$work/$1/err" "$2" "$1: the summary says why task 2 died"
	assert_contains "$work/$1/err" "2 succeeded, 1 failed" "$1: summary totals"
}

run_pool cgroup
check_pool cgroup "share exceeded"
assert_eq "$(json "$work/cgroup/r.json" "r['mode']")" cgroup "mode"
assert_eq "$(json "$work/cgroup/r.json" "r['tasks'][2]['oom_kills'] >= 1")" True "the victim's OOM kill counted"
assert_no_leftover

# Degraded mode: the same settings from the share, 150 MiB here: Dask's
# limit in bytes, Celery's per child (150 MiB - 1/8 - 64 MiB) in KiB; and no
# RLIMIT_AS for either.
"$memguard" -n 3 --mem 450M --no-cgroups --dry-run --explain -- \
	dask worker tcp://127.0.0.1:8786 --nworkers 1 --nthreads 1 --no-nanny 2>"$work/explain"
cat "$work/explain"
assert_contains "$work/explain" "share per task  *150MiB" "degraded: the share"
assert_contains "$work/explain" "worker pool  *dask, appended --memory-limit=157286400" "degraded: Dask's limit"
assert_contains "$work/explain" "RLIMIT_AS  *not set" "degraded: no RLIMIT_AS for Dask"
"$memguard" -n 3 --mem 450M --no-cgroups --dry-run --explain -- \
	python3 -m celery -A poolapp worker --concurrency 1 2>"$work/explain"
cat "$work/explain"
assert_contains "$work/explain" "heap flag  *CELERY_WORKER_MAX_MEMORY_PER_CHILD=68864$" "degraded: Celery's limit"
assert_contains "$work/explain" "RLIMIT_AS  *not set" "degraded: no RLIMIT_AS for Celery"
