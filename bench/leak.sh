#!/bin/bash
# The "Leaking service" study (issue #46; docs/benchmarks.md, "Leaking service"): one leak, in a service of
# the study's own with no limit of its own, met by
#   memguardd  memguardd.service with a "[service leak]" drop-in (the defaults): a restart through systemd
#   systemd    MemoryMax= + OOMPolicy=stop + Restart=on-failure alone
#   earlyoom   earlyoom.service with its defaults
#   kernel     the kernel alone
# each cell in a fresh systemd guest (tests/vm/vm.sh --systemd, 1536 MiB), repeated, the variants' order
# turning from one repetition to the next. Per cell (bench/leak-guest.sh): when the leak began, who ended
# the service and how (a clean stop or SIGKILL), when it answered again from a new process, how long its
# users got no answer, the node's worst heartbeat and lowest MemAvailable; bench/leak.py makes the
# medians and ranges.
#   bench/leak.sh [--smoke] [--reps N] [--out DIR] [--no-render]
#     --smoke      one repetition into build-bench/leak-smoke/: a check in ~20 minutes
#     --reps       repetitions (default 3)
#     --out        where raw logs and results go, inside the repo (default bench/results/leak/)
#     --no-render  do not render docs/benchmarks.md with the new section (bench/render.py)
# Raw logs in OUT/raw-REP/VARIANT/, one JSON line per cell in OUT/results.jsonl, the summary in
# OUT/summary.txt and the report's section in OUT/section.md.
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
	*) echo "usage: bench/leak.sh [--smoke] [--reps N] [--out DIR] [--no-render]" >&2; exit 2 ;;
	esac
done
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "leak: --reps needs a positive number" >&2; exit 2; }
if [[ -z $out ]]; then
	if ((smoke)); then out=$top/build-bench/leak-smoke; else out=$here/results/leak; fi
fi
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
[[ $out == "$top"/* ]] || { echo "leak: --out must be inside the repo (the guest shares only it)" >&2; exit 2; }
say() { echo "leak: $*" >&2; }
command -v earlyoom >/dev/null || { say "earlyoom is missing: scripts/deps.sh bench"; exit 1; }

build=$top/build-bench/build bin=$top/build-bench/bin
say "building memguardd in $build and the bench programs in $bin"
if ! cmake -S "$top" -B "$build" -DMEMGUARD_TESTS=OFF >"$out/cmake.log" 2>&1 ||
	! cmake --build "$build" -j2 >>"$out/cmake.log" 2>&1; then
	tail -n 40 "$out/cmake.log" >&2
	exit 1
fi
mkdir -p "$bin"
cc -O2 -Wall -Wextra -pthread -o "$bin/heartbeat" "$here/heartbeat.c"
cc -O2 -Wall -Wextra -D_GNU_SOURCE -o "$bin/svcmem" "$top/tests/programs/svcmem.c"
rm -f "$out/cmake.log"

variants=(memguardd systemd earlyoom kernel)
rm -rf "$out"/raw-* "$out"/guest-*.log "$out/results.jsonl"
began=$SECONDS
for ((rep = 1; rep <= reps; rep++)); do
	k=$(((rep - 1) % ${#variants[@]}))
	order=("${variants[@]:k}" "${variants[@]:0:k}")
	for v in "${order[@]}"; do
		say "repetition $rep/$reps: $v ($((SECONDS - began)) s so far)"
		log=$out/guest-$rep-$v.log
		"$top/tests/vm/vm.sh" --systemd --mem 1536 --timeout 900 -- \
			"$here/leak-guest.sh" "$v" "$build" "$bin" "$out/raw-$rep/$v" >"$log" 2>&1 ||
			{ tail -n 30 "$log" >&2; exit 1; }
		grep '^leak-guest:' "$log" >&2 || true
	done
done
say "measured in $((SECONDS - began)) s"
date -u +%FT%TZ >"$out/date"
git -C "$top" rev-parse --short HEAD >"$out/git" 2>/dev/null || echo unknown >"$out/git"
python3 "$here/leak.py" "$out"
cat "$out/summary.txt"
if ((render && !smoke)) && [[ $out == "$here/results/leak" ]]; then
	python3 "$here/render.py" --results "$here/results/results.jsonl" --md "$top/docs/benchmarks.md" \
		--svg "$here/results/benchmarks.svg" --svg-link ../bench/results/benchmarks.svg \
		--scale-svg "$here/results/benchmarks-scale.svg" --scale-svg-link ../bench/results/benchmarks-scale.svg \
		--calibration "$here/results/calibrate.jsonl" --notes "$here/results/notes.md"
	say "docs/benchmarks.md rendered with the study's section"
fi
