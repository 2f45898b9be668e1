#!/usr/bin/env python3
"""The "Leaking service" study's figures (bench/leak.sh), from its raw logs.

    leak.py OUT

Reads OUT/raw-REP/VARIANT/ (meta.json, probes.jsonl, heartbeat.json, journal.txt, kernel.txt) and writes
OUT/results.jsonl (one line per cell), OUT/summary.txt and OUT/section.md, the section bench/render.py puts
into docs/benchmarks.md. OUT/notes.md, when its first line is `<!-- run: DATE -->` with OUT/date's DATE, goes
at the end of the section: what a person read in these numbers, kept only while they describe them.

Definitions (stated in the section too), all on the guest's monotonic clock, from the leak's onset (the
service's own "leak begins"):
  acted        who ended the leaking process, and when: memguardd's "restarting leak.service", earlyoom's
               "sending SIGTERM/SIGKILL", the kernel's "Killed process" (for the node, or in the unit's
               cgroup at its MemoryMax=)
  ended        how the leaking process ended: "clean stop" (it got SIGTERM and said "stopping cleanly"),
               "SIGKILL" (systemd saw status=9/KILL), or "not ended"
  answering    when a new process of the service first answered a request ("ok")
  unusable     the time, from the onset to the cell's end, covered by requests that got no "ok" within
               1 s (a refusal, an error such as "Cannot allocate memory", no answer, or one that came later
               than that, the client itself held up by the node): each request counts until the next one
               starts
  heartbeat    bench/heartbeat.c's worst lateness (it wakes every 100 ms) after the onset, and when
  lowest       the lowest MemAvailable the client saw after the onset, in % of MemTotal
"""
import json
import os
import re
import statistics
import sys

import section

VARIANTS = ["memguardd", "systemd", "earlyoom", "kernel"]
LABEL = {
    "memguardd": "memguardd, `[service leak]`",
    "systemd": "`MemoryMax=` + `OOMPolicy=stop` + `Restart=on-failure`",
    "earlyoom": "earlyoom (its defaults)",
    "kernel": "the kernel alone",
}
LINE = re.compile(r"^\[\s*([0-9.]+)\] \S+ ([^:\[]+)(?:\[(\d+)\])?: (.*)$")


def journal(path):
    """(ms, ident, pid, message) of each line."""
    out = []
    if not os.path.exists(path):
        return out
    for line in open(path, errors="replace"):
        m = LINE.match(line.rstrip("\n"))
        if m:
            out.append((float(m.group(1)) * 1000, m.group(2), int(m.group(3) or 0), m.group(4)))
    return out


def cell(d):
    meta = json.load(open(os.path.join(d, "meta.json")))
    lines = journal(os.path.join(d, "journal.txt"))
    kernel = journal(os.path.join(d, "kernel.txt"))
    probes = [json.loads(l) for l in open(os.path.join(d, "probes.jsonl")) if l.strip()]
    hb = json.load(open(os.path.join(d, "heartbeat.json"))) if os.path.exists(os.path.join(d, "heartbeat.json")) else {}
    r = {"variant": meta["variant"], "rate_kib_s": meta["rate_kib_s"]}

    onset = next((t for t, who, _, msg in lines if msg.startswith("svcmem: leak begins")), None)
    pids = [(t, int(re.search(r"pid (\d+)", msg).group(1))) for t, who, _, msg in lines
            if msg.startswith("svcmem leak: pid")]
    first = pids[0][1] if pids else None
    r["onset_ok"] = onset is not None
    if onset is None:
        return r

    acts = []
    for t, who, _, msg in lines:
        if t < onset:
            continue
        if who == "memguardd" and msg.startswith("restarting leak.service"):
            why = ("pressure" if "memory is short through it" in msg else "stuck" if "it is stuck" in msg
                   else "leaking, early" if "sooner than a whole window" in msg else "leaking")
            acts.append((t, f"memguardd: restart ({why})"))
        elif who == "earlyoom" and "sending SIG" in msg:
            acts.append((t, "earlyoom: " + ("SIGTERM" if "SIGTERM" in msg else "SIGKILL")))
    for t, who, _, msg in kernel:
        if t >= onset and "Killed process" in msg and "(svcmem)" in msg:
            acts.append((t, "kernel: OOM kill in its cgroup" if "Memory cgroup" in msg else "kernel: OOM kill"))
    acts.sort()
    r["acted_by"] = acts[0][1] if acts else "nobody"
    r["acted_s"] = (acts[0][0] - onset) / 1000 if acts else None

    end = None
    for t, who, pid, msg in lines:
        if t < onset:
            continue
        if who == "svcmem" and pid == first and "stopping cleanly" in msg:
            end = (t, "clean stop (SIGTERM)")
            break
        if who == "systemd" and msg.startswith("leak.service: Main process exited") and "status=9/KILL" in msg:
            end = (t, "SIGKILL")
            break
    r["ended"] = end[1] if end else "not ended"
    r["ended_s"] = (end[0] - onset) / 1000 if end else None

    after = [p for p in probes if p["t_ms"] >= onset]
    # An answer later than the client's 1 s is none, even when it came: the node held the client too.
    for p in after:
        p["ok"] = p["what"] == "ok" and p["took_ms"] <= 1000
        if p["what"] == "ok" and not p["ok"]:
            p["what"] = "late"
    new = [t for t, pid in pids if pid != first]
    again = None
    if new:
        again = next((p["t_ms"] for p in after if p["t_ms"] >= new[0] and p["ok"]), None)
    r["answering_s"] = (again - onset) / 1000 if again is not None else None
    unusable = longest = run = 0.0
    for p, q in zip(after, after[1:] + [{"t_ms": meta["ended_ms"]}]):
        span = max(0.0, q["t_ms"] - p["t_ms"])
        if not p["ok"]:
            unusable += span
            run += span
            longest = max(longest, run)
        else:
            run = 0.0
    r["unusable_s"] = unusable / 1000
    r["longest_outage_s"] = longest / 1000
    r["answers"] = sorted({p["what"] for p in after if not p["ok"]})
    r["cannot_allocate"] = sum(1 for p in after if "Cannot allocate memory" in p["what"])
    # The worst wake-up after the onset, from the worst ones the heartbeat kept (wall-clock stamps).
    mono, real = meta["clocks_ms"]
    worst = [late for at, late in hb.get("worst", []) if at - real + mono >= onset]
    kept = [late for _, late in hb.get("worst", [])]
    r["heartbeat_ms"] = max(worst) if worst else (min(kept) if kept else None)
    r["heartbeat_at_s"] = next(((at - real + mono - onset) / 1000 for at, late in hb.get("worst", [])
                                if at - real + mono >= onset and late == r["heartbeat_ms"]), None)
    # The same, from the onset until the service answered again (to the end when it never did): what the
    # leak and its remedy cost the node, apart from the restarted service's own later run.
    until = onset + r["answering_s"] * 1000 if r["answering_s"] is not None else float("inf")
    during = [late for at, late in hb.get("worst", []) if onset <= at - real + mono <= until]
    r["heartbeat_leak_ms"] = max(during) if during else r["heartbeat_ms"]
    avail = [p["avail_kib"] for p in after if p.get("avail_kib", -1) >= 0]
    r["lowest_pct"] = round(min(avail) * 100 / meta["mem_total_kib"], 1) if avail else None
    r["kernel_oom_kills"] = sum(1 for _, _, _, msg in kernel if "Killed process" in msg)
    r["observed_s"] = (meta["ended_ms"] - onset) / 1000
    return r


def fmt(values, unit, digits=0):
    v = sorted(x for x in values if x is not None)
    if not v:
        return "–"
    f = f"{{:.{digits}f}}"
    med = f.format(statistics.median(v))
    if len(v) == 1 or v[0] == v[-1]:
        return f"{med} {unit}".strip()
    return f"{med} {unit} ({f.format(v[0])}–{f.format(v[-1])})".replace(" (", " (", 1).strip()


def counts(values):
    seen = {}
    for v in values:
        seen[v] = seen.get(v, 0) + 1
    return ", ".join(f"{k} ({n})" if len(values) > 1 else k for k, n in sorted(seen.items(), key=lambda kv: -kv[1]))


def main():
    out = sys.argv[1]
    rows = []
    for rep_dir in sorted(d for d in os.listdir(out) if d.startswith("raw-")):
        rep = int(rep_dir.split("-")[1])
        for v in VARIANTS:
            d = os.path.join(out, rep_dir, v)
            if os.path.exists(os.path.join(d, "meta.json")):
                r = cell(d)
                r["rep"] = rep
                rows.append(r)
    with open(os.path.join(out, "results.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    date = open(os.path.join(out, "date")).read().strip() if os.path.exists(os.path.join(out, "date")) else "?"
    git = open(os.path.join(out, "git")).read().strip() if os.path.exists(os.path.join(out, "git")) else "?"
    reps = max((r["rep"] for r in rows), default=0)
    rate = sorted(r["rate_kib_s"] for r in rows)

    S = []
    s = S.append
    for v in VARIANTS:
        rs = [r for r in rows if r["variant"] == v and r.get("onset_ok")]
        if not rs:
            continue
        restarted = [r for r in rs if r["answering_s"] is not None]
        s(f"{v}: {len(rs)} cells")
        s(f"  acted: {counts([r['acted_by'] for r in rs])}, {fmt([r['acted_s'] for r in rs], 's', 1)} after the onset")
        s(f"  ended: {counts([r['ended'] for r in rs])}")
        s(f"  answering again from a new process: {len(restarted)} of {len(rs)}, "
          f"{fmt([r['answering_s'] for r in restarted], 's', 1)} after the onset")
        s(f"  unusable: {fmt([r['unusable_s'] for r in rs], 's', 1)}; longest outage "
          f"{fmt([r['longest_outage_s'] for r in rs], 's', 1)}; answers {sorted({a for r in rs for a in r['answers']})}")
        s(f"  worst heartbeat: {fmt([r['heartbeat_ms'] for r in rs], 'ms')} (the onset to answering again "
          f"{fmt([r['heartbeat_leak_ms'] for r in rs], 'ms')}); lowest MemAvailable "
          f"{fmt([r['lowest_pct'] for r in rs], '%', 1)}; kernel OOM kills {sum(r['kernel_oom_kills'] for r in rs)}")
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write("\n".join(S) + "\n")

    L = []
    w = L.append
    w("## Leaking service")
    w("")
    w("`bench/leak.sh` (outside `bench/run.sh`; raw logs in `bench/results/leak/`) meets one leak four ways. The "
      "service is the study's own (`tests/programs/svcmem` as `leak.service`, `Restart=on-failure` as an "
      "administrator's unit has it, no limit of its own): it holds 16 MiB for 20 s, then leaks at MemAvailable / "
      "150 s per second "
      f"({rate[0]}–{rate[-1]} KiB/s here), so that, left alone, it would take the node's available memory in "
      "150 s. Its users (`bench/leakprobe.py`) ask it every 200 ms for work that needs a MiB of its memory; "
      "`bench/heartbeat.c` stands in for the node's daemons. Each cell boots a fresh systemd guest (1536 MiB, "
      "no swap, TCG), the variants' order turning from one repetition to the next:")
    w("")
    w("| variant | what meets the leak |")
    w("|---|---|")
    w("| memguardd | the packaged `memguardd.service` and a drop-in `[service leak]` (every key at its default: "
      "a 10-minute window, so a leak this fast is met by the early rule as the node runs short) |")
    w("| MemoryMax= alone | `MemoryMax=` at what the service holds at first plus MemAvailable above 5 % of "
      "MemTotal (where memguardd's own limit for it lies), `OOMPolicy=stop`, `Restart=on-failure`; no daemon |")
    w("| earlyoom | the packaged `earlyoom.service`, its defaults (SIGTERM below 10 % MemAvailable, SIGKILL "
      "below 5 %) |")
    w("| kernel alone | nothing but the kernel's OOM killer |")
    w("")
    w("Definitions, from the leak's onset (the service's own \"leak begins\"), on the guest's monotonic "
      "clock: *acted*, who ended the leaking process and when (memguardd's restart, earlyoom's signal, the "
      "kernel's OOM kill); *ended*, how it ended: a clean stop (SIGTERM, its \"stopping cleanly\") or SIGKILL; "
      "*answering again*, when a new process of the service first answered within 1 s; *unusable*, the time "
      "its users got no answer within 1 s (a refusal, an error such as \"Cannot allocate memory\", nothing, or "
      "an answer that came later, the client held up by the node too), "
      "each request counting until the next, to the cell's end (20 s after it answered again, or 60 s after it "
      "stopped for good); *worst heartbeat*, the heartbeat's worst lateness after the onset, to the cell's end, and "
      "from the onset until the service answered again (the leak and its remedy, not the new process's run); "
      "*lowest MemAvailable*, in % of "
      "MemTotal, as the client read it.")
    w("")
    w(f"{reps} repetition{'s' if reps != 1 else ''} on {date} under TCG, memguard {git} (median, range in "
      "brackets; counts of cells in brackets after a word):")
    w("")
    w("| | " + " | ".join(LABEL[v] for v in VARIANTS) + " |")
    w("|---|" + "---|" * len(VARIANTS))

    def row(name, fn):
        cells = []
        for v in VARIANTS:
            rs = [r for r in rows if r["variant"] == v and r.get("onset_ok")]
            cells.append(fn(rs) if rs else "–")
        w(f"| {name} | " + " | ".join(cells) + " |")

    row("who acted", lambda rs: counts([r["acted_by"] for r in rs]))
    row("acted, after the onset", lambda rs: fmt([r["acted_s"] for r in rs], "s", 1))
    row("how the service ended", lambda rs: counts([r["ended"] for r in rs]))
    def answering(rs):
        again = [r["answering_s"] for r in rs if r["answering_s"] is not None]
        if len(again) == len(rs):
            return fmt(again, "s", 1)
        if not again:
            return f"never (0 of {len(rs)})"
        return f"{len(again)} of {len(rs)}: " + fmt(again, "s", 1)

    row("answering again, after the onset", answering)
    # A service not answering again was unusable to the cell's end, at least.
    row("unusable", lambda rs: ("" if all(r["answering_s"] is not None for r in rs) else "at least ")
        + fmt([r["unusable_s"] for r in rs], "s", 1))
    row("longest outage", lambda rs: fmt([r["longest_outage_s"] for r in rs], "s", 1))
    row("worst heartbeat", lambda rs: fmt([r["heartbeat_ms"] for r in rs], "ms"))
    row("worst heartbeat, the onset to answering again",
        lambda rs: fmt([r["heartbeat_leak_ms"] for r in rs], "ms"))
    row("lowest MemAvailable", lambda rs: fmt([r["lowest_pct"] for r in rs], "%", 1))
    w("")
    w("Cell by cell (acted by, after the onset; ended; answering again; unusable; worst heartbeat):")
    w("")
    w("| repetition | " + " | ".join(VARIANTS) + " |")
    w("|---|" + "---|" * len(VARIANTS))
    for rep in range(1, reps + 1):
        cells = []
        for v in VARIANTS:
            r = next((r for r in rows if r["rep"] == rep and r["variant"] == v), None)
            if not r or not r.get("onset_ok"):
                cells.append("–")
                continue
            acted = f"{r['acted_by']}, {r['acted_s']:.1f} s" if r["acted_s"] is not None else r["acted_by"]
            again = f"{r['answering_s']:.1f} s" if r["answering_s"] is not None else "not again"
            hb = f"{r['heartbeat_ms']:.0f} ms" if r["heartbeat_ms"] is not None else "?"
            cells.append(f"{acted}; {r['ended']}; {again}; {r['unusable_s']:.1f} s; {hb}")
        w(f"| {rep} | " + " | ".join(cells) + " |")
    w("")
    section.write(out, date, L)
    return 0


if __name__ == "__main__":
    sys.exit(main())
