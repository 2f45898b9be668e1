#!/usr/bin/env python3
"""The sweep scenario's figures (bench/sweep.sh), from its raw logs.

    sweep.py OUT

Reads OUT/tasks.txt and OUT/raw-REP/VARIANT/ (meta.json, attempts.log, dmesg, heartbeat.json,
sampler.json, joblog) and writes OUT/results.jsonl (one line per variant and repetition), OUT/summary.txt
and OUT/section.md, the section bench/render.py puts into docs/benchmarks.md. OUT/notes.md, when its first
line is `<!-- run: DATE -->` with OUT/date's DATE, goes at the end of the section: what a person read in
these numbers, kept only while they describe them.

Definitions (stated in the section too):
  attempt    one run of a task's command: bench/worker.c logs its start, and its end or its SIGTERM, so
             an attempt with a start and neither was killed with SIGKILL. The kernel's OOM kills are
             matched to attempts by pid in dmesg.
  finished   tasks with an attempt that ended (exit 0).
  innocent   an attempt killed (by anyone) although its task's memory fitted its share: the share being
             memguard's, (the smaller of MemTotal - 5 % - Shmem and MemAvailable - 5 % of MemTotal) / N, in
             the same guest at the variant's start. A task needing more than its share is not innocent.
  heartbeat  bench/heartbeat.c's worst lateness over the variant's run (it wakes every 100 ms).
  makespan   from the first attempt's start to the last end: the last attempt's end or the launcher's
             exit, whichever is later (and tasks left running after it, as xargs leaves them).
  ideal      the sum of each finished task's successful attempt's run time, divided by N.
Standard library only.
"""
import json
import os
import re
import statistics
import sys

import section

VARIANTS = ["memguard", "parallel", "parallel-memfree", "xargs"]
LABEL = {
    "memguard": "memguard --strict --retries 2",
    "parallel": "parallel -j 4 --retries 3",
    "parallel-memfree": "parallel -j 4 --memfree SHARE --retries 3",
    "xargs": "xargs -P 4",
}
KILLER = {
    "kernel-cgroup": "by the kernel at a cgroup's limit",
    "kernel-node": "by the kernel's OOM killer for the node",
    "sigterm": "with SIGTERM (parallel --memfree)",
    "sigkill": "with another SIGKILL",
}
GOAL_LATE_MS = 50
GOAL_RATIO = 1.25


def load_json(path, default=None):
    try:
        with open(path) as f:
            return json.loads(f.readline())
    except (OSError, ValueError):
        return default


def tasks_of(out):
    tasks = {}
    with open(os.path.join(out, "tasks.txt")) as f:
        for line in f:
            mib, secs, tag = line.split()
            tasks[tag] = {"mib": int(mib), "secs": float(secs)}
    return tasks


def attempts_of(path):
    """Attempts by pid, in the order they started: tag, start, end, term (ms; None when not logged)."""
    att = {}
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return []
    for line in lines:
        parts = line.split()
        if len(parts) != 4:
            continue
        what, tag, pid, ms = parts[0], parts[1], int(parts[2]), float(parts[3])
        if what == "start":
            att[pid] = {"tag": tag, "pid": pid, "start": ms, "end": None, "term": None}
        elif pid in att:
            att[pid][what] = ms
    return sorted(att.values(), key=lambda a: a["start"])


def kernel_kills(path):
    """pid -> "cgroup" (an OOM kill inside a memory cgroup) or "node" (the node's OOM killer)."""
    kills = {}
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return kills
    for m in re.finditer(r"(Memory cgroup out of memory|Out of memory)[^\n]*?Killed process (\d+)", text):
        kills.setdefault(int(m.group(2)), "cgroup" if m.group(1).startswith("Memory") else "node")
    return kills


def run_figures(out, rep_dir, tasks):
    meta = load_json(os.path.join(rep_dir, "meta.json"))
    if not meta:
        return None
    att = attempts_of(os.path.join(rep_dir, "attempts.log"))
    kk = kernel_kills(os.path.join(rep_dir, "dmesg"))
    hb = load_json(os.path.join(rep_dir, "heartbeat.json"), {}) or {}
    samp = load_json(os.path.join(rep_dir, "sampler.json"), {}) or {}
    n = meta["n"]
    share_mib = meta["share_kib"] / 1024
    ok_time, killed = {}, []
    for a in att:
        if a["end"] is not None:
            ok_time.setdefault(a["tag"], a["end"] - a["start"])
            continue
        a["by"] = "sigterm" if a["term"] is not None else ("kernel-" + kk[a["pid"]]) if a["pid"] in kk else "sigkill"
        a["innocent"] = tasks[a["tag"]]["mib"] < share_mib
        killed.append(a)
    stamps = [t for a in att for t in (a["end"], a["term"]) if t is not None]
    first = min((a["start"] for a in att), default=meta["launch_ms"])
    last = max(stamps + [meta["launcher_end_ms"]])
    if meta.get("orphans"):
        last = max(last, meta["all_end_ms"])
    makespan = (last - first) / 1000
    ideal = sum(ok_time.values()) / 1000 / n
    # What the budget allows at best: a task above its share holds two shares (memguard's retry), so its
    # run time counts twice against the N shares.
    ideal_budget = sum(t * (2 if tasks[g]["mib"] >= share_mib else 1) for g, t in ok_time.items()) / 1000 / n
    by = {}
    for a in killed:
        by[a["by"]] = by.get(a["by"], 0) + 1
    # memguard's retries: the time after the last first attempt of a task that fitted its share ended.
    return {
        "variant": meta["variant"],
        "rep": meta["rep"],
        "n": n,
        "tasks": len(tasks),
        "attempts": len(att),
        "finished": len(ok_time),
        "innocent_killed": sum(a["innocent"] for a in killed),
        "big_killed": sum(not a["innocent"] for a in killed),
        "killed_by": by,
        "innocent_tasks": sorted({a["tag"] for a in killed if a["innocent"]}),
        "kernel_oom_kills": len(kk),
        "heartbeat_max_late_ms": hb.get("max_late_ms"),
        "heartbeat_over_100ms": hb.get("late_over_100ms"),
        "mem_available_min_mib": samp["mem_available_min_kib"] / 1024 if samp.get("mem_available_min_kib") else None,
        "makespan_s": round(makespan, 3),
        "ideal_s": round(ideal, 3),
        "ratio": round(makespan / ideal, 3) if ideal > 0 else None,
        "ideal_budget_s": round(ideal_budget, 3),
        "ratio_budget": round(makespan / ideal_budget, 3) if ideal_budget > 0 else None,
        "share_mib": round(share_mib, 1),
        "memfree_mib": meta.get("memfree_mib"),
        "launcher_status": meta["launcher_status"],
        "deadline_hit": meta["deadline_hit"],
        "orphans": meta.get("orphans", False),
        "mem_total_kib": meta.get("mem_total_kib"),
        "kernel": meta.get("kernel"),
        "parallel_version": meta.get("parallel"),
        "xargs_version": meta.get("xargs"),
    }


def med_range(vals, fmt, unit=""):
    vals = sorted(v for v in vals if v is not None)
    if not vals:
        return "—"
    m = statistics.median(vals)
    if vals[0] == vals[-1]:
        return fmt(m) + unit
    return f"{fmt(m)}{unit} ({fmt(vals[0])}–{fmt(vals[-1])})"


def fnum(v):
    return f"{v:g}" if float(v).is_integer() else f"{v:.1f}"


def main():
    out = sys.argv[1]
    tasks = tasks_of(out)
    rows = []
    for d in sorted(os.listdir(out)):
        m = re.fullmatch(r"raw-(\d+)", d)
        if not m:
            continue
        for v in VARIANTS:
            p = os.path.join(out, d, v)
            if os.path.isdir(p):
                r = run_figures(out, p, tasks)
                if r:
                    rows.append(r)
    rows.sort(key=lambda r: (r["rep"], VARIANTS.index(r["variant"])))
    with open(os.path.join(out, "results.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    date = open(os.path.join(out, "date")).read().strip() if os.path.exists(os.path.join(out, "date")) else "?"
    git = open(os.path.join(out, "git")).read().strip() if os.path.exists(os.path.join(out, "git")) else "?"
    reps = sorted({r["rep"] for r in rows})
    variants = [v for v in VARIANTS if any(r["variant"] == v for r in rows)]
    per = {v: [r for r in rows if r["variant"] == v] for v in variants}
    ntasks = len(tasks)
    share = statistics.median(r["share_mib"] for r in rows) if rows else 0
    big = [t for t, x in tasks.items() if x["mib"] >= share]
    small_mib = [x["mib"] for x in tasks.values() if x["mib"] < share]
    small_s = [x["secs"] for x in tasks.values() if x["mib"] < share]
    memfree = sorted({r["memfree_mib"] for r in rows if r["variant"] == "parallel-memfree"})

    def med(v, k):
        vals = [r[k] for r in per[v] if r[k] is not None]
        return statistics.median(vals) if vals else None

    # -- the goals, for memguard, against the medians and run by run
    goals = []
    if "memguard" in per:
        mg = {r["rep"]: r for r in per["memguard"]}
        others = [v for v in variants if v != "memguard"]
        runs_all = sum(r["finished"] == ntasks for r in mg.values())
        fin = [r["finished"] for r in mg.values()]
        goals.append(
            (
                "every task finishes",
                runs_all == len(mg),
                f"{min(fin)}–{max(fin)} of {ntasks} finished" if min(fin) != max(fin) else f"{fin[0]} of {ntasks} finished",
                f"in {runs_all} of {len(mg)} runs",
            )
        )
        if others:
            best_v = min(others, key=lambda v: med(v, "heartbeat_max_late_ms") or float("inf"))
            best = med(best_v, "heartbeat_max_late_ms")
            mine = med("memguard", "heartbeat_max_late_ms")
            held = 0
            for rep, r in mg.items():
                o = [x["heartbeat_max_late_ms"] for x in rows if x["rep"] == rep and x["variant"] != "memguard"]
                if o and r["heartbeat_max_late_ms"] <= min(o) + GOAL_LATE_MS:
                    held += 1
            goals.append(
                (
                    f"worst heartbeat ≤ the best other variant's + {GOAL_LATE_MS} ms",
                    mine is not None and best is not None and mine <= best + GOAL_LATE_MS,
                    f"median {mine:.0f} ms against {LABEL[best_v]}'s {best:.0f} ms (+{GOAL_LATE_MS}: {best + GOAL_LATE_MS:.0f} ms)",
                    f"held in {held} of {len(mg)} runs against that run's best other variant",
                )
            )
        ratio = med("memguard", "ratio")
        held = sum(r["ratio"] is not None and r["ratio"] <= GOAL_RATIO for r in mg.values())
        goals.append(
            (
                f"makespan ≤ {GOAL_RATIO} × the ideal",
                ratio is not None and ratio <= GOAL_RATIO,
                f"median {ratio:.2f} × the ideal",
                f"held in {held} of {len(mg)} runs. Against what the budget allows, the ideal with each task "
                f"above its share counted twice (its retry holds two of the four shares): "
                f"{med_range([r['ratio_budget'] for r in mg.values()], lambda x: f'{x:.2f}')} × that ideal",
            )
        )

    # -- summary.txt
    S = []
    S.append(f"sweep: {ntasks} tasks, N = 4, {len(reps)} repetition(s), {date}, memguard {git}")
    S.append(f"{'variant':18} {'finished':>12} {'innocent':>10} {'heartbeat ms':>20} {'makespan/ideal':>18} {'makespan s':>16}")
    for v in variants:
        rs = per[v]
        S.append(
            f"{v:18} {med_range([r['finished'] for r in rs], fnum):>12} "
            f"{med_range([r['innocent_killed'] for r in rs], fnum):>10} "
            f"{med_range([r['heartbeat_max_late_ms'] for r in rs], lambda x: f'{x:.0f}'):>20} "
            f"{med_range([r['ratio'] for r in rs], lambda x: f'{x:.2f}'):>18} "
            f"{med_range([r['makespan_s'] for r in rs], lambda x: f'{x:.0f}'):>16}"
        )
    for r in rows:
        S.append(
            f"  rep {r['rep']} {r['variant']:17} finished {r['finished']:2}/{r['tasks']} attempts {r['attempts']:3} "
            f"innocent {r['innocent_killed']} big {r['big_killed']} kills {r['killed_by']} hb {r['heartbeat_max_late_ms']:.0f} ms "
            f"makespan {r['makespan_s']:.1f} s ideal {r['ideal_s']:.1f} s ratio {r['ratio']} status {r['launcher_status']}"
            f"{' DEADLINE' if r['deadline_hit'] else ''}"
        )
    for name, met, figure, runs in goals:
        S.append(f"goal: {name}: {'met' if met else 'MISSED'}: {figure}, {runs}")
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write("\n".join(S) + "\n")

    # -- section.md
    L = []
    w = L.append
    w("## A sweep of uneven tasks")
    w("")
    w(
        "`bench/sweep.sh` (outside `bench/run.sh`; raw logs in `bench/results/sweep/`) runs one task list to "
        f"the end four ways, side by side: {ntasks} tasks, N = 4 at once, on the 1 GiB swapless guest. "
        f"Most tasks hold {min(small_mib)}–{max(small_mib)} MiB (their need fits the share of "
        f"{share:.0f} MiB, memguard's: (MemAvailable − 5 % of MemTotal) / 4) and compute for "
        f"{min(small_s):g}–{max(small_s):g} s; tasks {', '.join(str(int(t[1:])) for t in sorted(big))} hold "
        f"{tasks[sorted(big)[0]]['mib']} MiB, {tasks[sorted(big)[0]]['mib'] / share:.1f} shares, for "
        f"{tasks[sorted(big)[0]]['secs']:g} s (`bench/worker.c`, the task file is `bench/results/sweep/tasks.txt`). "
        "Two of the big ones beside two others outgrow the guest. Each repetition boots a fresh guest and "
        "runs the four variants in it one after the other, in an order that turns from one repetition to the "
        "next; between them the guest is cleaned as between the main benchmark's cells."
    )
    w("")
    w("| variant | command |")
    w("|---|---|")
    w(
        "| memguard | `memguard --strict -n 4 --retries 2 --tasks tasks.txt --joblog joblog -- sh -c 'exec \"$0\" $1' worker {}`: "
        "each task in its cgroup with memory.max = the share, admission by budget, a task killed at its share "
        "runs again with twice the share once that much of the budget is free |"
    )
    w("| parallel | `parallel -j 4 --retries 3 --colsep ' ' -a tasks.txt worker {1} {2} {3}` (Debian's `parallel`; "
      "three attempts in all, as memguard's two retries) |")
    mf = f"{memfree[0]}M" if len(memfree) == 1 else ("SHARE (" + "/".join(f"{m}M" for m in memfree) + ")") if memfree else "SHARE"
    w(
        f"| parallel --memfree | the same with `--memfree {mf}`, the share: a task starts only when parallel "
        "counts a share free (MemFree + Buffers + Cached + SwapCached); below half of it parallel kills its "
        "youngest task and queues it again |"
    )
    w("| xargs | `xargs -P 4 -L 1 -a tasks.txt worker` |")
    w("")
    w(
        "Definitions. An *attempt* is one run of a task's command; the worker logs its start and its end (or a "
        "SIGTERM), whoever started it, so an attempt with neither was killed with SIGKILL, and dmesg names "
        "the kernel's OOM kills by pid. *Finished*: tasks with an attempt that exited 0. *Innocent killed*: "
        "attempts killed, by anyone (the kernel, memguard, parallel's --memfree), of tasks whose memory "
        "fitted their share; a big task killed is not innocent, an innocent task killed and run again later "
        "still counts once per kill. *Worst heartbeat*: `bench/heartbeat.c`'s worst lateness (it wakes every "
        "100 ms) over the variant's run, as in the main benchmark. *Makespan*: from the first attempt's start "
        "to the last end (the last attempt's end or the launcher's exit, whichever is later). *Ideal*: the "
        "sum of each finished task's successful run time, divided by N; a task that never finished adds "
        "nothing to it."
    )
    w("")
    w(
        f"{len(reps)} repetition{'s' if len(reps) != 1 else ''} on {date[:10]} under TCG, memguard {git} "
        "(median, range in brackets):"
    )
    w("")
    w("| variant | tasks finished | innocent killed | worst heartbeat | makespan / ideal | makespan | ideal | attempts killed, all runs |")
    w("|---|---|---|---|---|---|---|---|")
    for v in variants:
        rs = per[v]
        kills = {}
        for r in rs:
            for k, c in r["killed_by"].items():
                kills[k] = kills.get(k, 0) + c
        kdesc = ", ".join(f"{c} {KILLER[k]}" for k, c in sorted(kills.items())) or "none"
        w(
            f"| {LABEL[v].replace('SHARE', mf)} | {med_range([r['finished'] for r in rs], fnum)} of {ntasks} | "
            f"{med_range([r['innocent_killed'] for r in rs], fnum)} | "
            f"{med_range([r['heartbeat_max_late_ms'] for r in rs], lambda x: f'{x:.0f}', ' ms')} | "
            f"{med_range([r['ratio'] for r in rs], lambda x: f'{x:.2f}')} | "
            f"{med_range([r['makespan_s'] for r in rs], lambda x: f'{x:.0f}', ' s')} | "
            f"{med_range([r['ideal_s'] for r in rs], lambda x: f'{x:.0f}', ' s')} | {kdesc} |"
        )
    w("")
    w("Run by run (finished, innocent killed, worst heartbeat, makespan / ideal):")
    w("")
    w("| repetition | " + " | ".join(v for v in variants) + " |")
    w("|---|" + "---|" * len(variants))
    for rep in reps:
        cells = []
        for v in variants:
            r = next((x for x in rows if x["rep"] == rep and x["variant"] == v), None)
            cells.append(
                "—" if not r else f"{r['finished']}, {r['innocent_killed']}, {r['heartbeat_max_late_ms']:.0f} ms, {r['ratio']:.2f}"
                + (" (deadline)" if r["deadline_hit"] else "")
            )
        w(f"| {rep} | " + " | ".join(cells) + " |")
    w("")
    if goals:
        w("The issue's goals for memguard, as measured:")
        w("")
        for name, met, figure, runs in goals:
            w(f"- {name}: **{'met' if met else 'missed'}**, {figure}; {runs}.")
        w("")
    section.write(out, date, L)
    return 0


if __name__ == "__main__":
    sys.exit(main())
