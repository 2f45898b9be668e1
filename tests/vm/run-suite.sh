#!/bin/bash
# Runs integration test executables in sequence inside ONE guest boot (boots cost seconds under TCG),
# each under its own timeout, and ends with a single "N passed, N failed" line.
# With --direct it runs them right here instead: that is what it does inside the guest, and what to use
# on a host that already has cgroup v2 with the memory controller (as root).
set -euo pipefail

usage() {
	cat >&2 <<-'EOF'
		usage: run-suite.sh [--direct] [--test-timeout SEC] [--kernel 5.10|6.1|6.12] [--append ARGS]
		                    [--mem MIB] [--timeout SEC] [--share DIR] [--systemd] [TEST...]
		  TEST...             executables (or bash scripts) to run; default: the executable ELF and #!
		                      files matching $MEMGUARD_SUITE_TESTS, globs relative to the repo
		                      (default: build/tests/integration/test_* tests/integration/*.sh)
		  --direct            run the tests on this machine, no guest
		  --test-timeout SEC  per-test timeout (default 120)
		  --kernel, --append, --mem, --share, --systemd
		                      passed to vm.sh (--kernel 5.10 --append psi=0: Debian 11's kernel, PSI off)
		  --timeout SEC       guest timeout (default: enough for every test to time out)
	EOF
	exit 2
}

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
top=$(git -C "$script_dir" rev-parse --show-toplevel 2>/dev/null) || top=$(cd "$script_dir/../.." && pwd -P)

direct=0
test_timeout=120
vm_timeout=
vm_args=()
while (($#)); do
	case $1 in
	--direct) direct=1; shift ;;
	--test-timeout) test_timeout=${2:-}; shift 2 || usage ;;
	--timeout) vm_timeout=${2:-}; shift 2 || usage ;;
	--mem | --share | --kernel | --append) vm_args+=("$1" "${2:-}"); shift 2 || usage ;;
	--systemd) vm_args+=("$1"); shift ;;
	--) shift; break ;;
	-*) usage ;;
	*) break ;;
	esac
done
[[ $test_timeout =~ ^[0-9]+$ && $vm_timeout =~ ^[0-9]*$ ]] || usage

tests=()
if (($#)); then
	for t in "$@"; do
		tests+=("$(realpath -- "$t")")
	done
else
	shopt -s nullglob
	cd "$top"
	# shellcheck disable=SC2086 # word splitting and globbing of the patterns is the point
	for t in ${MEMGUARD_SUITE_TESTS:-build/tests/integration/test_* tests/integration/*.sh}; do
		[[ $t == /* ]] || t=$top/$t
		# A test is an executable ELF or #! script: this skips build by-products (objects, dependency
		# files) and sourced helpers (lib.sh) that match the patterns.
		[[ -f $t && -x $t && $(head -c 4 "$t" | tr -d '\0') =~ ^(#!|.ELF) ]] && tests+=("$t")
	done
	shopt -u nullglob
fi
if ((${#tests[@]} == 0)); then
	echo "run-suite: no tests found"
	echo "0 passed, 0 failed"
	exit 0
fi

if ((!direct)); then
	# Enough for every test to hit its timeout, plus the boot.
	vm_timeout=${vm_timeout:-$((120 + ${#tests[@]} * (test_timeout + 15)))}
	rc=0
	# Warnings reach the console log too: a test that hangs the kernel then leaves its stack trace
	# (soft lockups, RCU stalls) in what vm.sh shows, not only the one-line BUG.
	MEMGUARD_VM_KARGS="loglevel=5 ${MEMGUARD_VM_KARGS:-}" "$script_dir/vm.sh" "${vm_args[@]}" --timeout "$vm_timeout" -- \
		"$script_dir/run-suite.sh" --direct --test-timeout "$test_timeout" -- "${tests[@]}" || rc=$?
	# vm.sh already said why when the guest hung or crashed (124, 125): no summary came from the guest.
	((rc != 124 && rc != 125)) || echo "run-suite: the guest hung or crashed before the suite finished" >&2
	exit "$rc"
fi

cd "$top"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# The runner survives an OOM that its tests cause; each test gets the default score back.
echo -1000 >/proc/self/oom_score_adj 2>/dev/null || true
passed=0
failed=0
for t in "${tests[@]}"; do
	name=${t#"$top"/}
	run=("$t")
	[[ -x $t ]] || run=(bash "$t")
	start=$EPOCHREALTIME
	rc=0
	# The outer redirection silences bash's own "Killed" report; the reason is printed below.
	{
		(
			echo 0 >/proc/self/oom_score_adj 2>/dev/null || true
			exec timeout -k 10 "$test_timeout" "${run[@]}"
		) </dev/null >"$out" 2>&1
	} 2>/dev/null || rc=$?
	secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	if ((rc == 0)); then
		passed=$((passed + 1))
		echo "PASS $name (${secs}s)"
		continue
	fi
	failed=$((failed + 1))
	why="exit $rc"
	((rc <= 128)) || why="killed by signal $((rc - 128))"
	# 124: timeout's TERM worked; 137 past the deadline: its KILL was needed.
	if ((rc == 124 || (rc == 137 && ${secs%.*} >= test_timeout))); then
		why="timed out after ${test_timeout}s"
	fi
	echo "FAIL $name ($why, ${secs}s)"
	# Indented, so no line of a test's output can pass for the summary.
	sed 's/^/    | /' "$out"
done
echo "$passed passed, $failed failed"
((failed == 0))
