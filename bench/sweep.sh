#!/bin/bash
# The sweep scenario (issue #39; docs/benchmarks.md, "A sweep of uneven tasks"): one list of 40 tasks whose
# memory varies, a few of them needing about twice the share, run to the end on a 1 GiB swapless guest by
#   memguard          memguard --strict -n 4 --retries 2 --tasks FILE -- CMD {}
#   parallel          GNU parallel -j 4 --retries 3 (three attempts in all, as memguard's two retries)
#   parallel-memfree  the same with --memfree SHARE (start a task only when a share is free; below half
#                     of it, parallel kills its youngest task and queues it again)
#   xargs             xargs -P 4 -L 1
# one after the other in the same guest, in an order that turns from one repetition to the next; each
# repetition boots a fresh guest (tests/vm/vm.sh). Per variant and repetition: tasks finished, innocent
# tasks killed, the heartbeat's worst lateness, and the makespan against the ideal (bench/sweep.py).
#   bench/sweep.sh [--smoke] [--reps N] [--out DIR] [--no-render]
#     --smoke  the first 12 tasks, one repetition, into build-bench/sweep-smoke/: a check in ~5 minutes
#     --reps   repetitions (default 3)
#     --out    where the raw logs and results go, inside the repo (default bench/results/sweep/)
#     --no-render  do not render docs/benchmarks.md with the new section (bench/render.py)
# Raw logs in OUT/raw-REP/VARIANT/, one JSON line per variant and repetition in OUT/results.jsonl, the
# summary in OUT/summary.txt and the report's section in OUT/section.md.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
top=$(cd "$here/.." && pwd -P)

smoke=0 reps=3 out='' render=1
while (($#)); do
	case $1 in
	--smoke) smoke=1 reps=1; shift ;;
	--reps) reps=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--no-render) render=0; shift ;;
	*) echo "usage: bench/sweep.sh [--smoke] [--reps N] [--out DIR] [--no-render]" >&2; exit 2 ;;
	esac
done
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "sweep: --reps needs a positive number" >&2; exit 2; }
if [[ -z $out ]]; then
	if ((smoke)); then out=$top/build-bench/sweep-smoke; else out=$here/results/sweep; fi
fi
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
[[ $out == "$top"/* ]] || { echo "sweep: --out must be inside the repo (the guest shares only it)" >&2; exit 2; }
say() { echo "sweep: $*" >&2; }

# GNU parallel runs in the guest, whose root is the host's: it is installed here (scripts/deps.sh bench).
if ! command -v parallel >/dev/null; then
	[[ $(id -u) == 0 ]] || { say "GNU parallel is missing: scripts/deps.sh bench, or apt-get install parallel"; exit 1; }
	say "installing parallel"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends parallel >&2 ||
		{ apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends parallel >&2; }
fi

build=$top/build-bench/build bin=$top/build-bench/bin
say "building memguard in $build and the bench programs in $bin"
if ! cmake -S "$top" -B "$build" -DMEMGUARD_TESTS=OFF >"$out/cmake.log" 2>&1 ||
	! cmake --build "$build" -j2 >>"$out/cmake.log" 2>&1; then
	tail -n 40 "$out/cmake.log" >&2
	exit 1
fi
mkdir -p "$bin"
for c in heartbeat sampler worker; do
	cc -O2 -Wall -Wextra -pthread -o "$bin/$c" "$here/$c.c"
done
rm -f "$out/cmake.log"

# The task list: "MIB SECONDS TAG" per line, for bench/worker.c. With N = 4 the 1 GiB guest's share is about
# 198 MiB (793 MiB of budget). Most tasks hold 40-170 MiB (their need fits the share) for 2-6 s; tasks 6, 7,
# 19, 22 and 34 hold 360 MiB, 1.8 shares, for 4 s. Under a plain -j 4, two of those beside two others
# outgrow the guest (tasks 6 and 7; 19 and 22 when they meet); memguard kills each at its share and runs
# it again with twice the share.
python3 - "$out/tasks.txt" "$smoke" <<-'PY'
	import sys
	big = {5, 6, 18, 21, 33}
	lines = []
	for i in range(12 if sys.argv[2] == "1" else 40):
	    mib, secs = (360, 4) if i in big else (40 + i * 37 % 131, 2 + i * 3 % 5)
	    lines.append(f"{mib} {secs} t{i + 1:02d}")
	open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY

variants=(memguard parallel parallel-memfree xargs)
deadline=$((smoke ? 150 : 300))
rm -rf "$out"/raw-* "$out/results.jsonl"
began=$SECONDS
for ((rep = 1; rep <= reps; rep++)); do
	# The order turns: each variant comes first once in four repetitions.
	k=$(((rep - 1) % ${#variants[@]}))
	order=("${variants[@]:k}" "${variants[@]:0:k}")
	say "repetition $rep/$reps: ${order[*]} ($((SECONDS - began)) s so far)"
	"$top/tests/vm/vm.sh" --mem 1024 --timeout $((${#order[@]} * (deadline + 60) + 300)) -- \
		"$here/sweep-guest.sh" "$build" "$bin" "$out" "$rep" "$deadline" "${order[@]}" \
		>"$out/guest-$rep.log" 2>&1 || { tail -n 30 "$out/guest-$rep.log" >&2; exit 1; }
	grep '^sweep:' "$out/guest-$rep.log" >&2 || true
done
say "measured in $((SECONDS - began)) s"
date -u +%FT%TZ >"$out/date"
git -C "$top" rev-parse --short HEAD >"$out/git" 2>/dev/null || echo unknown >"$out/git"
python3 "$here/sweep.py" "$out"
cat "$out/summary.txt"
if ((render && !smoke)) && [[ $out == "$here/results/sweep" ]]; then
	python3 "$here/render.py" --results "$here/results/results.jsonl" --md "$top/docs/benchmarks.md" \
		--svg "$here/results/benchmarks.svg" --svg-link ../bench/results/benchmarks.svg \
		--scale-svg "$here/results/benchmarks-scale.svg" --scale-svg-link ../bench/results/benchmarks-scale.svg \
		--calibration "$here/results/calibrate.jsonl" --notes "$here/results/notes.md"
	say "docs/benchmarks.md rendered with the sweep's section"
fi
