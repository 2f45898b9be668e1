#!/usr/bin/env bash
# Installs what memguard needs from Debian's archive. Usage: deps.sh build|test
set -euo pipefail

build=(build-essential cmake pkg-config libsystemd-dev libinih-dev)
# VM integration tests: an emulator, a static busybox for the initramfs, and
# the runtimes the tests launch inside the guest.
test=(libcmocka-dev clang-format cppcheck qemu-system-x86 busybox-static cpio python3 pypy3
      default-jre-headless golang-go)

case "${1:-}" in
build) want=("${build[@]}") ;;
test) want=("${build[@]}" "${test[@]}") ;;
*) echo "usage: $0 build|test" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing ${missing[*]}; run as root or: apt-get install ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends "${missing[@]}" ||
	{ apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"; }
