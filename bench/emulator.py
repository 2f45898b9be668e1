#!/usr/bin/env python3
"""Where the emulator's CPU went during each cell, from perf samples of QEMU on the host.

Under TCG a guest runs only while QEMU executes its translated code; the rest of QEMU's time is the
emulator's own (translating, invalidating translated code, softmmu, devices) or the host kernel's. A cell
in which the translated code got a small share was slowed by the emulator, whatever the guard did.

usage: emulator.py RUN_DIR PERF_DATA CELL...   writes RUN_DIR/raw/CELL/emulator.json, prints it on stdout
as a results.jsonl line ("kind":"emulator") and says on stderr, per cell: the share of samples in
translated guest code over the whole cell, in each 2-s window (guest_windows: seconds into the cell and
share) and in its worst one, and the share in QEMU's named upkeep of translated code (a lower bound: its
static helpers are unnamed). CELL is VARIANT-rREP-SCENARIO.
"""
import json
import os
import re
import subprocess
import sys

# QEMU's exported functions that keep the translation cache consistent with guest memory.
UPKEEP = ("page_collection_lock", "qht_lookup_custom", "tcg_flush_jmp_cache", "page_find_alloc")
WINDOW_S = 2.0
# Two busy vCPU threads give about 190 samples a second; far fewer means perf missed the guest.
MIN_SAMPLES_PER_S = 20


def kind(sym, dso):
    if dso.startswith("/tmp/perf-"):
        return "guest"  # QEMU's code buffer: the guest's translated instructions
    if dso.startswith("[") and dso != "[vdso]":
        return "host_kernel"  # the kernel and its modules
    if sym in UPKEEP or sym.startswith("tb_invalidate") or sym.startswith("tb_flush"):
        return "upkeep"
    return "emulator"


def samples(perf_data):
    out = subprocess.run(["perf", "script", "-i", perf_data, "-F", "time,ip,sym,dso", "-G"],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        head, _, rest = line.partition(":")
        try:
            t = float(head)
        except ValueError:
            continue
        dso = rest[rest.rfind("(") + 1:-1] if rest.endswith(")") else "[unknown]"
        fields = rest[:rest.rfind("(")].split()
        sym = fields[1] if len(fields) > 1 else "[unknown]"
        yield t, kind(sym, dso)


def clock_offset(cell_dir):
    """Host clock minus guest clock, in seconds: guest.sh writes the guest's time into guest-clock on the
    share, and the host stamps the file as the write arrives. 0 when the file is missing."""
    path = os.path.join(cell_dir, "guest-clock")
    try:
        with open(path) as f:
            guest = float(f.read().split()[0])
        return os.stat(path).st_mtime - guest
    except (OSError, ValueError, IndexError):
        return 0.0


def window(cell_dir):
    """The cell's span in host seconds: from the sampler's start to the last task's end."""
    with open(os.path.join(cell_dir, "sampler.json")) as f:
        s = json.load(f)
    ends = [t[2] for t in s.get("tasks", []) if t[2] > 0]
    if not ends:
        return None
    off = clock_offset(cell_dir)
    return s["start_ms"] / 1000 + off, max(ends) / 1000 + off, off


def summarise(points, t0, t1):
    inside = [(t, k) for t, k in points if t0 <= t <= t1]
    counts = {}
    for _, k in inside:
        counts[k] = counts.get(k, 0) + 1
    n = len(inside)
    share = {k: round(counts.get(k, 0) / n, 3) if n else None
             for k in ("guest", "upkeep", "emulator", "host_kernel")}
    windows = []  # [seconds into the cell, guest's share] of each window with enough samples
    for start in window_starts(t0, t1):
        w = [k for s, k in inside if start <= s < start + WINDOW_S]
        if len(w) >= 20:
            windows.append([round(start - t0, 1), round(sum(1 for k in w if k == "guest") / len(w), 3)])
    worst = min((g for _, g in windows), default=None)
    return {"samples": n, "seconds": round(t1 - t0, 1), "share": share,
            "guest_worst_window": worst, "window_s": WINDOW_S, "guest_windows": windows}


def window_starts(t0, t1):
    """Windows overlapping by half, the last one ending at t1 so that the cell's tail is covered."""
    starts = []
    t = t0
    while t + WINDOW_S <= t1:
        starts.append(t)
        t += WINDOW_S / 2
    if starts and starts[-1] + WINDOW_S < t1:
        starts.append(t1 - WINDOW_S)
    return starts


def main(argv):
    if len(argv) < 3:
        print("usage: emulator.py RUN_DIR PERF_DATA CELL...", file=sys.stderr)
        return 2
    run_dir, perf_data, cells = argv[0], argv[1], argv[2:]
    try:
        points = list(samples(perf_data))
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"emulator: cannot read {perf_data}: {e}", file=sys.stderr)
        return 1
    if not points:
        print(f"emulator: no samples in {perf_data}", file=sys.stderr)
        return 1
    written = 0
    for cell in cells:
        cell_dir = os.path.join(run_dir, "raw", cell)
        try:
            span = window(cell_dir)
        except (OSError, ValueError, KeyError) as e:
            print(f"emulator: {cell}: no sampler span ({e})", file=sys.stderr)
            continue
        if span is None:
            print(f"emulator: {cell}: no task ended, no span", file=sys.stderr)
            continue
        r = summarise(points, span[0], span[1])
        r["clock_offset_s"] = round(span[2], 3)
        if r["samples"] < MIN_SAMPLES_PER_S * max(r["seconds"], 1):
            print(f"emulator: {cell}: {r['samples']} samples in {r['seconds']} s, too few to judge",
                  file=sys.stderr)
            continue
        written += 1
        with open(os.path.join(cell_dir, "emulator.json"), "w") as f:
            json.dump(r, f)
            f.write("\n")
        m = re.fullmatch(r"(\w+)-r(\d+)-(\w+)", cell)
        if m:
            print(json.dumps({"kind": "emulator", "variant": m[1], "rep": int(m[2]), "scenario": m[3], **r},
                             separators=(",", ":")))
        sh = r["share"]
        pct = lambda v: "-" if v is None else f"{100 * v:.0f}%"
        print(f"emulator: {cell}: {r['seconds']} s, guest code {pct(sh['guest'])} "
              f"(worst {WINDOW_S:.0f}-s window {pct(r['guest_worst_window'])}), "
              f"named upkeep {pct(sh['upkeep'])}, rest of QEMU {pct(sh['emulator'])}, "
              f"host kernel {pct(sh['host_kernel'])}", file=sys.stderr)
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
