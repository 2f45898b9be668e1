#!/usr/bin/env python3
"""Adds the ends of every attempt of each task to the cells of a run whose sampler did not record them
(bench/sampler.c before it kept `ends`), from the run's own timelines, raw/CELL/memory.tsv:

    timeline_ends.py RUN_DIR > RESULTS.jsonl

The timeline holds each task's memory at every sample: an end is a sample at which a task that held
memory holds none. The last end is the sampler's own gone (no live process), so a task that ran once
keeps exactly the figures it had; only a retried task's earlier attempts end where the timeline says. Each cell given ends this way says so
("ends_from": "memory.tsv"); a cell without a timeline or that has ends already is left as it is. Every
other line is copied as it is. Standard library only.
"""
import json
import os
import sys

TIMELINE_NODE_COLUMNS = 7  # time, MemAvailable, MemFree, file LRUs, SReclaimable, per-CPU free, SUnreclaim


def ends_of(path, ntasks):
    ends = [[] for _ in range(ntasks)]
    held = [False] * ntasks
    with open(path) as f:
        for line in f:
            cols = line.split()
            if len(cols) != TIMELINE_NODE_COLUMNS + ntasks:
                continue
            now = int(cols[0])
            for i, kib in enumerate(cols[TIMELINE_NODE_COLUMNS:]):
                if int(kib) > 0:
                    held[i] = True
                elif held[i]:
                    held[i] = False
                    ends[i].append(now)
    return ends


def main():
    if len(sys.argv) != 2:
        print("usage: timeline_ends.py RUN_DIR > RESULTS.jsonl", file=sys.stderr)
        sys.exit(2)
    run_dir = sys.argv[1]
    with open(os.path.join(run_dir, "results.jsonl")) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            tasks = (r.get("sampler") or {}).get("tasks")
            cell = f"{r.get('variant')}-r{r.get('rep')}-{r.get('scenario')}"
            timeline = os.path.join(run_dir, "raw", cell, "memory.tsv")
            if r.get("kind") != "cell" or not tasks or any(len(t) > 5 for t in tasks) or not os.path.exists(timeline):
                sys.stdout.write(line if line.endswith("\n") else line + "\n")
                continue
            for t, e in zip(tasks, ends_of(timeline, len(tasks))):
                # The last attempt's end is the sampler's own (gone: no live process), which can come a
                # sample or more after its memory was: only the earlier attempts' ends need the timeline.
                gone = t[2]
                if gone:
                    e = [x for x in e[:-1] if x < gone] + [gone]
                t.append(e)
            r["ends_from"] = "memory.tsv"
            sys.stdout.write(json.dumps(r, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
