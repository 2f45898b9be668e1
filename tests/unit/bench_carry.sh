#!/usr/bin/env bash
# bench/carry.py: a full run without --scale (or --no-idle) keeps the earlier run's scale (idle) records,
# marked with that run; a kind the new run measured is never carried; a carried record keeps its first
# mark; the new run's own lines are copied byte for byte; render.py says which run measured them.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$W/old.jsonl" <<'J'
{"kind":"meta","run":"R1","date":"2026-11-01T00:00:00Z","git":"aaaaaaa"}
{"kind":"idle","daemon":"memguardd","wall_s":600}
{"kind":"scale","n":64,"started":true}
J
# Spacing the new run's writer chose must survive.
printf '%s\n' '{"kind":"meta", "run":"R2","date":"2026-11-02T00:00:00Z","git":"bbbbbbb"}' \
	'{"kind":"idle","daemon":"memguardd","wall_s":601}' >"$W/new.jsonl"

python3 "$top/bench/carry.py" --new "$W/new.jsonl" --old "$W/old.jsonl" --kinds "idle scale" >"$W/m1.jsonl"
head -2 "$W/m1.jsonl" | cmp -s - "$W/new.jsonl" || fail "the new run's lines were not copied as they are"
[[ $(grep -c '"kind":"idle"' "$W/m1.jsonl") == 1 ]] || fail "an idle record the new run measured was carried"
grep -q '"kind":"scale".*"measured_in":{"run":"R1","date":"2026-11-01T00:00:00Z","git":"aaaaaaa"}' "$W/m1.jsonl" ||
	fail "the scale record was not carried with R1's mark: $(cat "$W/m1.jsonl")"

printf '%s\n' '{"kind":"meta","run":"R3","date":"2026-11-03T00:00:00Z","git":"ccccccc"}' >"$W/new3.jsonl"
python3 "$top/bench/carry.py" --new "$W/new3.jsonl" --old "$W/m1.jsonl" --kinds "scale" >"$W/m2.jsonl"
grep -q '"kind":"scale".*"measured_in":{"run":"R1"' "$W/m2.jsonl" || fail "a carried record lost its first mark"
! grep -q '"kind":"idle"' "$W/m2.jsonl" || fail "a kind not asked for was carried"

python3 "$top/bench/carry.py" --new "$W/new3.jsonl" --old "$W/missing.jsonl" --kinds "scale" >"$W/m3.jsonl"
cmp -s "$W/m3.jsonl" "$W/new3.jsonl" || fail "without earlier results the run's own lines are not all"

# The page names the run that measured carried records, and only those: the stored results, each record
# as its own run measured it (R8), then a run R9 without scale records that carries R8's.
python3 - "$top/bench/results/results.jsonl" "$W" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
with open(sys.argv[2] + "/r8.jsonl", "w") as f8, open(sys.argv[2] + "/r9-own.jsonl", "w") as f9:
    for r in recs:
        r.pop("measured_in", None)
        if r.get("kind") == "meta":
            r["run"] = "R8"
            f8.write(json.dumps(r) + "\n")
            r["run"] = "R9"
            f9.write(json.dumps(r) + "\n")
            continue
        f8.write(json.dumps(r) + "\n")
        if r.get("kind") != "scale":
            f9.write(json.dumps(r) + "\n")
PY
grep -q '"kind": "scale"' "$W/r8.jsonl" || fail "the stored results hold no scale records to carry"
python3 "$top/bench/carry.py" --new "$W/r9-own.jsonl" --old "$W/r8.jsonl" --kinds scale >"$W/r9.jsonl"
for r in r8 r9; do
	"$top/bench/render.py" --results "$W/$r.jsonl" --md "$W/$r.md" --svg "$W/$r.svg" --scale-svg "$W/$r-s.svg" \
		>/dev/null 2>"$W/$r.err" || { cat "$W/$r.err"; fail "render.py failed on $r"; }
done
grep -q "Not re-run with the rest of this page:.*run R8" "$W/r9.md" ||
	fail "the page does not say which run measured the carried scale records"
! grep -q "Not re-run" "$W/r8.md" || fail "a run's own scale records are called not re-run"
echo "bench carry: all checks passed"
