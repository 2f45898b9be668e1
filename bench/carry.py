#!/usr/bin/env python3
"""Prints a run's results followed by the records of KINDS that it did not measure, taken from the
results it replaces, each marked with the run that measured it ("measured_in": run, date, git):

    carry.py --new RUN.jsonl --old RESULTS.jsonl --kinds "idle scale"

A kind the new run measured is never carried. Records already carried keep their mark. Standard
library only.
"""
import argparse
import json
import os
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--new", required=True)
    ap.add_argument("--old", required=True)
    ap.add_argument("--kinds", default="")
    args = ap.parse_args()

    with open(args.new) as f:
        new_lines = [line for line in f if line.strip()]
    new = [json.loads(line) for line in new_lines]
    old = load(args.old) if os.path.exists(args.old) else []
    measured = {r.get("kind") for r in new}
    kinds = [k for k in args.kinds.split() if k not in measured]
    meta = next((r for r in old if r.get("kind") == "meta"), {})
    mark = {"run": meta.get("run"), "date": meta.get("date"), "git": meta.get("git")}
    out = sys.stdout
    for line in new_lines:
        out.write(line if line.endswith("\n") else line + "\n")
    for r in old:
        if r.get("kind") in kinds:
            r.setdefault("measured_in", mark)
            out.write(json.dumps(r, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
