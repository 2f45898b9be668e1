#!/usr/bin/env bash
# The whole test suite: installs the test dependencies, then
#   1. a strict build (-Werror) and the cmocka unit tests,
#   2. the same under AddressSanitizer + UndefinedBehaviorSanitizer,
#   3. clang-format and cppcheck over the sources, then a short run of every fuzz target,
#   4. the integration tests in a throwaway VM with a real cgroup v2 kernel, then the systemd unit
#      and memguard under a real Slurm in a VM with systemd as PID 1,
#   5. the benchmark smoke run, so the benchmark cannot rot.
# Nothing is skipped: a step that cannot run fails.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

step() { printf '\n==== %s\n' "$*"; }

step "dependencies"
scripts/deps.sh test

step "build (strict) and unit tests"
cmake -S . -B build -DMEMGUARD_TESTS=ON -DMEMGUARD_WERROR=ON -DMEMGUARD_SANITIZE=OFF >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest -L unit --output-on-failure -j"$jobs")

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
# (daemon_trust_deep.sh alone takes about 6 minutes: its 9,000 nested cgroups, then their freeing).
tests/vm/run-suite.sh --test-timeout 600

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
# The executable tests only (slurm_lib.sh is sourced); Slurm needs the memory and a few minutes.
MEMGUARD_SUITE_TESTS='tests/integration/systemd/*.sh' \
	tests/vm/run-suite.sh --systemd --mem 1536 --test-timeout 600

step "benchmark smoke run (the full one is bench/run.sh, outside CI)"
bench/run.sh --smoke

echo
echo "all test steps passed"
