#!/usr/bin/env python3
"""Tasks per second as Slurm steps (bench/steps.sh): reads OUT/raw/timings.tsv and step.tsv, writes
OUT/results.json and OUT/section.md, the section bench/render.py puts into docs/benchmarks.md."""
import json
import os
import statistics
import sys

VARIANTS = [
    ("steps", "memguard, each task a step (`--backend=steps -n 2`)"),
    ("parallel-srun", "`parallel -j 2 srun --exact -n1 -c1 --mem=280M`"),
    ("local", "memguard starting the tasks itself (`--backend=degraded -n 2`)"),
]


def compare(ratio):
    """memguard's steps against another's rate, in words: ratio is the other's rate over ours."""
    if 0.8 <= ratio <= 1.25:
        return f"run about as fast as ({1 / ratio:.2f} ×)"
    return f"run {1 / ratio:.2f} × as fast as" if ratio < 1 else f"run at {1 / ratio:.2f} × the rate of"


def main(out):
    raw = os.path.join(out, "raw")
    runs = {}
    for line in open(os.path.join(raw, "timings.tsv")):
        variant, rep, tasks, secs, rc = line.split()
        runs.setdefault(variant, []).append({"rep": int(rep), "tasks": int(tasks), "seconds": float(secs),
                                             "status": int(rc)})
    step = [float(line.split()[2]) for line in open(os.path.join(raw, "step.tsv"))]
    date = open(os.path.join(raw, "date")).read().strip()
    commit = open(os.path.join(raw, "git")).read().strip()
    results = {"date": date, "commit": commit, "runs": runs, "single_step_seconds": step}
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)

    def rate(r):
        return r["tasks"] / r["seconds"]

    rows = []
    for name, words in VARIANTS:
        rs = runs.get(name, [])
        if not rs:
            sys.exit(f"steps.py: no runs of {name} in {raw}/timings.tsv")
        rates = [rate(r) for r in rs]
        failed = sum(1 for r in rs if r["status"] != 0)
        rows.append((words, statistics.median(rates), min(rates), max(rates), len(rs), failed))
    steps_median = rows[0][1]
    ntasks = runs["steps"][0]["tasks"]
    lines = [
        "## Tasks as Slurm steps",
        "",
        f"`bench/steps.sh` (raw logs in `bench/results/steps-cost/raw/`) runs {ntasks} tasks that do nothing "
        "(`true`) in one job of 2 CPUs and 600 MiB under the real Slurm 22.05 in the systemd guest, three ways, "
        f"{len(runs['steps'])} times each in turning order, on {date} ({commit}) under TCG. Tasks per second, "
        "median (range):",
        "",
        "| | tasks per second | against memguard's steps |",
        "| --- | --- | --- |",
    ]
    for words, med, lo, hi, n, failed in rows:
        note = f"; {failed} of {n} runs failed" if failed else ""
        lines.append(f"| {words} | {med:.2f} ({lo:.2f}–{hi:.2f}){note} | {med / steps_median:.2f} × |")
    lines += [
        "",
        f"One `srun --exact -n1 true` alone took {statistics.median(step):.2f} s (median of {len(step)}; "
        f"{min(step):.2f}–{max(step):.2f}): creating a step is an RPC to slurmctld and a launch by slurmd, "
        "and it is the cost of each task as a step, whoever starts it. memguard's steps "
        f"{compare(rows[1][1] / steps_median)} the sites' `parallel srun` idiom, and bring the per-task limit, the "
        "joblog, the retries and the report with them. For many tiny tasks, tasks memguard starts itself (a cgroup of its own, "
        "placed by memguardd, or degraded) are many times faster; and a job may create at most "
        "`MaxStepCount` steps (40,000 by default), so a sweep of more attempts than that needs them "
        "(docs/batch.md, \"Each task a Slurm step\").",
        "",
    ]
    with open(os.path.join(out, "section.md"), "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1])
