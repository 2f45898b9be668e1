#!/usr/bin/env bash
# Installs the build dependencies, builds memguard, and runs a short
# demonstration of the launcher on this machine: four tasks, one of which
# tries to grow past its share. The summary says which mode memguard got
# (cgroup v2, or degraded where the node has none) and what became of each task.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh build
cmake -S . -B build -DMEMGUARD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
echo "built: build/bin/memguard build/bin/memguardd"
echo
echo "$ memguard -n 4 --mem 256M --explain -- sh -c '... task 3 grows without bound ...'"
set +e
build/bin/memguard -n 4 --mem 256M --explain -- sh -c \
	'if [ "$MEMGUARD_TASK" = 3 ]; then exec build/tests/programs/memhog -d 20 inf;
	 else exec build/tests/programs/memhog -H 1000 16; fi'
status=$?
set -e
echo
echo "memguard exited with status $status: the status of the first task that failed (see the table above)"
