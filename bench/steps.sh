#!/bin/bash
# What a Slurm step costs (issue #44; docs/benchmarks.md, "Tasks as Slurm steps"): the same list of short
# tasks (`true`) in one 2-CPU job of a real Slurm in the systemd guest, run by memguard's steps backend,
# by the sites' idiom `parallel -j 2 srun --exact ...`, and by memguard starting the tasks itself, each
# REPS times in turning order (bench/steps-guest.sh); tasks per second, median and range.
#   bench/steps.sh [--reps N] [--tasks N] [--out DIR]
# Raw logs in OUT/raw/, the figures in OUT/results.json, the report's section in OUT/section.md
# (default OUT: bench/results/steps-cost/).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
top=$(cd "$here/.." && pwd -P)
reps=3 ntasks=40 out=$here/results/steps-cost
while (($#)); do
	case $1 in
	--reps) reps=$2; shift 2 ;;
	--tasks) ntasks=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	*) echo "usage: bench/steps.sh [--reps N] [--tasks N] [--out DIR]" >&2; exit 2 ;;
	esac
done
[[ $reps =~ ^[1-9][0-9]*$ && $ntasks =~ ^[1-9][0-9]*$ ]] || { echo "steps: --reps and --tasks take numbers" >&2; exit 2; }
mkdir -p "$out/raw"
out=$(cd "$out" && pwd -P)
[[ $out == "$top"/* ]] || { echo "steps: --out must be inside the repo (the guest shares only it)" >&2; exit 2; }
command -v parallel >/dev/null || { echo "steps: GNU parallel is missing: scripts/deps.sh bench" >&2; exit 1; }

build=$top/build-bench/build
cmake -S "$top" -B "$build" -DMEMGUARD_TESTS=ON >"$build.log" 2>&1 &&
	cmake --build "$build" -j2 >>"$build.log" 2>&1 || { tail -n 40 "$build.log" >&2; exit 1; }
rm -f "$out"/raw/*.tsv "$out"/raw/*.out
date -u +%Y-%m-%d >"$out/raw/date"
git -C "$top" rev-parse --short HEAD >"$out/raw/git"
"$top/tests/vm/vm.sh" --systemd --mem 1536 --timeout 7200 -- \
	"$here/steps-guest.sh" "$out/raw" "$reps" "$ntasks" "$build" >"$out/raw/guest.log" 2>&1 ||
	{ tail -n 60 "$out/raw/guest.log" >&2; exit 1; }
python3 "$here/steps.py" "$out"
cat "$out/section.md"
