#!/usr/bin/env bash
# A CPython runaway gets MemoryError from RLIMIT_AS and exits by itself,
# before the kernel would have to kill it; its sibling is untouched.
. "$(dirname "$0")/lib.sh"

cat >"$work/runaway.py" <<'PY'
import os, sys
if os.environ["MEMGUARD_TASK"] == "0":
    print("ok")
    sys.exit(0)
hog = []
try:
    while True:
        hog.append(b"x" * (8 << 20))  # written, so it is resident
except MemoryError:
    print("MemoryError after %d MiB" % (8 * len(hog)), file=sys.stderr)
    sys.exit(3)
PY
set +e
"$memguard" -n 2 --mem 512M --report "$work/r.json" -- python3 "$work/runaway.py" 2>"$work/err"
status=$?
set -e
cat "$work/err"
assert_eq "$status" 3 "exit status (the runaway's own)"
assert_contains "$work/err" "MemoryError after" "MemoryError raised"
assert_eq "$(json "$work/r.json" "r['runtime']")" cpython "runtime detected"
assert_eq "$(json "$work/r.json" "[t['oom_kills'] for t in r['tasks']]")" "[0, 0]" "no kernel OOM kill"
assert_eq "$(json "$work/r.json" "r['tasks'][0]['status']")" 0 "sibling"
assert_no_leftover
