#!/bin/bash
# Proves the VM harness: a guest with cgroup v2 memory + PSI and no swap, a working memory.max OOM kill,
# read-write shares, byte-exact output, exit status propagation, hang reporting, one boot for many tests
# in run-suite.sh, and the systemd variant. Ends with "N passed, N failed".
# Usage: tests/vm/selftest.sh [--no-systemd]     (--in-guest DIR is its own guest half)
# shellcheck disable=SC2016 # the single-quoted commands expand in the guest
set -uo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
vm=$script_dir/vm.sh

# The guest half: each check prints "ok NAME" or "FAIL NAME"; exits 1 if any failed.
in_guest() {
	local share=$1 bad=0 cg=/sys/fs/cgroup/selftest
	check() {
		local name=$1
		shift
		if "$@"; then echo "ok $name"; else echo "FAIL $name" && bad=1; fi
	}
	check "cgroup2 lists the memory controller" grep -qw memory /sys/fs/cgroup/cgroup.controllers
	check "/proc/pressure/memory is readable" grep -q '^some avg10=' /proc/pressure/memory
	check "a PSI trigger can be armed" bash -c 'exec 3<>/proc/pressure/memory && echo "some 150000 1000000" >&3'
	check "no swap" test "$(wc -l </proc/swaps)" -eq 1
	check "cwd is the caller's" test "$PWD" = "$share"
	check "MEMGUARD_* passes through" test "${MEMGUARD_SELFTEST:-}" = passed-through
	check "/dev/shm is writable" touch /dev/shm/selftest
	check "/dev/pts is mounted" grep -q ' /dev/pts devpts ' /proc/mounts
	check "process substitution works (/dev/fd)" bash -c 'read -r word < <(echo fd) && test "$word" = fd'

	echo +memory >/sys/fs/cgroup/cgroup.subtree_control
	mkdir "$cg"
	echo 64M >"$cg/memory.max"
	# 200 MiB of bytes really written, in a 64 MiB cgroup.
	{ bash -c "echo \$\$ >$cg/cgroup.procs && exec python3 -c 'b = b\"x\" * (200 << 20)'"; } 2>/dev/null
	check "the allocator was OOM-killed" test $? -eq 137
	check "memory.events counts oom_kill > 0" awk '$1 == "oom_kill" && $2 > 0 { ok = 1 } END { exit !ok }' \
		"$cg/memory.events"
	rmdir "$cg"

	check "the share is writable" bash -c "echo written-in-guest >'$share/from-guest'"
	return "$bad"
}

if [[ ${1:-} == --in-guest ]]; then
	in_guest "$2"
	exit
fi
with_systemd=1
[[ ${1:-} == --no-systemd ]] && with_systemd=0

passed=0
failed=0
# expect NAME CMD...: counts CMD's success or failure under NAME.
expect() {
	local name=$1
	shift
	if "$@"; then
		echo "ok $name"
		passed=$((passed + 1))
	else
		echo "FAIL $name"
		failed=$((failed + 1))
	fi
}
elapsed() {
	awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/share"

echo "# boot: features, --share"
start=$EPOCHREALTIME
(cd "$tmp/share" && MEMGUARD_SELFTEST=passed-through "$vm" --share "$tmp/share" -- \
	"$script_dir/selftest.sh" --in-guest "$tmp/share") >"$tmp/out" 2>&1
rc=$?
echo "# $(elapsed "$start")s"
sed 's/^/    /' "$tmp/out"
expect "the guest checks above all pass" test "$rc" -eq 0
expect "the host sees the file the guest wrote into the share" \
	grep -qx written-in-guest "$tmp/share/from-guest"

echo "# boot: exit 3, default share, byte-exact output"
top=$(cd "$script_dir/../.." && pwd -P)
start=$EPOCHREALTIME
(cd "$top" && "$vm" -- bash -c 'grep -q "^share $PWD 9p rw" /proc/mounts && test -w . && {
	printf "tab\tcr\r\n"; seq 1 20000; exit 3; }') >"$tmp/out" 2>"$tmp/err"
rc=$?
echo "# $(elapsed "$start")s"
expect "exit 3 in the guest makes vm.sh exit 3 (got $rc)" test "$rc" -eq 3
printf 'tab\tcr\r\n' >"$tmp/want"
seq 1 20000 >>"$tmp/want"
expect "the guest's output arrives byte for byte" cmp -s "$tmp/out" "$tmp/want"

echo "# boot: a hang"
"$vm" --timeout 30 -- sleep 1000 >"$tmp/out" 2>"$tmp/err"
rc=$?
sed 's/^/    /' "$tmp/err"
expect "sleep 1000 with --timeout 30 fails (exit $rc)" test "$rc" -ne 0
expect "the hang is reported" grep -q 'vm: guest hung or crashed' "$tmp/err"
expect "with the console tail" grep -q 'vm-init: ' "$tmp/err"

echo "# boot: run-suite.sh, three tests in one boot"
printf 'cat /proc/sys/kernel/random/boot_id >>%q/boots\n' "$tmp/share" >"$tmp/share/test_a.sh"
cp "$tmp/share/test_a.sh" "$tmp/share/test_b.sh"
printf 'cat /proc/sys/kernel/random/boot_id >>%q/boots\necho expected failure; exit 2\n' "$tmp/share" \
	>"$tmp/share/test_c.sh"
"$script_dir/run-suite.sh" --share "$tmp/share" "$tmp/share"/test_*.sh >"$tmp/out" 2>&1
rc=$?
sed 's/^/    /' "$tmp/out"
expect "a failing test makes run-suite.sh fail" test "$rc" -ne 0
expect "the summary line is the last line" test "$(tail -n 1 "$tmp/out")" = "2 passed, 1 failed"
expect "a failing test's output is shown" grep -q '| expected failure' "$tmp/out"
expect "all three ran in one boot" test "$(sort -u "$tmp/share/boots" | wc -l)" -eq 1 \
	-a "$(wc -l <"$tmp/share/boots")" -eq 3

if ((with_systemd)); then
	echo "# boot: --systemd"
	start=$EPOCHREALTIME
	"$vm" --systemd --timeout 300 -- bash -c 'test "$(cat /proc/1/comm)" = systemd &&
		systemd-run --quiet --scope -p MemoryMax=64M true && exit 5' >"$tmp/out" 2>&1
	rc=$?
	echo "# $(elapsed "$start")s"
	sed 's/^/    /' "$tmp/out"
	expect "systemd is PID 1, systemd-run --scope works, exit 5 propagates (got $rc)" test "$rc" -eq 5
fi

echo "$passed passed, $failed failed"
((failed == 0))
