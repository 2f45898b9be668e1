#!/usr/bin/env python3
"""Renders the benchmark's results (JSON lines from bench/run.sh) as Markdown and an SVG plot.

    render.py --results FILE.jsonl --md OUT.md --svg OUT.svg [--svg-link HREF] [--calibration FILE.jsonl]
              [--notes NOTES.md] [--sections DIR]

NOTES.md holds what a person read in one run's numbers. Its first line is `<!-- run: RUN -->`; it goes
into the report only when RUN is the run being rendered, so notes never describe other numbers. A line
`<!-- section: idle -->` or `<!-- section: scale -->` starts the part that goes into that section (where
those records came from, when another run measured them); the text before the first goes under "What
this run shows".

Side studies measured outside bench/run.sh (bench/storm.sh, bench/sweep.sh, ...) keep their own results
and raw logs in a folder of their own beside RESULTS (or in --sections DIR), with the section they wrote
for this page: DIR/STUDY/section.md. Each such file goes in as it is, before "Caveats": the studies of
SIDE_STUDY_ORDER first, in that order, then any others by name.

Standard library only. Every figure is derived here from the raw records, so the definitions below are
the ones the report states.
"""
import argparse
import html
import json
import math
import os
import statistics
import sys

SCENARIO_ORDER = ["runaway", "lazygc", "creep", "uneven", "fork", "sigterm", "hog", "many"]
VARIANT_ORDER = ["kernel", "earlyoom", "nohang", "careful", "strict", "elastic"]
VARIANT_LABEL = {
    "kernel": "kernel alone",
    "earlyoom": "earlyoom",
    "nohang": "nohang",
    "careful": "careful script",
    "strict": "memguard --strict",
    "elastic": "memguardd + --elastic",
}
VARIANT_COLOR = {
    "kernel": "#9e9e9e",
    "earlyoom": "#e69f00",
    "nohang": "#cc79a7",
    "careful": "#56b4e9",
    "strict": "#009e73",
    "elastic": "#0072b2",
}
MEMGUARD = ("strict", "elastic")
# Side studies' sections (DIR/STUDY/section.md) in this order; any other study follows by name.
SIDE_STUDY_ORDER = ["storm", "sweep"]
COST_METHODS = ["fork+exec parallel", "fork+exec sequential", "memguard", "systemd-run --scope"]


def load(path):
    recs = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                recs.append(json.loads(line))
            except json.JSONDecodeError as e:
                print(f"render: {path}:{n}: not JSON ({e}); skipped", file=sys.stderr)
    return recs


# --- figures of one cell ---------------------------------------------------------------------------


def cell_figures(r):
    """The figures of one run of one cell (scenario x variant x repetition)."""
    n = r["n"]
    off = r.get("offender", -1)
    f = {
        "hung": bool(r.get("hung")),
        "timeout": bool(r.get("deadline_hit")),
        "late_ms": (r.get("heartbeat") or {}).get("max_late_ms"),
        "heartbeat_killed": bool(r.get("heartbeat_killed")),
        "finished": None,
        "innocent_killed": None,
        "failed": None,
        "freed_s": None,
        "pressure_freed_s": None,
        "kernel_kills": r.get("kernel_oom_kills"),
        "daemon_kills": r.get("daemon_kill_lines"),
        "avail_min_mib": None,
        "launcher_status": r.get("launcher_status"),
        "daemon_restarts": r.get("daemon_restarts", 0),
    }
    samp = r.get("sampler") or {}
    if samp.get("mem_available_min_kib", -1) >= 0:
        f["avail_min_mib"] = samp["mem_available_min_kib"] / 1024
    if f["hung"]:
        return f
    statuses = r.get("statuses") or [None] * n
    tasks = samp.get("tasks") or [[0, 0, 0, 0, 0]] * n
    cutoff = r["launch_ms"] + r["deadline_s"] * 1000

    def stopped_by_deadline(end):
        # An end (0: none) at or after the deadline that stopped the cell: the harness's, not a guard's.
        return f["timeout"] and (end == 0 or end >= cutoff)

    def harness_killed(i):
        return stopped_by_deadline(tasks[i][2] if i < len(tasks) else 0)

    f["finished"] = sum(1 for s in statuses if s == 0)
    killed = [i for i, s in enumerate(statuses) if s is not None and s > 128 and not harness_killed(i)]
    f["innocent_killed"] = sum(1 for i in killed if i != off)
    f["failed"] = sum(1 for s in statuses if s is not None and 0 < s <= 128)
    side = r.get("side")
    low = samp.get("mem_available_low_ms") or 0
    if side:
        # The offender is the process beside the run: freed when it ended, unless the harness ended it.
        end = side.get("end_ms") or 0
        if low and end and low <= end and not side.get("stopped_by_harness"):
            f["pressure_freed_s"] = (end - low) / 1000
        f["offender_used"] = -1
        return f
    # The offender: the scenario's, else the first task a guard killed.
    if off < 0 and killed:
        off = min(killed, key=lambda i: tasks[i][2] or float("inf"))
        if statuses[off] is None or statuses[off] <= 128:
            off = -1
    if 0 <= off < len(tasks):
        _first, onset, gone = tasks[off][0], tasks[off][1], tasks[off][2]
        # Freed: the first end of the offender's processes at or after the moment measured from. A retry
        # (memguard --retries) starts it again later, so gone is the end of its last attempt; the ends of
        # every attempt came with retries (absent before: gone is the only end).
        ends = tasks[off][5] if len(tasks[off]) > 5 and tasks[off][5] else ([gone] if gone else [])

        def freed_after(t):
            end = next((e for e in ends if e >= t), None)
            if end is None or stopped_by_deadline(end):
                return None
            return (end - t) / 1000

        if onset:
            f["freed_s"] = freed_after(onset)
        # The node's pressure onset (MemAvailable below 10% of MemTotal); absent in older results.
        if low:
            f["pressure_freed_s"] = freed_after(low)
    f["offender_used"] = off
    return f


# How many of its wake-ups furthest behind bench/heartbeat.c keeps, with their times (WORST_KEPT there).
HEARTBEAT_WORST_KEPT = 32

# A cell whose guest got less than this share of QEMU's samples for WINDOW_S was held by the emulator.
EMULATOR_STALL_SHARE = 0.10


def held_before_pressure(cell, prof, window):
    """Whether the emulator held the cell for a whole window before its MemAvailable fell below 10% (or it
    never did): then the guest was not re-translating code it had itself evicted. None when not known."""
    wins = prof.get("guest_windows")
    if wins is None:
        return None
    first = next((t for t, g in wins if g < EMULATOR_STALL_SHARE), None)
    if first is None:
        return False
    samp = cell.get("sampler") or {}
    low, start = samp.get("mem_available_low_ms"), samp.get("start_ms")
    if not start:
        return None
    return not low or first + window <= (low - start) / 1000


def late_outside_early_holds(cell, prof, window):
    """The cell's worst heartbeat late once the wake-ups that were late only within the emulator's holds
    before pressure are left out: those for whose whole lateness the guest's code got under
    EMULATOR_STALL_SHARE of QEMU's samples (the mean of the windows it overlaps), and that ended before
    MemAvailable first fell below 10% of MemTotal (or it never did). Until then reclaim had not evicted the
    guest's programs: the emulator held the guest, not re-translation of code the guest threw out.
    Returns (ms, bound): bound when every wake-up the heartbeat kept was left out, and the figure is the
    least of them, an upper bound. None when the heartbeat kept no times (runs before it did)."""
    hb = cell.get("heartbeat") or {}
    worst, wins = hb.get("worst"), prof.get("guest_windows") if prof else None
    samp = cell.get("sampler") or {}
    start, low = samp.get("start_ms"), samp.get("mem_available_low_ms")
    if worst is None or wins is None or not start:
        return None
    pressure = (low - start) / 1000 if low else None

    def early_hold(at_ms, late_ms):
        a, b = (at_ms - late_ms - start) / 1000, (at_ms - start) / 1000
        over = [g for t, g in wins if t < b and t + window > a]
        before = pressure is None or b <= pressure
        return before and bool(over) and statistics.mean(over) < EMULATOR_STALL_SHARE

    kept = [late for at, late in worst if not early_hold(at, late)]
    if kept:
        return max(kept), False
    if len(worst) < HEARTBEAT_WORST_KEPT:
        return 0.0, False
    return min(late for _, late in worst), True


def emulator_section(w, cells, emulator):
    """Which cells the emulator held (bench/emulator.py), and the heartbeat without them."""
    by_cell = {(e["variant"], e["rep"], e["scenario"]): e for e in emulator}
    prof = {}  # id(cell): its profile
    for c in cells:
        e = by_cell.get((c["variant"], c.get("rep"), c["scenario"]))
        if e is not None:
            prof[id(c)] = e
    held = {k: e["guest_worst_window"] < EMULATOR_STALL_SHARE for k, e in prof.items()
            if e.get("guest_worst_window") is not None}
    if not held:
        return
    window = next((e.get("window_s") for e in emulator if e.get("window_s")), 2)
    w("### The emulator")
    w("")
    w(
        "Under TCG the guest runs only while QEMU runs the code it translated from the guest's. `bench/emulator.py` "
        "sampled QEMU on the host at 97 Hz during each cell; a cell in which the guest's code got under "
        f"{100 * EMULATOR_STALL_SHARE:.0f}% of the samples for {window:g} s was held by the emulator. A held "
        "cell's heartbeat may measure the emulator more than the guard, though it can stay prompt (as when "
        "one vCPU stays free). A guest that reclaims and refaults "
        "the pages of its own programs keeps QEMU re-translating too; raw/CELL/vmstat.before and "
        "vmstat.after tell the two apart, and so does the time of the hold: a cell held for a whole window "
        "while MemAvailable was still above 10% of MemTotal (or never fell below it) was held before any "
        "reclaim could have evicted its code. "
        f"{sum(held.values())} of {len(held)} profiled cells were held"
        + ("; rows only for scenarios with such a cell." if any(held.values()) else ".")
    )
    w("")
    if not any(held.values()):
        return
    # Runs whose heartbeat kept the times of its worst wake-ups get one more column.
    timed = any("worst" in (c.get("heartbeat") or {}) for c in cells if id(c) in prof)
    if timed:
        w(
            "The last column leaves out, in every cell, the heartbeat's wake-ups that were late only while "
            "the emulator held the guest before MemAvailable first fell below 10% of MemTotal: the guest's "
            f"code got under {100 * EMULATOR_STALL_SHARE:.0f}% of the samples over the windows the lateness "
            "overlaps, and it was over before that fall (or the fall never came). Before it, reclaim had not "
            "evicted the guest's programs, so such a hold was the emulator's own, not QEMU re-translating code "
            "the guest had thrown out. A figure with ≤ is an upper bound: every "
            f"one of the {HEARTBEAT_WORST_KEPT} wake-ups the heartbeat kept was left out."
        )
        w("")
    w(
        "| scenario | variant | cells held | guest's code, median share of QEMU's samples | worst heartbeat late, "
        "all cells (ms) | the cells not held (ms) | held while MemAvailable ≥ 10% |"
        + (" worst late, the early holds left out (ms) |" if timed else "")
    )
    w("|---|---|---|---|---|---|---|" + ("---|" if timed else ""))
    for s in SCENARIO_ORDER:
        mine = [c for c in cells if c["scenario"] == s]
        if not any(held.get(id(c)) for c in mine):
            continue
        for v in VARIANT_ORDER:
            cv = [c for c in mine if c["variant"] == v]
            if not cv:
                continue
            late = {id(c): cell_figures(c)["late_ms"] for c in cv}
            free = [late[id(c)] for c in cv if held.get(id(c)) is False]
            share = [prof[id(c)]["share"]["guest"] for c in cv if id(c) in prof]
            share_ms = median_spread([None if x is None else 100 * x for x in share])
            n_held = sum(1 for c in cv if held.get(id(c)))
            early = [held_before_pressure(c, prof[id(c)], window) for c in cv if held.get(id(c))]
            early_s = "—" if not n_held or None in early else f"{sum(early)}/{n_held}"
            row = (
                f"| {s} | {VARIANT_LABEL[v]} | {n_held}/{len(cv)} | "
                f"{fmt(share_ms, '%', digits=0)} | {fmt(median_spread(list(late.values())), digits=0)} | "
                f"{fmt(median_spread(free), digits=0)} | {early_s} |"
            )
            if timed:
                row += f" {fmt_bounded([late_outside_early_holds(c, prof.get(id(c)), window) for c in cv])} |"
            w(row)
    w("")


def fmt_bounded(figures):
    """Median (range) of (ms, bound) pairs; a bound among them marks the figure ≤. Cells without the
    heartbeat's times (None) are left out."""
    known = [f for f in figures if f is not None]
    text = fmt(median_spread([ms for ms, _ in known]), digits=0)
    return f"≤ {text}" if any(bound for _, bound in known) else text


def median_spread(values):
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return statistics.median(vals), min(vals), max(vals), len(vals)


def fmt(ms, unit="", digits=1, scale=1.0):
    if ms is None:
        return "—"
    med, lo, hi, _ = ms

    def one(v):
        v = v * scale
        if digits == 0:
            return f"{v:.0f}"
        return f"{v:.{digits}f}"

    s = one(med)
    if one(lo) != one(hi):
        s += f" ({one(lo)}–{one(hi)})"
    return s + unit


def fmt_count(ms, of=None):
    if ms is None:
        return "—"
    med, lo, hi, _ = ms
    m = f"{med:g}"
    s = m + (f"/{of}" if of is not None else "")
    if lo != hi:
        s += f" ({lo:g}–{hi:g})"
    return s


# --- SVG -------------------------------------------------------------------------------------------


def svg_plot(agg, scenarios, variants, path):
    """Three panels, one group of bars per scenario, one bar per variant (median; whiskers min-max)."""
    width, left, right = 1000, 70, 20
    panel_h, top_pad, gap = 170, 40, 60
    panels = [
        ("tasks that finished their work (% of the scenario's tasks)", "finished_pct", "lin", 100.0),
        ("worst heartbeat lateness (ms, log scale)", "late_ms", "log", None),
        ("onset to the offender's memory freed (s, log scale; none: nothing was killed)", "freed_s", "log", None),
    ]
    legend_h = 30
    height = top_pad + len(panels) * (panel_h + gap) + legend_h
    out = []
    out.append(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">'
    )
    out.append(f'<rect width="{width}" height="{height}" fill="white"/>')
    out.append(
        f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">'
        "memguard benchmark: each scenario under each variant (median of the repetitions, whiskers min–max)</text>"
    )
    group_w = (width - left - right) / max(1, len(scenarios))
    bar_w = group_w * 0.8 / max(1, len(variants))
    for p, (title, key, scale, fixed_max) in enumerate(panels):
        y0 = top_pad + p * (panel_h + gap) + 20
        y1 = y0 + panel_h
        vals = [
            v
            for s in scenarios
            for var in variants
            for v in (agg.get((s, var), {}).get(key) or (None, None, None, None))[:3]
            if v is not None
        ]
        out.append(f'<text x="{left}" y="{y0 - 8}" font-size="12" font-weight="bold">{html.escape(title)}</text>')
        if scale == "lin":
            vmax = fixed_max or (max(vals) if vals else 1)
            ticks = [0, vmax / 4, vmax / 2, 3 * vmax / 4, vmax]

            def ypos(v, vmax=vmax):
                return y1 - (v / vmax) * panel_h

        else:
            pos = [v for v in vals if v > 0]
            lo = 10 ** math.floor(math.log10(min(pos))) if pos else 0.1
            hi = 10 ** math.ceil(math.log10(max(pos))) if pos else 10
            if hi <= lo:
                hi = lo * 10
            ticks = []
            t = lo
            while t <= hi * 1.0001:
                ticks.append(t)
                t *= 10

            def ypos(v, lo=lo, hi=hi):
                v = max(v, lo)
                return y1 - (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * panel_h

        for t in ticks:
            y = ypos(t)
            out.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
            label = f"{t:g}" if t < 1e5 else f"{t:.0f}"
            out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{label}</text>')
        out.append(f'<line x1="{left}" x2="{left}" y1="{y0}" y2="{y1}" stroke="#333"/>')
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y1}" y2="{y1}" stroke="#333"/>')
        for si, s in enumerate(scenarios):
            gx = left + si * group_w + group_w * 0.1
            out.append(
                f'<text x="{left + (si + 0.5) * group_w:.1f}" y="{y1 + 14}" text-anchor="middle">{s}</text>'
            )
            for vi, var in enumerate(variants):
                a = agg.get((s, var))
                x = gx + vi * bar_w
                if not a:
                    continue
                m = a.get(key)
                if m is None:
                    out.append(
                        f'<text x="{x + bar_w / 2:.1f}" y="{y1 - 3}" text-anchor="middle" '
                        f'fill="{VARIANT_COLOR[var]}" font-size="9">–</text>'
                    )
                    continue
                med, lo, hi, _ = m
                yb = ypos(med) if (scale == "lin" or med > 0) else y1
                out.append(
                    f'<rect x="{x + 1:.1f}" y="{yb:.1f}" width="{bar_w - 2:.1f}" height="{max(0.5, y1 - yb):.1f}" '
                    f'fill="{VARIANT_COLOR[var]}"><title>{html.escape(s)} / {html.escape(VARIANT_LABEL[var])}: '
                    f"{med:g} ({lo:g}–{hi:g})</title></rect>"
                )
                if lo != hi:
                    cx = x + bar_w / 2
                    ylo = ypos(lo) if (scale == "lin" or lo > 0) else y1
                    yhi = ypos(hi) if (scale == "lin" or hi > 0) else y1
                    out.append(
                        f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{ylo:.1f}" y2="{yhi:.1f}" stroke="#222"/>'
                    )
                if a.get("hangs") or a.get("timeouts"):
                    out.append(
                        f'<text x="{x + bar_w / 2:.1f}" y="{y0 + 10}" text-anchor="middle" fill="red" '
                        f'font-size="10">H</text>'
                    )
    ly = height - legend_h + 10
    lx = left
    for var in variants:
        out.append(f'<rect x="{lx}" y="{ly}" width="12" height="12" fill="{VARIANT_COLOR[var]}"/>')
        out.append(f'<text x="{lx + 16}" y="{ly + 10}">{html.escape(VARIANT_LABEL[var])}</text>')
        lx += 30 + 7 * len(VARIANT_LABEL[var])
    out.append(f'<text x="{lx}" y="{ly + 10}" fill="red">H: a repetition hung or hit its deadline</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def read_notes(path, run):
    """The notes' parts by section ("" for the run's own), or {} when they describe another run."""
    if not path or not os.path.exists(path):
        return {}
    with open(path) as f:
        lines = f.read().splitlines()
    if not lines or lines[0].strip() != f"<!-- run: {run} -->":
        print(f"render: {path} describes another run ({lines[0].strip() if lines else ''}); left out", file=sys.stderr)
        return {}
    parts, name = {"": []}, ""
    for line in lines[1:]:
        t = line.strip()
        if t.startswith("<!-- section:") and t.endswith("-->"):
            name = t[len("<!-- section:") : -len("-->")].strip()
            parts[name] = []
        else:
            parts[name].append(line)
    return {k: "\n".join(v).strip() for k, v in parts.items() if "\n".join(v).strip()}


def measured_elsewhere(rows):
    """The sentence saying which earlier run measured these records (bench/carry.py's mark), or None."""
    marks = {json.dumps(r["measured_in"], sort_keys=True) for r in rows if r.get("measured_in")}
    if not marks:
        return None
    runs = [json.loads(m) for m in sorted(marks)]
    said = "; ".join(f"run {m.get('run')} of {str(m.get('date') or '?')[:10]}, memguard {m.get('git')}" for m in runs)
    return f"**Not re-run with the rest of this page:** these figures come from {said}."


def scale_section(w, scale, args, note=None):
    """The decision time and start-up of memguardd against the number of guarded cgroups (bench/scale.sh)."""
    w("### Decision time against the guard's size")
    w("")
    w(
        "bench/scale.sh in one guest: N cgroups memguard/run-scale/task-I, each with one sleeping process "
        "(bench/sleepers.c), and `memguardd -n -v` (a dry run: decides and logs, never kills) with "
        "available_min = 99%, so memory is always short and it decides at every poll (100 ms). A decision is "
        "timed by memguardd itself from its wake-up (the node read) to the verdict (`decided: VERDICT in X ms "
        "over N guarded cgroups`, debug level); the first 3 of each N are skipped, then those of at least 20 s "
        "(bench/run.sh --scale-seconds) are counted, longer until 10 are. Under short memory memguardd sleeps "
        "at least four times as long as its last check took: CPU % near 20 means it decided as often as that "
        "allows. Start-up: from exec to the `watching ... N guarded cgroups` line (the first rescan and the first "
        "decision), its CPU time, and the MemAvailable it took. psimon threads: the kernel's PSI poll threads in "
        "the guest (memguardd arms one trigger, the node's). CPU % and memory over the decision window. share: without the "
        "launcher's share xattr (trusted.memguard.share) memguardd reads each cgroup's and its parents' "
        "memory.max for a share at every decision (as for batch job cgroups added to the guard); with it, as "
        "for the launcher's runs, it reads the xattr."
    )
    w("")
    elsewhere = measured_elsewhere(scale)
    if elsewhere:
        w(elsewhere)
        w("")
    if note:
        w(note)
        w("")
    w(
        "| share | N | decisions | median (ms) | p90 (ms) | min–max (ms) | ms per added cgroup | start-up (s) | "
        "start-up CPU (s) | MemAvailable taken at start (MiB) | psimon threads | CPU % while short | "
        "RSS (MiB) | Anonymous (KiB) |"
    )
    w("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    base, group = None, object()
    for r in scale:
        sh = share_label(r)
        if sh != group:
            base, group = None, sh
        if not r.get("started"):
            w(f"| {sh} | {r['n']} | memguardd did not start | | | | | | | | | | | |")
            continue
        d = r.get("decisions") or {}
        med = d.get("median_ms")
        if med is None:
            per = "—"
        elif base is None:
            base, per = (r["n"], med), "—"
        else:
            per = f"{(med - base[1]) / (r['n'] - base[0]):.3f}"
        cpu = 100 * r["cpu_s"] / (r["window_s"] or 1)

        def ms(v):
            return "—" if v is None else f"{v:.2f}"

        w(
            f"| {sh} | {r['n']} | {d.get('count', 0)} | {ms(med)} | {ms(d.get('p90_ms'))} | "
            f"{ms(d.get('min_ms'))}–{ms(d.get('max_ms'))} | {per} | {r['start_ms'] / 1000:.1f} | "
            f"{r['start_cpu_s']:.2f} | {r['start_avail_drop_kib'] / 1024:.1f} | {r['psimon_threads']} | "
            f"{cpu:.1f} | {r['rss_kib'] / 1024:.1f} | {r['anon_kib']} |"
        )
    w("")
    verdicts = {}
    for r in scale:
        for v, c in ((r.get("decisions") or {}).get("verdicts") or {}).items():
            verdicts[v] = verdicts.get(v, 0) + c
    if verdicts:
        w("Verdicts of the counted decisions: " + ", ".join(f"{v} {c}" for v, c in sorted(verdicts.items())) + ".")
        w("")
    path = args.scale_svg or os.path.join(os.path.dirname(os.path.abspath(args.svg)), "benchmarks-scale.svg")
    svg_scale(scale, path)
    link = args.scale_svg_link or os.path.basename(path)
    w(f"![memguardd's decision time and start-up against the number of guarded cgroups]({link})")
    w("")


def share_label(r):
    b = r.get("share_bytes")
    return "none: memory.max" if not b else f"xattr {b / 1048576:g} MiB"


def svg_scale(scale, path):
    """Log-log: decision time (median, whiskers min–max, p90 as a tick) and start-up against N, with a
    line proportional to N through the largest N for reference."""
    width, height, left, right, top, bottom = 720, 500, 70, 20, 50, 130
    rows = [r for r in scale if r.get("started") and (r.get("decisions") or {}).get("median_ms")]
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">'
        "memguardd against the number of guarded cgroups (log-log, TCG guest)</text>",
    ]
    if not rows:
        out.append(f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle">no decisions recorded</text>')
    else:
        ns = [r["n"] for r in rows]
        vals = []
        for r in rows:
            d = r["decisions"]
            vals += [v for v in (d.get("min_ms"), d.get("max_ms"), d.get("median_ms")) if v]
            vals.append(r["start_ms"])
        xlo, xhi = 10 ** math.floor(math.log10(min(ns))), 10 ** math.ceil(math.log10(max(ns)))
        if xhi <= xlo:
            xhi = xlo * 10
        ylo = 10 ** math.floor(math.log10(min(vals)))
        yhi = 10 ** math.ceil(math.log10(max(vals)))
        if yhi <= ylo:
            yhi = ylo * 10
        x0, x1, y0, y1 = left, width - right, top, height - bottom

        def xp(v):
            return x0 + (math.log10(v) - math.log10(xlo)) / (math.log10(xhi) - math.log10(xlo)) * (x1 - x0)

        def yp(v):
            v = min(max(v, ylo), yhi)
            return y1 - (math.log10(v) - math.log10(ylo)) / (math.log10(yhi) - math.log10(ylo)) * (y1 - y0)

        t = ylo
        while t <= yhi * 1.0001:
            out.append(f'<line x1="{x0}" x2="{x1}" y1="{yp(t):.1f}" y2="{yp(t):.1f}" stroke="#ddd"/>')
            out.append(f'<text x="{x0 - 6}" y="{yp(t) + 4:.1f}" text-anchor="end">{t:g}</text>')
            t *= 10
        t = xlo
        while t <= xhi * 1.0001:
            out.append(f'<line x1="{xp(t):.1f}" x2="{xp(t):.1f}" y1="{y0}" y2="{y1}" stroke="#eee"/>')
            out.append(f'<text x="{xp(t):.1f}" y="{y1 + 16}" text-anchor="middle">{t:g}</text>')
            t *= 10
        out.append(f'<line x1="{x0}" x2="{x0}" y1="{y0}" y2="{y1}" stroke="#333"/>')
        out.append(f'<line x1="{x0}" x2="{x1}" y1="{y1}" y2="{y1}" stroke="#333"/>')
        out.append(f'<text x="{(x0 + x1) / 2}" y="{y1 + 34}" text-anchor="middle">guarded cgroups (N)</text>')
        out.append(
            f'<text x="16" y="{(y0 + y1) / 2}" text-anchor="middle" transform="rotate(-90 16 {(y0 + y1) / 2})">'
            "milliseconds</text>"
        )
        # Proportional to N through the largest N: a curve that stays above it to the left grows
        # no faster than linearly.
        last = [r for r in rows if share_label(r) == share_label(rows[-1])]
        nmax, mmax = last[-1]["n"], last[-1]["decisions"]["median_ms"]
        a, b = xlo, xhi
        out.append(
            f'<line x1="{xp(a):.1f}" y1="{yp(mmax * a / nmax):.1f}" x2="{xp(b):.1f}" y2="{yp(mmax * b / nmax):.1f}" '
            'stroke="#999" stroke-dasharray="5,4"/>'
        )
        groups = []
        for r in rows:
            if share_label(r) not in groups:
                groups.append(share_label(r))
        dec_colors = ["#1f77b4", "#2ca02c", "#9467bd"]
        start_colors = ["#d62728", "#ff7f0e", "#8c564b"]
        series = []
        for gi, g in enumerate(groups):
            series.append((f"decision, {g}", dec_colors[gi % 3], lambda r: r["decisions"]["median_ms"], g))
            series.append((f"start-up, {g}", start_colors[gi % 3], lambda r: r["start_ms"], g))
        for label, color, get, g in series:
            grows = [r for r in rows if share_label(r) == g]
            pts = " ".join(f"{xp(r['n']):.1f},{yp(get(r)):.1f}" for r in grows)
            out.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="2"/>')
            for r in grows:
                out.append(
                    f'<circle cx="{xp(r["n"]):.1f}" cy="{yp(get(r)):.1f}" r="4" fill="{color}">'
                    f"<title>N = {r['n']}: {get(r):g} ms</title></circle>"
                )
        for r in rows:
            d, cx = r["decisions"], xp(r["n"])
            color = dec_colors[groups.index(share_label(r)) % 3]
            out.append(
                f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{yp(d["min_ms"]):.1f}" y2="{yp(d["max_ms"]):.1f}" '
                f'stroke="{color}"/>'
            )
            if d.get("p90_ms"):
                out.append(
                    f'<line x1="{cx - 6:.1f}" x2="{cx + 6:.1f}" y1="{yp(d["p90_ms"]):.1f}" '
                    f'y2="{yp(d["p90_ms"]):.1f}" stroke="{color}"/>'
                )
        ly = height - 14 - 16 * ((len(series) + 1) // 2)
        for k, (label, color, _, _) in enumerate(series):
            lx, yy = left + (k % 2) * 320, ly + 16 * (k // 2)
            out.append(f'<rect x="{lx}" y="{yy - 10}" width="12" height="12" fill="{color}"/>')
            out.append(f'<text x="{lx + 16}" y="{yy}">{html.escape(label)}</text>')
        yy = ly + 16 * ((len(series) + 1) // 2)
        out.append(f'<line x1="{left}" x2="{left + 24}" y1="{yy - 4}" y2="{yy - 4}" stroke="#999" stroke-dasharray="5,4"/>')
        out.append(
            f'<text x="{left + 28}" y="{yy}">∝ N through the largest N (decision, {html.escape(groups[-1])}); '
            "whiskers min–max, tick p90</text>"
        )
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


# --- Markdown --------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--md", required=True)
    ap.add_argument("--svg", required=True)
    ap.add_argument("--svg-link", default=None)
    ap.add_argument("--calibration", default=None)
    ap.add_argument("--notes", default=None)
    ap.add_argument("--scale-svg", default=None, help="the decision-time plot (default: next to --svg)")
    ap.add_argument("--scale-svg-link", default=None)
    ap.add_argument(
        "--sections", default=None, help="where the side studies' STUDY/section.md are (default: RESULTS's folder)"
    )
    args = ap.parse_args()

    recs = load(args.results)
    meta = next((r for r in recs if r.get("kind") == "meta"), {})
    end = next((r for r in recs if r.get("kind") == "end"), {})
    cells = [r for r in recs if r.get("kind") == "cell"]
    costs = [r for r in recs if r.get("kind") == "cost"]
    idle = [r for r in recs if r.get("kind") == "idle"]
    emulator = [r for r in recs if r.get("kind") == "emulator"]
    scale = sorted(
        (r for r in recs if r.get("kind") == "scale"), key=lambda r: (r.get("share_bytes") or 0, r["n"])
    )
    calib = load(args.calibration) if args.calibration and os.path.exists(args.calibration) else []

    scenarios = [s for s in SCENARIO_ORDER if any(c["scenario"] == s for c in cells)]
    variants = [v for v in VARIANT_ORDER if any(c["variant"] == v for c in cells)]
    by = {}
    for c in cells:
        by.setdefault((c["scenario"], c["variant"]), []).append(c)
    sample = {}
    for c in cells:
        if not c.get("hung"):
            sample.setdefault(c["scenario"], c)
    kernel = next((c.get("kernel") for c in cells if c.get("kernel")), "?")
    mem_total = next((c.get("mem_total_kib") for c in cells if c.get("mem_total_kib")), None)
    recorded_low = any("mem_available_low_ms" in (c.get("sampler") or {}) for c in cells)

    agg = {}
    for key, runs in by.items():
        figs = [cell_figures(r) for r in runs]
        n = runs[0]["n"]
        a = {
            "runs": len(runs),
            "n": n,
            "hangs": sum(f["hung"] for f in figs),
            "timeouts": sum(f["timeout"] for f in figs),
            "finished": median_spread([f["finished"] for f in figs]),
            "finished_pct": median_spread([None if f["finished"] is None else 100.0 * f["finished"] / n for f in figs]),
            "innocent": median_spread([f["innocent_killed"] for f in figs]),
            "failed": median_spread([f["failed"] for f in figs]),
            "freed_s": median_spread([f["freed_s"] for f in figs]),
            "freed_count": sum(1 for f in figs if f["freed_s"] is not None),
            "pressure_freed_s": median_spread([f["pressure_freed_s"] for f in figs]),
            "pressure_count": sum(1 for f in figs if f["pressure_freed_s"] is not None),
            "late_ms": median_spread([f["late_ms"] for f in figs]),
            "kernel_kills": median_spread([f["kernel_kills"] for f in figs]),
            "daemon_kills": median_spread([f["daemon_kills"] for f in figs]),
            "avail_min": median_spread([f["avail_min_mib"] for f in figs]),
            "hb_killed": sum(f["heartbeat_killed"] for f in figs),
            "launcher_fail": sum(1 for f in figs if f["launcher_status"] == 125),
            "restarts": sum(f["daemon_restarts"] or 0 for f in figs),
        }
        agg[key] = a

    L = []
    w = L.append
    smoke = meta.get("smoke")
    w("# Benchmarks" + (" (smoke run)" if smoke else ""))
    w("")
    w(
        "<!-- Generated by bench/render.py from bench/results/results.jsonl; rerun `bench/run.sh` to measure "
        "again. Do not edit by hand. -->"
    )
    w("")
    w(
        "memguard against what a node has without it, measured in one run on the same scenarios: the kernel "
        "alone, earlyoom and nohang with their Debian defaults, a careful user's own cgroup script, the "
        "memguard launcher with strict shares, and the launcher with memguardd and elastic shares. Every "
        "cell (scenario × variant) runs in a throwaway 1 GiB swapless qemu guest with cgroup v2 "
        "(tests/vm/vm.sh) and is repeated; the table gives the median and, in parentheses, the range "
        "(min–max) over the repetitions. Nothing here is asserted: these are measurements, including where "
        "memguard loses."
    )
    w("")
    w("```sh")
    w("bench/run.sh            # everything, writes this page: about 110 minutes on 2 cores under TCG (time: below)")
    w("bench/run.sh --smoke    # runaway under the kernel alone and memguard --strict, once: about 2 minutes")
    w("bench/run.sh --help     # repetitions, subsets of scenarios and variants, skipping the costs")
    w("```")
    w("")

    # -- machine
    w("## Machine and kernel")
    w("")
    w("| | |")
    w("|---|---|")
    rows = [
        ("run", f"{meta.get('run', '?')} ({meta.get('date', '?')}), {meta.get('reps', '?')} repetitions per cell"),
        (
            "time",
            f"{end.get('seconds', 0) / 60:.0f} minutes for the whole run" if end else "not recorded (the run has no end record)",
        ),
        ("host", f"{meta.get('host_cpu', '?')}, {meta.get('host_cores', '?')} cores, Linux {meta.get('host_kernel', '?')}"),
        ("emulator", f"{meta.get('qemu', '?')}, accel {meta.get('accel', '?')} (no KVM: every guest instruction is emulated)"),
        (
            "guest",
            f"Debian 12, Linux {kernel}, 2 vCPUs, {meta.get('guest_mem_mib', 1024)} MiB"
            + (f" (MemTotal {mem_total / 1024:.1f} MiB)" if mem_total else "")
            + ", no swap, cgroup v2 (nsdelegate, memory_recursiveprot), PSI",
        ),
        (
            "software",
            f"memguard {meta.get('git', '?')}"
            + (f" with {meta['dirty_files']} uncommitted files" if meta.get("dirty_files") else "")
            + f", earlyoom {meta.get('earlyoom', '?')}, nohang {meta.get('nohang', '?')}, pypy3 {meta.get('pypy3', '?')}",
        ),
    ]
    for k, v in rows:
        w(f"| {k} | {v} |")
    w("")

    # -- variants and scenarios
    w("## Variants")
    w("")
    w("| variant | how the tasks start | what guards the node |")
    w("|---|---|---|")
    vdesc = {
        "kernel": ("`bench/plain.sh`: `CMD &` per task, then `wait`", "the kernel's OOM killer"),
        "earlyoom": (
            "as kernel",
            "`earlyoom -r 3600` (`EARLYOOM_ARGS` from `/etc/default/earlyoom`, as `earlyoom.service` runs it): "
            "SIGTERM below 10% MemAvailable, SIGKILL below 5%",
        ),
        "nohang": (
            "as kernel",
            "`nohang --monitor --config /etc/nohang/nohang.conf` (`nohang.service`): SIGTERM below 5% "
            "MemAvailable, SIGKILL below 2%; PSI checks off by default",
        ),
        "careful": (
            "`bench/careful.sh`: `mkdir` a cgroup per task, `echo` memory.max = (MemTotal − 5%)/N and "
            "memory.swap.max = 0, start each task in it",
            "the kernel's OOM killer, per cgroup",
        ),
        "strict": (
            "`memguard --strict -n N --tasks FILE -- CMD {}`",
            "memory.max = the share (memory.oom.group, heap flags such as PYPY_GC_MAX)",
        ),
        "elastic": (
            "`memguard --elastic -n N --tasks FILE -- CMD {}`",
            "memguardd (started first, as its unit would, with its defaults) fences the task furthest "
            "over its share in with memory.high when memory runs short and kills it if it keeps growing; "
            "memory.max = the whole budget",
        ),
    }
    for v in variants:
        a, b = vdesc[v]
        w(f"| **{VARIANT_LABEL[v]}** | {a} | {b} |")
    w("")
    w(
        "Daemons start once per guest, before the first cell, with oom_score_adj 0 and without the "
        "units' cgroup limits; none gets a real-time priority (memguardd's own unit would add FIFO priority "
        "1 and Nice −10). A daemon that dies is restarted before the next cell (`Restart=always`). The "
        "launcher and memguardd read one configuration file in which everything is the default except "
        "`kill_log` and `min_share = 256K`: the 32 MiB default refuses 256 tasks in a 1 GiB guest "
        "(`memguard -n 256` exits 125, \"a share of 3.6MiB per task (256 tasks) is below the minimum 32MiB\")."
    )
    w("")
    w("## Scenarios")
    w("")
    w(
        "The same commands under every variant. The share is (MemTotal − 5%)/N as the careful script computes "
        "it (memguard also keeps back Shmem: 227.3 MiB for N = 4)."
    )
    w("")
    w("| scenario | tasks | offender | what the tasks do | deadline |")
    w("|---|---|---|---|---|")
    for s in scenarios:
        c = sample.get(s) or next(c for c in cells if c["scenario"] == s)
        off = c.get("offender", -1)
        offender = "task " + str(off) if off >= 0 else "outside the run" if c.get("side") is not None else "none"
        w(
            f"| **{s}** | {c['n']} | {offender} | {c.get('desc', '')} | "
            f"{c.get('deadline_s', '?')} s |"
        )
    w("")
    w("Exact commands (`{}` is the task's line; paths shortened):")
    w("")
    w("```")
    for s in scenarios:
        c = sample.get(s)
        if not c:
            continue
        tmpl = " ".join(short(a) for a in c.get("template", []))
        params = c.get("params") or []
        w(f"{s}: {tmpl}")
        if params:
            for i, p in enumerate(params):
                w(f"    task {i}: {short(p)}")
        else:
            w(f"    tasks 0..{c['n'] - 1}")
    w("```")
    w("")
    if meta:
        w(
            f"Fixed parameters: workers compute for {meta.get('work_seconds', '?')} s; churn.py keeps "
            f"{meta.get('churn_live_mib', '?')} MiB live for {meta.get('churn_seconds', '?')} s with seeds 1–4; "
            "memhog allocates 4 MiB steps (1 MiB in many). Each cell starts from a clean guest: leftover "
            "processes killed, cgroups removed, caches dropped, memory pressure (PSI some avg10) below 1%."
        )
        w("")
    if calib:
        w("### lazygc calibration")
        w("")
        w(
            "`bench/run.sh --calibrate` runs one churn.py alone in the guest, first with PyPy's defaults "
            "(peak = VmHWM), then under memguard with the share of one of lazygc's four tasks (peak = "
            "memory.peak). lazygc needs four default peaks to outgrow MemTotal while one task fits its share "
            "with the GC capped."
        )
        w("")
        w("| LIVE_MIB | default GC: peak | 4 × peak vs MemTotal | under memguard: flag | peak | status |")
        w("|---|---|---|---|---|---|")
        lives = sorted({c["live_mib"] for c in calib})
        for lv in lives:
            d = next((c for c in calib if c["live_mib"] == lv and c["gc"] == "default"), None)
            m = next((c for c in calib if c["live_mib"] == lv and c["gc"] == "memguard"), None)
            if not d:
                continue
            tot = d["mem_total_kib"] / 1024
            w(
                f"| {lv} | {d['peak_kib'] / 1024:.0f} MiB | {4 * d['peak_kib'] / 1024:.0f} vs {tot:.0f} MiB | "
                f"{m.get('flag', '?') if m else '—'} | {m['peak_kib'] / 1024:.0f} MiB of {m.get('share', '?')} | "
                f"{m['status'] if m else '—'} |"
                if m
                else f"| {lv} | {d['peak_kib'] / 1024:.0f} MiB | {4 * d['peak_kib'] / 1024:.0f} vs {tot:.0f} MiB | — | — | — |"
            )
        w("")

    # -- figures
    w("## Results")
    w("")
    w("What each column counts, per run of a cell:")
    w("")
    w("- **finished**: tasks that exited 0, i.e. did all their work, of N.")
    w(
        "- **innocent killed**: tasks other than the scenario's offender that died by a signal before the "
        "deadline (every task is innocent in lazygc, creep, uneven, hog and many)."
    )
    w(
        "- **onset → freed**: from the first 100 ms sample (bench/sampler.c) at which the offender's "
        "process tree held more than 80% of the (MemTotal − 5%)/N share in anonymous memory to the first sample with none "
        "of its processes left, i.e. its memory freed. memguard's retries start a killed task again later: the "
        "first attempt to end after the onset counts, not the last. Where the scenario has no offender, the "
        "first task a guard killed and no retry then finished. — when nothing was killed before the deadline, or the task was killed before it "
        "reached 80% of that share (memguard's own share is about 12% smaller: it counts only what the guest has available). The median is over the runs that have a value (count in brackets when "
        "fewer than all)."
    )
    w(
        "- **pressure → freed**: from the first sample at which MemAvailable fell below 10% of MemTotal "
        "(the node's pressure onset; earlyoom's default line) to the first end of the same task's processes at "
        "or after it (a retry's, when the first attempt ended earlier). — when no attempt of the task ended "
        "after the node fell below 10% (the guard acted earlier, as strict limits do) or nothing was killed. In hog, the freed moment is when the process outside the run "
        "ended (— when the harness had to stop it). Median and count as for onset → freed."
        + ("" if recorded_low else " This run's sampler did not record the pressure onset yet: all —.")
    )
    w(
        "- **heartbeat late**: the worst lateness of bench/heartbeat.c, which wakes every 100 ms and reads "
        "/proc/loadavg, standing in for sshd and pbs_mom (an idle guest shows a few ms)."
    )
    w(
        "- **hung / timeout**: runs in which the guest stopped responding (the host's watchdog stopped "
        "it), or the tasks were still running at the scenario's deadline."
    )
    w("")
    w("### Summary per variant")
    w("")
    w(
        "Over all scenarios above: the medians of each cell added up (finished, innocent killed), the worst "
        "cell's median heartbeat lateness, the median onset → freed and pressure → freed over the cells that "
        "have one, and the runs that hung or hit their deadline."
    )
    w("")
    w(
        "| variant | finished (scenarios of ≤ 8 tasks) | finished in many | innocent killed | worst heartbeat late (ms) "
        "| onset → freed, median of cells (s) | pressure → freed, median of cells (s) | hung / timeout runs |"
    )
    w("|---|---|---|---|---|---|---|---|")
    for v in variants:
        cells_v = [agg[(s, v)] for s in scenarios if (s, v) in agg]
        small = [a for a in cells_v if a["n"] <= 8]
        big = [a for a in cells_v if a["n"] > 8]
        fin = sum(a["finished"][0] for a in small if a["finished"])
        tot = sum(a["n"] for a in small)
        many = "; ".join(f"{a['finished'][0]:g}/{a['n']}" if a["finished"] else "—" for a in big) or "—"
        inn = sum(a["innocent"][0] for a in cells_v if a["innocent"])
        late = max((a["late_ms"][0] for a in cells_v if a["late_ms"]), default=None)
        freed = [a["freed_s"][0] for a in cells_v if a["freed_s"]]
        pfreed = [a["pressure_freed_s"][0] for a in cells_v if a["pressure_freed_s"]]
        hung = sum(a["hangs"] + a["timeouts"] for a in cells_v)
        runs = sum(a["runs"] for a in cells_v)
        name = f"**{VARIANT_LABEL[v]}**" if v in MEMGUARD else VARIANT_LABEL[v]
        w(
            f"| {name} | {fin:g}/{tot} | {many} | {inn:g} | {'—' if late is None else f'{late:.0f}'} | "
            f"{f'{statistics.median(freed):.1f}' if freed else '—'} | "
            f"{f'{statistics.median(pfreed):.1f}' if pfreed else '—'} | {hung}/{runs} |"
        )
    w("")
    w("### Per cell")
    w("")
    w(
        "| scenario | variant | finished | innocent killed | onset → freed (s) | pressure → freed (s) "
        "| heartbeat late (ms) | hung / timeout | runs |"
    )
    w("|---|---|---|---|---|---|---|---|---|")
    for s in scenarios:
        for v in variants:
            a = agg.get((s, v))
            if not a:
                continue
            freed = fmt(a["freed_s"], digits=1)
            if a["freed_s"] and a["freed_count"] < a["runs"]:
                freed += f" [{a['freed_count']}]"
            pfreed = fmt(a["pressure_freed_s"], digits=1)
            if a["pressure_freed_s"] and a["pressure_count"] < a["runs"]:
                pfreed += f" [{a['pressure_count']}]"
            ht = []
            if a["hangs"]:
                ht.append(f"{a['hangs']} hung")
            if a["timeouts"]:
                ht.append(f"{a['timeouts']} timeout")
            name = f"**{VARIANT_LABEL[v]}**" if v in MEMGUARD else VARIANT_LABEL[v]
            w(
                f"| {s} | {name} | {fmt_count(a['finished'], a['n'])} | {fmt_count(a['innocent'])} | {freed} | "
                f"{pfreed} | {fmt(a['late_ms'], digits=0)} | {', '.join(ht) or '—'} | {a['runs']} |"
            )
    w("")
    svg_plot(agg, scenarios, variants, args.svg)
    link = args.svg_link or os.path.basename(args.svg)
    w(f"![Tasks finished, heartbeat lateness and onset-to-freed per scenario and variant]({link})")
    w("")

    # -- details
    w("### Details")
    w("")
    w(
        "How the memory came back, per cell (medians, range in parentheses): processes the kernel's OOM "
        "killer killed (global or in a cgroup, from dmesg), kill actions in the daemon's log, the lowest "
        "MemAvailable the sampler saw, and tasks that failed without a signal (e.g. PyPy's MemoryError)."
    )
    w("")
    w("| scenario | variant | kernel OOM kills | daemon kills | lowest MemAvailable (MiB) | failed (exit ≠ 0) | notes |")
    w("|---|---|---|---|---|---|---|")
    for s in scenarios:
        for v in variants:
            a = agg.get((s, v))
            if not a:
                continue
            notes = []
            if a["hb_killed"]:
                notes.append(f"heartbeat killed in {a['hb_killed']}")
            if a["launcher_fail"]:
                notes.append(f"launcher exit 125 in {a['launcher_fail']}")
            if a["restarts"]:
                notes.append(f"daemon restarted {a['restarts']}×")
            dk = fmt_count(a["daemon_kills"]) if v in ("earlyoom", "nohang", "elastic") else "—"
            w(
                f"| {s} | {VARIANT_LABEL[v]} | {fmt_count(a['kernel_kills'])} | {dk} | "
                f"{fmt(a['avail_min'], digits=0)} | {fmt_count(a['failed'])} | {'; '.join(notes) or ''} |"
            )
    w("")

    emulator_section(w, cells, emulator)

    # -- notes on this run
    notes = read_notes(args.notes, meta.get("run"))
    if notes.get(""):
        w("### What this run shows")
        w("")
        w(notes[""])
        w("")

    # -- where memguard loses
    losses = compare(agg, scenarios, variants)
    if losses:
        w("### Where memguard loses")
        w("")
        w(
            "Cells in which a memguard variant did worse than the best of the other variants on the same "
            "scenario (medians; onset → freed, pressure → freed and heartbeat only when the difference is over "
            "20% and over 0.2 s / 50 ms):"
        )
        w("")
        for line in losses:
            w(f"- {line}")
        w("")

    # -- costs
    if costs:
        w("## Program costs")
        w("")
        w("### Start-up per task")
        w("")
        w(
            "Wall time to start N copies of `/bin/true` and see them exit, divided by N, in a `--systemd` "
            "guest (systemd 252 as PID 1). fork+exec parallel: bench/spawn.c forks and execs all N at "
            "once, then waits; sequential: one after another. memguard: `memguard --strict -q -n N -- "
            "/bin/true` (all N at once, each in its own cgroup with memory.max, swap.max, oom.group and the "
            "share xattr, reaped, reported, removed). systemd-run: `systemd-run --scope -p MemoryMax=... "
            "-p MemorySwapMax=0 /bin/true`, one after another (each is a D-Bus client of PID 1 of its own; "
            "a thousand at once do not fit in 1 GiB). Milliseconds per task, median (min–max)."
        )
        w("")
        ns = sorted({c["n"] for c in costs})
        w("| N | " + " | ".join(COST_METHODS) + " | memguard ÷ fork+exec parallel | memguard ÷ systemd-run |")
        w("|---|" + "---|" * (len(COST_METHODS) + 2))
        for n in ns:
            cols = []
            med = {}
            for m in COST_METHODS:
                vals = [c["seconds"] * 1000 / n for c in costs if c["method"] == m and c["n"] == n and c["status"] == 0]
                bad = sum(1 for c in costs if c["method"] == m and c["n"] == n and c["status"] != 0)
                ms = median_spread(vals)
                med[m] = ms[0] if ms else None
                cell = fmt(ms, digits=1)
                if ms and ms[3] == 1:
                    cell += " (1 run)"
                if bad:
                    cell += f", {bad} failed"
                cols.append(cell)

            def ratio(a, b):
                return f"{med[a] / med[b]:.2f}" if med.get(a) and med.get(b) else "—"

            cols.append(ratio("memguard", "fork+exec parallel"))
            cols.append(ratio("memguard", "systemd-run --scope"))
            w(f"| {n} | " + " | ".join(cols) + " |")
        w("")
        rss = [c for c in costs if c["method"] == "memguard" and c.get("max_rss_kib") and c["status"] == 0]
        if rss:
            w("### The launcher's own memory")
            w("")
            w(
                "Peak RSS of `memguard --strict -q -n N -- /bin/true` in the runs above, as getrusage reports "
                "it to bench/spawn.c (ru_maxrss: the launcher, or a task it reaped if that was larger), "
                "median (min–max), and what each further task adds over N = "
                f"{min(c['n'] for c in rss)}."
            )
            w("")
            w("| N | peak RSS (MiB) | KiB per task above the smallest N |")
            w("|---|---|---|")
            base = None
            for n in sorted({c["n"] for c in rss}):
                ms = median_spread([c["max_rss_kib"] / 1024 for c in rss if c["n"] == n])
                if base is None:
                    base = (n, ms[0])
                    per = "—"
                else:
                    per = f"{(ms[0] - base[1]) * 1024 / (n - base[0]):.1f}"
                w(f"| {n} | {fmt(ms, digits=1)} | {per} |")
            w("")
    if idle:
        w("### Daemons on an idle node")
        w("")
        mins = next((i.get("minutes") for i in idle if i.get("minutes")), "?")
        exact = any(i.get("rss_source") == "smaps_rollup" for i in idle)
        if exact:
            rss_how = (
                "Rss and Anonymous from /proc/PID/smaps_rollup sampled every 10 s (VmRSS beside them: Linux 6.1 "
                "folds a thread's page counts into VmRSS only every 64 page faults, so an idle process's VmRSS "
                "stays below its real RSS)"
            )
        else:
            rss_how = "VmRSS and RssAnon from /proc/PID/status sampled every 10 s"
        w(
            f"memguardd, earlyoom and nohang side by side in one guest, started as above, counted over the "
            f"same {mins} minutes after 30 s of warm-up: CPU time (utime + stime from /proc/PID/stat), "
            f"context switches (/proc/PID/status), {rss_how}, and at the end USS "
            "(Private_Clean + Private_Dirty) and PSS from /proc/PID/smaps_rollup. RSS counts shared library "
            "pages (libc, libsystemd) that other processes on a real node map too, while USS is only the "
            "daemon's own. memguardd locks its memory (mlockall), so all of its mapped pages are resident."
        )
        if any(i.get("daemon") == "sdfloor" for i in idle):
            w("")
            w(
                "sdfloor (bench/sdfloor.c) is not a guard: it loads libsystemd, makes an empty sd-event loop and "
                "locks itself as memguardd does, then waits. Its RSS is the least any daemon built on sd-event "
                "costs on this system; it also shares libsystemd's pages with memguardd, which lowers "
                "memguardd's USS."
            )
        w("")
        elsewhere = measured_elsewhere(idle)
        if elsewhere:
            w(elsewhere)
            w("")
        if notes.get("idle"):
            w(notes["idle"])
            w("")

        def mib(i, key):
            return "—" if i.get(key) is None else f"{i[key] / 1024:.1f}"

        anon = "Anonymous" if exact else "RssAnon"
        extra = " VmRSS avg (MiB) |" if exact else ""
        # One row group per guest size: memguardd's idle interval follows MemAvailable.
        meta_mib = meta.get("guest_mem_mib", 1024)
        sizes = sorted({i.get("guest_mib", meta_mib) for i in idle})
        w(
            "| guest (MiB) | daemon | CPU seconds | CPU % | voluntary switches | involuntary switches | switches / s "
            f"| RSS avg (MiB) | RSS max (MiB) | {anon} avg (MiB) |{extra} USS (MiB) | PSS (MiB) |"
        )
        w("|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if exact else ""))
        for size in sizes:
            first = True
            for i in idle:
                if i.get("guest_mib", meta_mib) != size:
                    continue
                g = f"**{size}**" if first else ""
                first = False
                if i.get("died"):
                    w(f"| {g} | {i['daemon']} | died during the measurement | | | | | | | | | |" + (" |" if exact else ""))
                    continue
                wall = i["wall_s"] or 1
                sw = (i["voluntary_ctxt_switches"] + i["nonvoluntary_ctxt_switches"]) / wall
                vm = f" {mib(i, 'vmrss_avg_kib')} |" if exact else ""
                w(
                    f"| {g} | {i['daemon']} | {i['cpu_s']:.2f} | {100 * i['cpu_s'] / wall:.3f} | "
                    f"{i['voluntary_ctxt_switches']} | {i['nonvoluntary_ctxt_switches']} | {sw:.1f} | "
                    f"{mib(i, 'rss_avg_kib')} | {mib(i, 'rss_max_kib')} | {mib(i, 'rss_anon_avg_kib')} |{vm} "
                    f"{mib(i, 'uss_kib')} | {mib(i, 'pss_kib')} |"
                )
        w("")
        # The goal of issue #14: wake-ups at most a tenth of earlyoom's, anonymous memory at most 512 KiB.
        for size in sizes:
            by_d = {i["daemon"]: i for i in idle if i.get("guest_mib", meta_mib) == size and not i.get("died")}
            mg, eo = by_d.get("memguardd"), by_d.get("earlyoom")
            if not mg or not eo:
                continue
            ratio = mg["voluntary_ctxt_switches"] / max(1, eo["voluntary_ctxt_switches"])
            w(
                f"- {size} MiB guest: memguardd woke {mg['voluntary_ctxt_switches']} times "
                f"({mg['voluntary_ctxt_switches'] / (mg['wall_s'] or 1):.2f}/s), earlyoom "
                f"{eo['voluntary_ctxt_switches']} times: {ratio:.3f} of earlyoom's (goal ≤ 0.1); memguardd's "
                f"anonymous memory {mg['rss_anon_avg_kib']} KiB on average (goal ≤ 512 KiB)."
            )
        w("")

    if scale:
        scale_section(w, scale, args, notes.get("scale"))

    # -- side studies, each a section of its own written by its script (or by hand)
    for path in side_sections(args.sections or os.path.dirname(os.path.abspath(args.results))):
        with open(path) as f:
            w(f.read().rstrip("\n"))
        w("")

    # -- caveats
    w("## Caveats")
    w("")
    w(
        "- TCG emulates every instruction: a fork+exec costs tens of ms, page faults and reclaim are several "
        "times slower than on hardware, and other jobs on the 2-core host share the CPU. Absolute times are "
        "not a node's; compare the variants with each other."
    )
    w(
        "- The guest is small: one 1 GiB node with 4 tasks of ~200–228 MiB, not 16 tasks of several GiB. "
        "Thresholds in percent (earlyoom's 10%, nohang's 5%, memguardd's 5% and 15%) are small in MiB here."
    )
    w(
        "- Onset → freed and pressure → freed are sampled every 100 ms (slower when the sampler itself stalls or 256 tasks are "
        "scanned), so values below ~0.2 s mean \"within a sample or two\"."
    )
    if meta.get("guest_per_cell"):
        w(
            "- Each cell runs in a guest of its own, booted for it (bench/run.sh's default; --guest-per-variant "
            "runs a variant's repetition in one guest, as earlier full runs did): no cell meets what another "
            "left, in the guest's memory or in the emulator."
        )
    else:
        w(
            "- One guest runs one variant's repetition: its scenarios one after another, in the order of the "
            "tables, each after drop_caches. A cell still meets the memory its predecessors left (fragmented "
            "free memory, slab) and a daemon that has run through them, as a node meets what earlier jobs "
            "left, and under TCG an emulator that holds the guest the more, the more the guest ran before "
            "(the notes; bench/run.sh --guest-per-variant); a scenario run alone (bench/run.sh --scenarios, or "
            "in a guest of its own, the default) can measure differently."
        )
    w(
        "- Files: bench/run.sh (host), bench/guest.sh (one guest's cells), bench/scenarios.sh, "
        "bench/plain.sh, bench/careful.sh, bench/daemons.sh, bench/costs.sh, bench/idle.sh, "
        "bench/calibrate.sh, bench/{heartbeat,sampler,worker,spawn,sdfloor}.c, bench/emulator.py, "
        "bench/render.py; raw logs, reports, dmesg and /proc/vmstat of every cell under "
        "build-bench/runs/RUN/raw/, with QEMU's samples (emulator-*.perf.data)."
    )
    w("")
    os.makedirs(os.path.dirname(os.path.abspath(args.md)), exist_ok=True)
    with open(args.md, "w") as f:
        f.write("\n".join(L))
    return 0


def side_sections(folder):
    """The side studies' section.md files below FOLDER: SIDE_STUDY_ORDER first, then the rest by name."""
    try:
        names = sorted(d for d in os.listdir(folder) if os.path.isfile(os.path.join(folder, d, "section.md")))
    except OSError:
        return []
    names.sort(key=lambda d: (SIDE_STUDY_ORDER.index(d) if d in SIDE_STUDY_ORDER else len(SIDE_STUDY_ORDER), d))
    return [os.path.join(folder, d, "section.md") for d in names]


def short(s):
    for pre in ("/work/main/build-bench/build/tests/programs/", "/work/main/build-bench/bin/", "/work/main/tests/programs/"):
        s = s.replace(pre, "")
    return s


def compare(agg, scenarios, variants):
    """Plain sentences for the cells where a memguard variant is worse than the best other variant."""
    out = []
    others = [v for v in variants if v not in MEMGUARD]
    for s in scenarios:
        for mv in (v for v in variants if v in MEMGUARD):
            a = agg.get((s, mv))
            if not a or not others:
                continue
            best = {}
            for v in others:
                b = agg.get((s, v))
                if not b:
                    continue
                for k, better in (("finished", max), ("innocent", min), ("late_ms", min), ("freed_s", min), ("pressure_freed_s", min)):
                    if b.get(k):
                        val = b[k][0]
                        if k not in best or better(val, best[k][0]) != best[k][0]:
                            best[k] = (val, v)
            lab = VARIANT_LABEL[mv]
            if a["finished"] and "finished" in best and a["finished"][0] < best["finished"][0]:
                out.append(
                    f"**{s}**, {lab}: {a['finished'][0]:g} of {a['n']} tasks finished, "
                    f"{VARIANT_LABEL[best['finished'][1]]} {best['finished'][0]:g}."
                )
            if a["innocent"] and "innocent" in best and a["innocent"][0] > best["innocent"][0]:
                out.append(
                    f"**{s}**, {lab}: {a['innocent'][0]:g} innocent tasks killed, "
                    f"{VARIANT_LABEL[best['innocent'][1]]} {best['innocent'][0]:g}."
                )
            if a["late_ms"] and "late_ms" in best:
                x, (y, v) = a["late_ms"][0], best["late_ms"]
                if x > 1.2 * y and x - y > 50:
                    out.append(f"**{s}**, {lab}: heartbeat {x:.0f} ms late, {VARIANT_LABEL[v]} {y:.0f} ms.")
            if a["freed_s"] and "freed_s" in best:
                x, (y, v) = a["freed_s"][0], best["freed_s"]
                if x > 1.2 * y and x - y > 0.2:
                    out.append(f"**{s}**, {lab}: onset → freed {x:.1f} s, {VARIANT_LABEL[v]} {y:.1f} s.")
            if a["pressure_freed_s"] and "pressure_freed_s" in best:
                x, (y, v) = a["pressure_freed_s"][0], best["pressure_freed_s"]
                if x > 1.2 * y and x - y > 0.2:
                    out.append(f"**{s}**, {lab}: pressure → freed {x:.1f} s, {VARIANT_LABEL[v]} {y:.1f} s.")
            if a["hangs"] or a["timeouts"]:
                out.append(f"**{s}**, {lab}: {a['hangs']} hung and {a['timeouts']} timed-out runs.")
    return out


if __name__ == "__main__":
    sys.exit(main())
