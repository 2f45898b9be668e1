#!/usr/bin/env python3
"""The benchmark on another kernel beside the main run: memguardd and earlyoom on that kernel, side by
side in one run (bench/run.sh --kernel SERIES --append ARGS --variants "earlyoom elastic"), against the
main run's memguardd (docs/benchmarks.md). Writes the Markdown section that render.py puts into
docs/benchmarks.md.

    kernels.py --results OTHER/results.jsonl --main bench/results/results.jsonl --md OTHER/section.md

Every figure comes from the raw records through render.py's own definitions; the goals of issue #37 are
stated with what was measured, met or not.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import render  # noqa: E402

# Goals: memguardd's worst heartbeat no more than earlyoom's + this, on the same kernel.
HEARTBEAT_MARGIN_MS = 50
# memguardd's idle wake-ups at most this share of earlyoom's, in the large guest.
IDLE_SHARE = 0.2


def cells_by(recs):
    by = {}
    for c in recs:
        if c.get("kind") == "cell":
            by.setdefault((c["scenario"], c["variant"]), []).append(render.cell_figures(c))
    return by


def summary(figs):
    """Median (range) of finished, innocent killed and heartbeat lateness over a cell's runs."""
    return {
        "runs": len(figs),
        "finished": render.median_spread([f["finished"] for f in figs]),
        "innocent": render.median_spread([f["innocent_killed"] for f in figs]),
        "late": render.median_spread([f["late_ms"] for f in figs]),
        "hung": sum(f["hung"] or f["timeout"] for f in figs),
        "kills": render.median_spread([f["daemon_kills"] for f in figs]),
    }


def idle_of(recs, mib):
    return {r["daemon"]: r for r in recs if r.get("kind") == "idle" and r.get("guest_mib") == mib and "died" not in r}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--main", required=True)
    ap.add_argument("--md", required=True)
    ap.add_argument("--idle-mib", type=int, default=8192)
    args = ap.parse_args()

    other, base = render.load(args.results), render.load(args.main)
    meta = next((r for r in other if r.get("kind") == "meta"), {})
    base_meta = next((r for r in base if r.get("kind") == "meta"), {})
    kernel = next((c.get("kernel") for c in other if c.get("kind") == "cell"), "?")
    base_kernel = next((c.get("kernel") for c in base if c.get("kind") == "cell"), "?")
    append = meta.get("kernel_append") or ""
    end = next((r for r in other if r.get("kind") == "end"), {})
    by, base_by = cells_by(other), cells_by(base)
    scenarios = [s for s in render.SCENARIO_ORDER if (s, "elastic") in by and (s, "earlyoom") in by]
    label = f"Linux {kernel}" + (f" with `{append}`" if append else "")

    L = []
    w = L.append
    w(f"## Another kernel: {label}")
    w("")
    w(
        f"`bench/run.sh --kernel {meta.get('kernel_series', '?')}"
        + (f" --append {append}" if append else "")
        + ' --variants "earlyoom elastic" --no-costs --idle-mem '
        + f'{args.idle_mib}` (run {meta.get("run", "?")}, memguard {meta.get("git", "?")}, '
        + f'{meta.get("reps", "?")} repetition{"" if meta.get("reps") == 1 else "s"}, {round(end.get("seconds", 0) / 60)} minutes): the same '
        "scenarios, guests and definitions as above, on Debian 11's kernel"
        + (", booted without PSI as RHEL 9 boots by default (no /proc/pressure: memguardd decides on "
           "MemAvailable and its fall, polled)" if "psi=0" in append else "")
        + f". memguardd and earlyoom ran side by side in this one run; the last column is memguardd in "
        f"the main run above (Linux {base_kernel}, run {base_meta.get('run', '?')}). Its raw records are "
        f"in `{os.path.relpath(os.path.dirname(os.path.abspath(args.results)), os.path.dirname(os.path.dirname(os.path.abspath(__file__))))}/`."
    )
    w("")
    w(
        "| scenario | earlyoom: finished | innocent killed | heartbeat late (ms) "
        "| **memguardd**: finished | innocent killed | heartbeat late (ms) "
        "| kills "
        f"| memguardd on {'.'.join(base_kernel.split('.')[:2])}: finished | innocent killed | kills |"
    )
    w("|---|---|---|---|---|---|---|---|---|---|---|")
    misses_hb, misses_count, worst = [], [], []
    for s in scenarios:
        e, m = summary(by[(s, "earlyoom")]), summary(by[(s, "elastic")])
        b = summary(base_by[(s, "elastic")]) if (s, "elastic") in base_by else None
        n = next(c["n"] for c in other if c.get("kind") == "cell" and c["scenario"] == s)
        w(
            f"| {s} | {render.fmt_count(e['finished'], n)} | {render.fmt_count(e['innocent'])} | "
            f"{render.fmt(e['late'], digits=0)} | {render.fmt_count(m['finished'], n)} | "
            f"{render.fmt_count(m['innocent'])} | {render.fmt(m['late'], digits=0)} | {render.fmt_count(m['kills'])} | "
            + (f"{render.fmt_count(b['finished'], n)} | {render.fmt_count(b['innocent'])} | {render.fmt_count(b['kills'])} |"
               if b else "— | — | — |")
        )
        if e["late"] and m["late"]:
            worst.append((s, m["late"][0], e["late"][0]))
            if m["late"][0] > e["late"][0] + HEARTBEAT_MARGIN_MS:
                misses_hb.append(f"{s} ({m['late'][0]:.0f} ms against earlyoom's {e['late'][0]:.0f} ms)")
        if b and (m["finished"] is None or b["finished"] is None or m["finished"][0] != b["finished"][0]
                  or m["innocent"][0] != b["innocent"][0]):
            why = ""
            if m["kills"] and b["kills"] and m["kills"][0] == b["kills"][0] and m["finished"][0] > b["finished"][0]:
                # Killed as often, yet more finished: the launcher ran the killed task again (--retries).
                why = (f": memguardd killed as often on both kernels ({m['kills'][0]:g}), and here the task it "
                       "killed ran again with a larger share and finished (the launcher's --retries, default 2, "
                       f"which the main run's memguard {base_meta.get('git', '?')} did not have)")
            misses_count.append(
                f"{s} (finished {render.fmt_count(m['finished'], n)} against {render.fmt_count(b['finished'], n)}, "
                f"innocent killed {render.fmt_count(m['innocent'])} against {render.fmt_count(b['innocent'])}{why})"
            )
    w("")
    w(
        "Kills are memguardd's kill decisions per run (its kill log). Goals (issue #37), compared on the "
        "medians over the repetitions:"
    )
    if misses_hb:
        w(f"- heartbeat no more than earlyoom's + {HEARTBEAT_MARGIN_MS} ms in every scenario: **missed** in "
          + "; ".join(misses_hb) + ".")
    else:
        gap = max((m - e for _, m, e in worst), default=0)
        w(f"- heartbeat no more than earlyoom's + {HEARTBEAT_MARGIN_MS} ms in every scenario: **met** (the "
          f"largest gap {gap:+.0f} ms).")
    if misses_count:
        w("- finished and innocent killed equal to the main run's memguardd in every scenario: **missed** in "
          + "; ".join(misses_count) + ".")
    else:
        w("- finished and innocent killed equal to the main run's memguardd in every scenario: **met**.")

    idle, base_idle = idle_of(other, args.idle_mib), idle_of(base, args.idle_mib)
    if "memguardd" in idle and "earlyoom" in idle:
        w("")
        w(
            f"Idle, in a {args.idle_mib} MiB guest for {idle['memguardd'].get('minutes', '?')} minutes "
            "(bench/idle.sh, as in \"Daemons on an idle node\"), beside the main run's figures:"
        )
        w("")
        w("| kernel | daemon | wake-ups (voluntary switches) | CPU seconds | Anonymous avg (MiB) |")
        w("|---|---|---|---|---|")
        for name, rows in ((label, idle), (f"Linux {base_kernel}, PSI", base_idle)):
            for d in ("memguardd", "earlyoom"):
                if d in rows:
                    r = rows[d]
                    w(f"| {name} | {d} | {r['voluntary_ctxt_switches']} | {r['cpu_s']:.2f} | "
                      f"{r['rss_anon_avg_kib'] / 1024:.1f} |")
        m, e = idle["memguardd"]["voluntary_ctxt_switches"], idle["earlyoom"]["voluntary_ctxt_switches"]
        ratio = m / e if e else float("inf")
        w("")
        w(f"- idle wake-ups at most {IDLE_SHARE:g} of earlyoom's on the same kernel: "
          + ("**met**" if ratio <= IDLE_SHARE else "**missed**")
          + f" ({m} against {e}, {ratio:.3f}).")
    with open(args.md, "w") as f:
        f.write("\n".join(L) + "\n")


if __name__ == "__main__":
    main()
