#!/usr/bin/env bash
# The whole test suite: installs the test dependencies, then
#   1. a strict build (-Werror) and the cmocka unit tests,
#   2. the same under AddressSanitizer + UndefinedBehaviorSanitizer,
#   3. clang-format and cppcheck over the sources, then a short run of every fuzz target,
#   4. the integration tests in a throwaway VM with a real cgroup v2 kernel, then the systemd unit
#      and memguard under a real Slurm in a VM with systemd as PID 1,
#   5. the benchmark smoke run, so the benchmark cannot rot.
# Nothing is skipped: a step that cannot run fails.
#
# The integration tests of $kernel_tests below on other kernels, each in its own guest after the 6.1
# step: by default on 5.10 with psi=0 (the fallbacks: no PSI, cgroup.kill, memory.peak, process_mrelease,
# oom_group_kill); 6.12 on demand:
#   --kernels LIST     LIST: 5.10 and/or 6.12, comma-separated (or MEMGUARD_TEST_KERNELS=LIST; "" for none).
#                      5.10 is Debian 11's kernel booted with psi=0 (no /proc/pressure, as on RHEL 9's
#                      default); 6.12 is trixie's, PSI on.
#   --kernels-systemd  also the systemd and Slurm tests of $kernel_systemd_tests on each of those
#                      kernels (or MEMGUARD_TEST_KERNELS_SYSTEMD=1)
#   --kernels-only     only the dependencies, the strict build with its unit tests, and those kernel steps
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

usage() {
	echo "usage: scripts/test.sh [--kernels 5.10,6.12] [--kernels-systemd] [--kernels-only]" >&2
	exit 2
}

# The integration tests that run on the other kernels: the launcher's and the daemon's, chosen to
# cover the fallbacks a kernel without cgroup.kill, memory.peak, process_mrelease, oom_group_kill or
# PSI takes (tests/vm/README.md; docs/platforms.md says what each kernel gave). Their assertions
# follow the kernel (kernel_has in tests/integration/lib.sh): which way a kill went is asserted by
# test_cgroup_ops, launcher_sigkill, daemon_elastic and daemon_oom_group; launcher_noclone3 and
# test_cgroup_ops force the clone3 and cgroup.freeze fallbacks that no kernel from 5.10 up takes by
# itself. Add tests here. On 6.12
# these took 376 s under TCG, plus the boot; test_psi_trigger stays out: it tests PSI, which psi=0 removes.
kernel_tests=(
	build/tests/integration/test_cgroup_ops
	build/tests/integration/test_oom_events
	tests/integration/launcher_runaway.sh
	tests/integration/launcher_elastic_cap.sh
	tests/integration/launcher_memreason.sh
	tests/integration/launcher_sigkill.sh
	tests/integration/launcher_fork.sh
	tests/integration/launcher_noclone3.sh
	tests/integration/launcher_exec.sh
	tests/integration/launcher_degraded.sh
	tests/integration/launcher_tasklist.sh
	tests/integration/daemon_lifecycle.sh
	tests/integration/daemon_elastic.sh
	tests/integration/daemon_oom_group.sh
	tests/integration/daemon_throttle.sh
	tests/integration/daemon_place.sh
	tests/integration/daemon_blame.sh
	tests/integration/daemon_place_own.sh
)
# With --kernels-systemd: the unit and the placement socket under systemd, and memguard under a real
# Slurm (one node, then the farm across two slurmd). All of the systemd step but the .deb's test, whose
# package is built later.
kernel_systemd_tests=(
	tests/integration/systemd/memguardd_unit.sh
	tests/integration/systemd/memguardd_place.sh
	tests/integration/systemd/memguardd_socket_stop.sh
	tests/integration/systemd/slurm_memguard.sh
	tests/integration/systemd/slurm_farm.sh
)
# The extra kernel parameters each kernel boots with.
declare -A kernel_append=([5.10]=psi=0 [6.12]="")

kernels=${MEMGUARD_TEST_KERNELS-5.10}
kernels_systemd=${MEMGUARD_TEST_KERNELS_SYSTEMD:-0}
kernels_only=0
while (($#)); do
	case $1 in
	--kernels) kernels=${2:-}; shift 2 || usage ;;
	--kernels-systemd) kernels_systemd=1; shift ;;
	--kernels-only) kernels_only=1; shift ;;
	*) usage ;;
	esac
done
IFS=, read -r -a kernel_list <<<"$kernels"
for k in "${kernel_list[@]}"; do
	[[ -n ${kernel_append[$k]+set} ]] || { echo "test.sh: --kernels takes 5.10 and 6.12, not '$k'" >&2; exit 2; }
done
((kernels_only == 0 || ${#kernel_list[@]} > 0)) || { echo "test.sh: --kernels-only needs --kernels" >&2; exit 2; }

step() { printf '\n==== %s\n' "$*"; }

# The integration tests (and with --kernels-systemd the systemd ones) on each kernel of --kernels.
kernel_steps() {
	local k
	for k in "${kernel_list[@]}"; do
		step "integration tests in a VM on kernel $k${kernel_append[$k]:+ (${kernel_append[$k]})}"
		tests/vm/run-suite.sh --kernel "$k" --append "${kernel_append[$k]}" --test-timeout 600 \
			"${kernel_tests[@]}"
		((kernels_systemd)) || continue
		step "the systemd unit and Slurm in a VM with systemd as PID 1 on kernel $k${kernel_append[$k]:+ (${kernel_append[$k]})}"
		tests/vm/run-suite.sh --systemd --kernel "$k" --append "${kernel_append[$k]}" --mem 1536 \
			--test-timeout 900 "${kernel_systemd_tests[@]}"
	done
}

step "dependencies"
scripts/deps.sh test

step "build (strict) and unit tests"
cmake -S . -B build -DMEMGUARD_TESTS=ON -DMEMGUARD_WERROR=ON -DMEMGUARD_SANITIZE=OFF >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest -L unit --output-on-failure -j"$jobs")

if ((kernels_only)); then
	kernel_steps
	echo
	echo "all kernel test steps passed"
	exit 0
fi

step "unit tests under ASan + UBSan"
cmake -S . -B build-asan -DMEMGUARD_TESTS=ON -DMEMGUARD_WERROR=ON -DMEMGUARD_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	ctest -L unit --output-on-failure -j"$jobs")

step "format and static analysis"
sources=$(git ls-files '*.c' '*.h')
# shellcheck disable=SC2086 # one word per file
clang-format --dry-run --Werror $sources
# cppcheck does not model __attribute__((cleanup)), so its leak check sees
# false leaks; LeakSanitizer in the ASan step checks leaks for real.
cppcheck --quiet --error-exitcode=1 --enable=warning,portability --inline-suppr \
	--suppress=missingIncludeSystem --suppress=memleak -Iinclude -Ilauncher -Idaemon lib launcher daemon

step "fuzz smoke run: every parser's libFuzzer target for 1 s (the long runs: docs/fuzzing.md)"
scripts/fuzz.sh --smoke

step "Torque/PBS prologue and epilogue against a fake cgroup tree"
packaging/pbs/test-hooks.sh

step "integration tests in a VM (real cgroup v2, PSI, memory pressure)"
# Under TCG a loaded host makes every test several times slower: a generous
# per-test limit keeps a hung test from passing without failing a slow one
# (daemon_trust_deep.sh alone takes about 6 minutes: its 9,000 nested cgroups, then their freeing;
# 10 on a loaded host).
tests/vm/run-suite.sh --test-timeout 900

kernel_steps

step "the Debian package: build it into build-deb/ (the VM test below installs it) and lint it"
# build-deb/ is inside the repo, which the guest shares; the host's /tmp it does not see.
rm -rf build-deb
packaging/build-deb.sh build-deb
lintian --fail-on error --info --display-info build-deb/memguard_*.changes

step "the RPM for EL9 sites: build it into build-rpm/ with Debian's rpmbuild and lint it (no errors)"
rm -rf build-rpm
packaging/build-rpm.sh build-rpm
rpmlint -c packaging/rpm/rpmlint.toml -r packaging/rpm/memguard.rpmlintrc build-rpm/*.rpm packaging/rpm/memguard.spec

step "the systemd unit and a real Slurm in a VM with systemd as PID 1"
# The executable tests only (slurm_lib.sh is sourced); Slurm needs the memory and a few minutes, and
# slurm_steps.sh runs slurmdbd on MariaDB beside it: 2 GiB.
MEMGUARD_SUITE_TESTS='tests/integration/systemd/*.sh' \
	tests/vm/run-suite.sh --systemd --mem 2048 --test-timeout 600

step "benchmark smoke run (the full one is bench/run.sh, outside CI)"
bench/run.sh --smoke

echo
echo "all test steps passed"
