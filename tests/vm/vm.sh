#!/bin/bash
# Run one command as root inside a throwaway qemu guest with its own kernel: real cgroup v2 (memory
# controller) and PSI, which the build hosts (hybrid cgroup layout) cannot give us.
# See tests/vm/README.md. The guest's root is the host's / (read-only) under a tmpfs overlay; the share
# (default: the repo) is mounted read-write at the same path. vm.sh exits with the command's status.
set -euo pipefail

usage() {
	cat >&2 <<-'EOF'
		usage: vm.sh [--mem MIB] [--timeout SEC] [--share DIR] [--systemd] -- CMD [ARGS...]
		  --mem MIB      guest memory (default 1024)
		  --timeout SEC  kill the guest after SEC seconds (default 900)
		  --share DIR    host directory mounted read-write at the same path (default: the repo)
		  --systemd      boot systemd as PID 1 and run CMD from a oneshot service
	EOF
	exit 2
}

die() {
	echo "vm: $*" >&2
	exit 1
}

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
cache=${MEMGUARD_VM_CACHE:-/var/cache/memguard-vm}
# The modules the guest needs to mount its root, in load order (the recipe's order, for Debian 6.1).
modules=(virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci
	netfs fscache 9pnet 9pnet_virtio 9p overlay)

mem=1024
timeout=900
share=
mode=chroot
while (($#)); do
	case $1 in
	--mem) mem=${2:-}; shift 2 || usage ;;
	--timeout) timeout=${2:-}; shift 2 || usage ;;
	--share) share=${2:-}; shift 2 || usage ;;
	--systemd) mode=systemd; shift ;;
	--) shift; break ;;
	*) usage ;;
	esac
done
(($#)) || usage
[[ $mem =~ ^[0-9]+$ && $timeout =~ ^[0-9]+$ ]] || usage
if [[ -z $share ]]; then
	share=$(git -C "$script_dir" rev-parse --show-toplevel 2>/dev/null) || share=$script_dir/../..
fi
share=$(cd "$share" && pwd -P) || die "no such directory: $share"
[[ $share != / ]] || die "the share cannot be / (it is the guest's read-only root already)"
# KVM hangs on these hosts (nested virtualisation): TCG unless asked otherwise.
case ${MEMGUARD_VM_ACCEL:-tcg} in
kvm) accel=(-accel kvm -cpu host) ;;
tcg) accel=(-accel tcg -cpu max) ;;
*) die "MEMGUARD_VM_ACCEL must be tcg or kvm" ;;
esac

apt_install() {
	[[ $(id -u) == 0 ]] || die "missing packages ($*) and not root to install them"
	echo "vm: installing $*" >&2
	apt-get install -y -qq --no-install-recommends "$@" >&2 ||
		{ apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends "$@" >&2; } ||
		die "cannot install $*"
}

ensure_tools() {
	local need=()
	command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
	# The initramfs has no libc: only the static busybox works there.
	dpkg-query -W -f '${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' || need+=(busybox-static)
	command -v cpio >/dev/null || need+=(cpio)
	command -v xz >/dev/null || need+=(xz-utils)
	if [[ $mode == systemd && ! -x /lib/systemd/systemd ]]; then
		need+=(systemd)
	fi
	((${#need[@]} == 0)) || apt_install "${need[@]}"
}

# Prints the kernel package linux-image-amd64 currently depends on (empty when apt does not know).
# apt-cache takes a second, so the answer is kept until apt's package lists change.
kernel_package() {
	local memo=$cache/kernel.pkg
	if [[ -s $memo && $memo -nt /var/lib/apt/lists ]]; then
		cat "$memo"
		return
	fi
	apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }' |
		tee "$memo" || true
}

# Unpacks the ELF kernel from bzImage $1 into $2 when it is xz-compressed (Debian's choice): qemu boots
# an ELF through its PVH entry, which skips the decompressor, 4 of 6 seconds of a TCG boot.
extract_vmlinux() {
	local off
	off=$(grep -aboF $'\xfd7zXZ\x00' "$1" | head -n 1 | cut -d: -f1)
	[[ -n $off ]] || return 0
	tail -c +"$((off + 1))" "$1" | xz -dc --single-stream >"$2" 2>/dev/null || true
	[[ $(head -c 4 "$2") == $'\x7fELF' ]] || rm -f "$2"
}

# Downloads package $1 into directory $2, refreshing apt's lists once if that fails.
download() {
	(cd "$2" && apt-get download -qq "$1" 2>/dev/null) ||
		{ apt-get update -qq >&2 && (cd "$2" && apt-get download -qq "$1" 2>/dev/null); }
}

# Unpacks kernel package file $1 (version $2) into $cache/kernel-$2: vmlinuz plus the needed modules,
# uncompressed (busybox insmod reads plain .ko only) and listed in load order.
unpack_kernel() {
	local deb=$1 kver=$2 x dir mod ko
	x=$(dirname "$deb")/x
	dpkg-deb -x "$deb" "$x"
	[[ -f $x/boot/vmlinuz-$kver ]] || die "${deb##*/} has no boot/vmlinuz-$kver"
	dir=$cache/kernel-$kver
	rm -rf "$dir.new"
	mkdir -p "$dir.new/modules"
	cp "$x/boot/vmlinuz-$kver" "$dir.new/vmlinuz"
	extract_vmlinux "$dir.new/vmlinuz" "$dir.new/vmlinux"
	for mod in "${modules[@]}"; do
		ko=$(find "$x/lib/modules/$kver" -name "$mod.ko*" | head -n 1)
		case $ko in
		*.ko) cp "$ko" "$dir.new/modules/$mod.ko" ;;
		*.ko.xz) xz -dc "$ko" >"$dir.new/modules/$mod.ko" ;;
		# Built in, or gone in a newer kernel (fscache merged into netfs): nothing to load.
		*) continue ;;
		esac
		echo "$mod" >>"$dir.new/modules/load.order"
	done
	rm -rf "$dir"
	mv "$dir.new" "$dir"
	# Only the newest kernel is kept.
	find "$cache" -maxdepth 1 -name 'kernel-*' ! -name "kernel-$kver" -exec rm -rf {} +
}

# Sets $kdir to the cached kernel of the current Debian ABI, fetching it when needed; falls back to
# any kernel already cached when apt cannot resolve or download one.
ensure_kernel() {
	local pkg tmp
	pkg=$(kernel_package)
	if [[ -z $pkg ]]; then
		apt-get update -qq >&2 || true
		pkg=$(kernel_package)
	fi
	if [[ -n $pkg ]]; then
		kdir=$cache/kernel-${pkg#linux-image-}
		[[ -f $kdir/vmlinuz ]] && return
		echo "vm: fetching $pkg" >&2
		tmp=$(mktemp -d)
		if download "$pkg" "$tmp"; then
			unpack_kernel "$tmp"/*.deb "${pkg#linux-image-}"
			rm -rf "$tmp"
			return
		fi
		rm -rf "$tmp"
		echo "vm: cannot download $pkg" >&2
	fi
	kdir=$(find "$cache" -maxdepth 2 -path "$cache/kernel-*/vmlinuz" -printf '%h\n' | sort -V | tail -n 1)
	[[ -n $kdir ]] || die "no kernel: cannot resolve or download linux-image-amd64's kernel package"
	echo "vm: using cached ${kdir##*/}" >&2
}

# Sets $initrd to the initramfs for $kdir, rebuilt whenever the init script, kernel or busybox changes.
ensure_initramfs() {
	local key stage
	key=$({
		cat "$script_dir/init.sh" "$kdir/modules/load.order"
		echo "$kdir"
		dpkg-query -W -f '${Version}' busybox-static
	} | sha256sum | cut -c1-16)
	initrd=$cache/initramfs-$key.cpio.gz
	[[ -f $initrd ]] && return
	find "$cache" -maxdepth 1 -name 'initramfs-*' -delete
	stage=$(mktemp -d)
	mkdir -p "$stage"/{bin,dev,proc,sys,lib}
	cp /bin/busybox "$stage/bin/busybox"
	install -m 0755 "$script_dir/init.sh" "$stage/init"
	cp -r "$kdir/modules" "$stage/lib/modules"
	mknod "$stage/dev/console" c 5 1
	(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) >"$initrd.tmp"
	rm -rf "$stage"
	mv "$initrd.tmp" "$initrd"
}

# Writes the guest's config and run.sh into the control directory $ctl.
write_guest_files() {
	local cwd name
	cwd=$(pwd -P)
	[[ $cwd == "$share" || $cwd == "$share"/* ]] || cwd=$share
	printf 'SHARE=%q\nMODE=%q\n' "$share" "$mode" >"$ctl/config"
	{
		echo '#!/bin/bash'
		echo '# Generated by vm.sh: runs the command in the guest, records its exit status.'
		echo 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
		echo 'export HOME=/root LANG=C.UTF-8 MEMGUARD_VM=1'
		for name in $(compgen -e); do
			[[ $name == MEMGUARD_* || $name == CI ]] && printf 'export %s=%q\n' "$name" "${!name}"
		done
		# ttyS1 is the host's stdout: raw, so the output arrives byte for byte.
		echo 'stty -F /dev/ttyS1 raw -echo'
		echo '# A guest-wide OOM must not take the status with it; the command gets the default score.'
		echo 'echo -1000 >/proc/self/oom_score_adj'
		printf '(cd %q && echo 0 >/proc/self/oom_score_adj && %s) </dev/null >/dev/ttyS1 2>&1\n' \
			"$cwd" "$(printf '%q ' "$@")"
		cat <<-'EOF'
			status=$?
			# stty sets the mode with TCSADRAIN: it returns once the output has left the UART.
			stty -F /dev/ttyS1 raw -echo
			echo "$status" >/memguard-vm/status
			sync
		EOF
	} >"$ctl/run.sh"
}

# Escapes a path for a qemu option value.
qpath() {
	printf '%s' "${1//,/,,}"
}

mkdir -p "$cache"
exec 9>"$cache/lock"
flock 9
ensure_tools
ensure_kernel
ensure_initramfs
flock -u 9

ctl=$(mktemp -d /tmp/memguard-vm.XXXXXX)
trap 'rm -rf "$ctl"' EXIT
write_guest_files "$@"

kernel=$kdir/vmlinux
[[ -f $kernel ]] || kernel=$kdir/vmlinuz
ninep=security_model=none,multidevs=remap
rc=0
timeout --kill-after=10 "$timeout" qemu-system-x86_64 \
	-machine pc "${accel[@]}" -smp 2 -m "$mem" \
	-nodefaults -no-user-config -display none -no-reboot \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 quiet loglevel=3 panic=-1 ${MEMGUARD_VM_KARGS:-}" \
	-chardev "file,id=con,path=$(qpath "$ctl/console.log")" -serial chardev:con \
	-chardev stdio,id=out,signal=off -serial chardev:out \
	-fsdev "local,id=hostroot,path=/,readonly=on,$ninep" \
	-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
	-fsdev "local,id=share,path=$(qpath "$share"),$ninep" \
	-device virtio-9p-pci,fsdev=share,mount_tag=share \
	-fsdev "local,id=vmctl,path=$(qpath "$ctl"),$ninep" \
	-device virtio-9p-pci,fsdev=vmctl,mount_tag=vmctl \
	</dev/null || rc=$?

if [[ -s $ctl/status ]]; then
	exit "$(<"$ctl/status")"
fi
if ((rc == 124 || rc == 137)); then
	echo "vm: guest hung or crashed: no exit status after ${timeout}s (qemu killed)" >&2
	rc=124
else
	echo "vm: guest hung or crashed: qemu exited with $rc and no exit status" >&2
	rc=125
fi
echo "vm: last lines of the guest console:" >&2
tail -n 80 "$ctl/console.log" >&2 2>/dev/null || true
exit "$rc"
