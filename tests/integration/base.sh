# The part of lib.sh that needs neither root nor cgroup v2: paths, a scratch folder and assertions.
# Sourced by lib.sh, and directly by the tests that run on the host (degraded) as well as in the guest.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${MEMGUARD_BUILD:-$top/build}
memguard=$build/bin/memguard
memguardd=$build/bin/memguardd
memhog=$build/tests/programs/memhog
cgroot=/sys/fs/cgroup
work=$(mktemp -d /tmp/mgtest.XXXXXX)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "  $*"; }

# json FILE EXPR: evaluates a Python expression over the parsed JSON as `r`.
json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

# memguard_here: sets mg to memguard's command line for a test that runs on the host as well as in the
# guest: cgroup mode where cgroup v2's memory controller and root allow it, --no-cgroups elsewhere.
memguard_here() {
	mg=("$memguard")
	if ! grep -qw memory "$cgroot/cgroup.controllers" 2>/dev/null || [ "$(id -u)" -ne 0 ]; then
		mg+=(--no-cgroups)
	fi
}

assert_eq() { [ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"; }
assert_contains() { grep -q -- "$2" "$1" || { cat "$1" >&2; fail "$3: '$2' not in $1"; }; }
