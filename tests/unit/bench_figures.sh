#!/usr/bin/env bash
# bench/render.py's freed figures with memguard's retries: the offender's memory is freed at the first end
# of its processes after the moment measured from, not at the end of its last attempt (gone); records
# from before the sampler kept every end still give gone. bench/timeline_ends.py gives a run without
# them the same ends from its timelines, the sampler's gone last.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

mkdir -p "$W/run/raw/strict-r1-runaway"
# time, 6 node columns, then two tasks: task 1 held memory, none at 3000 (attempt 1 ends), again from
# 5000, none at 8000 (the last attempt; the sampler's gone comes a sample later, at 8100).
cat >"$W/run/raw/strict-r1-runaway/memory.tsv" <<'T'
1000 900 900 1 1 1 1 10 0
2000 500 500 1 1 1 1 10 300
3000 800 800 1 1 1 1 10 0
4000 800 800 1 1 1 1 10 0
5000 500 500 1 1 1 1 10 400
8000 800 800 1 1 1 1 10 0
T
printf '%s\n' '{"kind":"meta","run":"T"}' \
	'{"kind":"cell","variant":"strict","rep":1,"scenario":"runaway","n":2,"offender":1,"launch_ms":0,"deadline_s":60,"statuses":[0,137],"sampler":{"mem_available_low_ms":0,"tasks":[[1000,0,9000,10,1],[1000,1500,8100,400,1]]}}' \
	>"$W/run/results.jsonl"

python3 - "$top/bench" "$W" <<'PY'
import json, subprocess, sys
sys.path.insert(0, sys.argv[1])
import render

W = sys.argv[2]
out = subprocess.run([sys.executable, sys.argv[1] + "/timeline_ends.py", W + "/run"], check=True,
                     capture_output=True, text=True).stdout.splitlines()
cell = json.loads(out[1])
assert cell["ends_from"] == "memory.tsv", cell
tasks = cell["sampler"]["tasks"]
assert tasks[1][5] == [3000, 8100], f"ends of the retried task: {tasks[1][5]}"
assert tasks[0][5] == [9000], f"a task that held memory to the end: {tasks[0][5]}"
assert out[0] == '{"kind":"meta","run":"T"}', out[0]


def cell_with(ends, low=0, timeout=False, onset=1500):
    t = [1000, onset, 8100, 400, 1] + ([ends] if ends is not None else [])
    return {"n": 2, "offender": 1, "launch_ms": 0, "deadline_s": 6, "deadline_hit": timeout,
            "statuses": [0, 137], "sampler": {"mem_available_low_ms": low, "tasks": [[1000, 0, 0, 10, 1], t]}}


def figs(**kw):
    f = render.cell_figures(cell_with(**kw))
    return f["freed_s"], f["pressure_freed_s"]


# Pressure before the first end: freed when the first attempt's memory was.
assert figs(ends=[3000, 8100], low=2500) == (1.5, 0.5), figs(ends=[3000, 8100], low=2500)
# Pressure only during the retry: freed at the retry's end.
assert figs(ends=[3000, 8100], low=7000) == (1.5, 1.1), figs(ends=[3000, 8100], low=7000)
# A record from before ends were kept: gone, as before.
assert figs(ends=None, low=2500) == (6.6, 5.6), figs(ends=None, low=2500)
# An end after the deadline stopped the cell is the harness's, not a guard's (cutoff 6000).
assert figs(ends=[8100], low=2500, timeout=True) == (None, None)
assert figs(ends=[3000, 8100], low=2500, timeout=True) == (1.5, 0.5)
print("bench figures: all checks passed")
PY
