#!/usr/bin/env bash
# Installs what memguard needs from Debian's archive. Usage: deps.sh build|test|fuzz|bench
set -euo pipefail

build=(build-essential cmake pkg-config libsystemd-dev libinih-dev)
# VM integration tests: an emulator, a static busybox for the initramfs, and
# the runtimes the tests launch inside the guest; bash-completion for the unit test of the completion;
# prometheus for promtool, which checks the metrics files (unit and VM tests); debhelper, dpkg-dev and
# lintian to build and check the Debian package (memguardd_deb.sh installs it); Dask and Celery for the
# worker pool tests; Node for the wrapper test (launcher_wrapper.sh); rpm (rpmbuild) and rpmlint to build and
# check the RPM for EL9 sites (packaging/build-rpm.sh); GNU parallel, the reference memguard's sweeps are
# compared with side by side (tests/integration/parallel_side_by_side.sh, on the host and in the guest).
test=(libcmocka-dev clang-format cppcheck bash-completion qemu-system-x86 busybox-static cpio python3 pypy3
      default-jre-headless golang-go nodejs prometheus debhelper dpkg-dev lintian python3-distributed celery
      rpm rpmlint parallel)
# A real Slurm for the systemd VM test (tests/integration/systemd/slurm_*.sh): the guest sees the host's
# root, so it runs what is installed here. Its daemons must never run on the host itself. slurmdbd on
# MariaDB gives the guest's Slurm real accounting (sacct, MaxRSS per step).
slurm=(slurmd slurmctld slurm-client munge dbus slurmdbd mariadb-server)
daemons=(slurmd slurmctld munged slurmdbd mariadbd mysqld)
# The benchmark (bench/run.sh, bench/sweep.sh): the guests' emulator, what runs in them beside memguard
# (earlyoom, nohang, PyPy, GNU parallel: the guest's root is the host's, so they are installed here; no
# daemon starts at the install, below) and perf for the emulator's profile.
bench=(qemu-system-x86 busybox-static cpio python3 pypy3 earlyoom nohang parallel linux-perf)
# scripts/fuzz.sh: clang with libFuzzer and the sanitizer runtimes.
fuzz=(clang libclang-rt-14-dev)

case "${1:-}" in
build) want=("${build[@]}") ;;
test) want=("${build[@]}" "${test[@]}" "${slurm[@]}") ;;
fuzz) want=("${build[@]}" "${fuzz[@]}") ;;
bench) want=("${build[@]}" "${bench[@]}") ;;
*) echo "usage: $0 build|test|fuzz|bench" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# Stops any of Slurm's or munge's daemons that runs on this host (a package's
# start script, or an earlier install without the guard below).
stop_host_daemons() {
	local d pid
	for d in "${daemons[@]}"; do
		for pid in $(pgrep -x "$d" || true); do
			echo "deps: $d (pid $pid) runs on the host: stopping it" >&2
			kill "$pid" 2>/dev/null || true
		done
	done
	for d in "${daemons[@]}"; do
		for _ in $(seq 50); do
			pgrep -x "$d" >/dev/null || break
			sleep 0.1
		done
		if pgrep -x "$d" >/dev/null; then
			echo "deps: $d still runs on the host after SIGTERM" >&2
			exit 1
		fi
	done
}

if [ ${#missing[@]} -eq 0 ]; then
	[ "$1" = test ] && stop_host_daemons
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing ${missing[*]}; run as root or: apt-get install ${missing[*]}" >&2
	exit 1
fi

# No package may start a daemon here (invoke-rc.d asks policy-rc.d; 101 = "action forbidden").
# A policy-rc.d already in place is kept aside and put back afterwards.
policy=/usr/sbin/policy-rc.d
saved=
if [ -e "$policy" ]; then
	saved=$(mktemp)
	cp -p "$policy" "$saved"
fi
restore_policy() {
	if [ -n "$saved" ]; then mv -f "$saved" "$policy"; else rm -f "$policy"; fi
}
trap restore_policy EXIT
printf '#!/bin/sh\n# memguard deps.sh: no daemon starts while packages are installed.\nexit 101\n' >"$policy"
chmod 0755 "$policy"

export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends "${missing[@]}" ||
	{ apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"; }
restore_policy
trap - EXIT
[ "$1" = test ] && stop_host_daemons
exit 0
