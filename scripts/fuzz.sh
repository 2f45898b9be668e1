#!/usr/bin/env bash
# Builds memguard's libFuzzer targets (tests/fuzz/fuzz_*.c) with clang into
# build-fuzz/ and runs each in turn, one at a time. Usage:
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   run each for a time (default 60 s)
#   scripts/fuzz.sh -runs=N [SECONDS] [TARGET...]       run each for N executions (at most SECONDS)
#   scripts/fuzz.sh --smoke                             1 s each: what the test suite runs
#   scripts/fuzz.sh --build                             build only
# TARGET is a name like units or fuzz_units. New inputs go to
# build-fuzz/corpus/<target>/ (the seeds in tests/fuzz/corpus/ stay untouched),
# findings to build-fuzz/artifacts/, each run's output to build-fuzz/logs/.
# Prints per target the executions, coverage, corpus size and the result;
# exits 1 when any target found something.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=
runs=
build_only=0
want=()
for a in "$@"; do
	case "$a" in
	--smoke) secs=1 ;;
	--build) build_only=1 ;;
	-runs=[0-9]*) runs=$a ;;
	[0-9]*) secs=$a ;;
	-h | --help)
		sed -n '2,12s/^# \{0,1\}//p' "$0"
		exit 0
		;;
	*) want+=("fuzz_${a#fuzz_}") ;;
	esac
done

if ! command -v clang >/dev/null || ! echo 'int main(void){return 0;}' |
	clang -x c -fsanitize=fuzzer-no-link -o /dev/null - 2>/dev/null; then
	scripts/deps.sh fuzz
fi

out=build-fuzz
mkdir -p "$out/obj" "$out/logs" "$out/artifacts"
# shellcheck disable=SC2207 # pkg-config prints words
pkg=($(pkg-config --cflags --libs libsystemd inih))
cflags=(-g -O1 -std=gnu11 -D_GNU_SOURCE -DMEMGUARD_VERSION='"fuzz"' -Iinclude -Ilauncher -Idaemon
	-Wall -Wextra -Wno-unused-parameter -Werror -fno-omit-frame-pointer)
san=('-fsanitize=address,undefined' -fno-sanitize-recover=all)

# Whether $1 is missing or older than a file its depfile $1.d names.
stale() {
	local obj=$1 dep
	[ -e "$obj" ] && [ -e "$obj.d" ] || return 0
	# shellcheck disable=SC2013 # a depfile is words: the object, then what it includes
	for dep in $(sed -e 's/^[^:]*://' -e 's/\\$//' "$obj.d"); do
		[ "$dep" -nt "$obj" ] && return 0
	done
	return 1
}

# Everything but the two main()s, instrumented for coverage, in one archive:
# each target pulls in what it uses.
sources=(lib/*.c)
for f in launcher/*.c launcher/*/*.c daemon/*.c daemon/*/*.c; do
	case "$f" in */main.c) ;; *) sources+=("$f") ;; esac
done
objs=()
rebuilt=0
for f in "${sources[@]}"; do
	o=$out/obj/${f//\//_}.o
	objs+=("$o")
	if stale "$o"; then
		clang "${cflags[@]}" "${san[@]}" '-fsanitize=fuzzer-no-link' -MMD -MF "$o.d" -c "$f" -o "$o" &
		rebuilt=1
		# Two compilers at a time at most.
		while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n; done
	fi
done
while [ "$(jobs -rp | wc -l)" -gt 0 ]; do wait -n; done
lib=$out/libmemguard-fuzz.a
if [ "$rebuilt" = 1 ] || [ ! -e "$lib" ]; then
	rm -f "$lib"
	ar rcs "$lib" "${objs[@]}"
fi

targets=()
for f in tests/fuzz/fuzz_*.c; do
	t=$(basename "$f" .c)
	targets+=("$t")
	if stale "$out/$t" || [ "$lib" -nt "$out/$t" ]; then
		clang "${cflags[@]}" "${san[@]}" -fsanitize=fuzzer -MMD -MF "$out/$t.d" "$f" "$lib" "${pkg[@]}" \
			-o "$out/$t"
	fi
done
[ "$build_only" = 1 ] && exit 0
# Both bounds together: whichever comes first ends a target's run.
limit=()
[ -n "$runs" ] && limit+=("$runs")
[ -n "$secs" ] || [ -n "$runs" ] || secs=60
[ -n "$secs" ] && limit+=(-max_total_time="$secs")
[ ${#want[@]} -gt 0 ] && targets=("${want[@]}")

found=0
printf '%-20s %12s %8s %6s %8s  %s\n' target executions seconds cov corpus result
for t in "${targets[@]}"; do
	[ -x "$out/$t" ] || { echo "fuzz: no target $t" >&2; exit 2; }
	name=${t#fuzz_}
	seeds=tests/fuzz/corpus/$name
	dict=()
	[ -e "tests/fuzz/$name.dict" ] && dict=(-dict="tests/fuzz/$name.dict")
	mkdir -p "$out/corpus/$name"
	log=$out/logs/$t.log
	start=$(date +%s)
	rc=0
	"$out/$t" "${limit[@]}" -max_len=4096 -print_final_stats=1 "${dict[@]}" \
		-artifact_prefix="$out/artifacts/$name-" "$out/corpus/$name" "$seeds" >"$log" 2>&1 || rc=$?
	secs=$(($(date +%s) - start))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
	last=$(grep -E '^#[0-9]+' "$log" | tail -n1 || true)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
	corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p' <<<"$last")
	result=ok
	if [ "$rc" -ne 0 ] || grep -qE '^==[0-9]+==ERROR|property violated|runtime error' "$log"; then
		result="FOUND (exit $rc), see $log and $out/artifacts/"
		found=1
	fi
	printf '%-20s %12s %8s %6s %8s  %s\n' "$t" "${execs:-?}" "$secs" "${cov:-?}" "${corp:-?}" "$result"
done
exit "$found"
