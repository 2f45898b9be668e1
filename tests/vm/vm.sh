#!/bin/bash
# Run one command as root inside a throwaway qemu guest with its own kernel: real cgroup v2 (memory
# controller) and PSI, which the build hosts (hybrid cgroup layout) cannot give us.
# See tests/vm/README.md. The guest's root is the host's / (read-only) under a tmpfs overlay; the share
# (default: the repo) is mounted read-write at the same path. vm.sh exits with the command's status.
set -euo pipefail

usage() {
	cat >&2 <<-'EOF'
		usage: vm.sh [--kernel 5.10|6.1|6.12] [--append ARGS] [--mem MIB] [--timeout SEC] [--share DIR]
		             [--systemd] -- CMD [ARGS...]
		  --kernel SERIES  the guest's kernel: Debian's linux-image-amd64 of bullseye (5.10), bookworm
		                   (6.1, the default) or trixie (6.12), from the archive apt already uses
		  --append ARGS    extra kernel parameters, e.g. 'psi=0'
		  --mem MIB        guest memory (default 1024)
		  --timeout SEC    kill the guest after SEC seconds (default 900)
		  --share DIR      host directory mounted read-write at the same path (default: the repo)
		  --systemd        boot systemd as PID 1 and run CMD from a oneshot service
	EOF
	exit 2
}

die() {
	echo "vm: $*" >&2
	exit 1
}

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
cache=${MEMGUARD_VM_CACHE:-/var/cache/memguard-vm}
# The modules the guest needs to mount its root: virtio-pci devices, 9p over virtio, overlayfs. What they
# need in turn differs by kernel (6.1 splits out virtio_pci_*_dev and netfs, 5.10 has neither, 6.12 builds
# virtio in and drops fscache), so it is read from each module's own depends= field: no modules.dep ships
# in the package.
root_modules=(virtio_pci 9pnet_virtio 9p overlay)
# --kernel: the Debian suite whose linux-image-amd64 gives each kernel series.
declare -A suite_of=([5.10]=bullseye [6.1]=bookworm [6.12]=trixie)

series=6.1
append=
mem=1024
timeout=900
share=
mode=chroot
while (($#)); do
	case $1 in
	--kernel) series=${2:-}; shift 2 || usage ;;
	--append) append=${2:-}; shift 2 || usage ;;
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
[[ -n ${suite_of[$series]:-} ]] || die "--kernel must be 5.10, 6.1 or 6.12 (not '$series')"
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

# Sets apt_opts (the options that point apt at the suite of --kernel), memo (where the resolved package
# name is kept) and foreign (1 when that suite is not the host's own). The host's suite uses apt as it is;
# another suite gets a private sources list naming the same archive URI as the host's apt, with its own
# lists and caches below $cache/apt-SUITE, so the host's apt state is never touched.
setup_apt() {
	local suite=${suite_of[$series]} host_suite uri adir
	host_suite=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release 2>/dev/null | tr -d '"')
	apt_opts=()
	foreign=0
	memo=$cache/kernel.pkg
	[[ $suite != "$host_suite" ]] || return 0
	foreign=1
	memo=$cache/kernel-$series.pkg
	# The URI the host's apt uses for its own suite's main component (deb.debian.org, a mirror or a proxy).
	# shellcheck disable=SC2016 # apt's own $(FIELD) placeholders
	uri=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' 2>/dev/null |
		awk -v s="$host_suite" '!found && $2 == s && $3 == "main" { print $1; found = 1 }')
	[[ -n $uri ]] || die "--kernel $series: cannot find the Debian archive's URI in apt's sources" \
		"(no '${host_suite:-?} main' entry)"
	adir=$cache/apt-$suite
	mkdir -p "$adir/lists/partial" "$adir/cache/archives/partial" "$adir/parts"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite main" >"$adir/sources.list"
	apt_opts=(-o "Dir::Etc::sourcelist=$adir/sources.list" -o "Dir::Etc::sourceparts=$adir/parts"
		-o "Dir::State::Lists=$adir/lists" -o "Dir::Cache=$adir/cache" -o Dir::Cache::pkgcache=
		-o Dir::Cache::srcpkgcache= -o APT::Sandbox::User=root)
}

# Refreshes the package lists apt_opts point at.
apt_update() {
	apt-get "${apt_opts[@]}" update -qq >&2
}

# Prints the kernel package linux-image-amd64 currently depends on in the suite of --kernel (empty when
# apt does not know). apt-cache takes a second, so the answer is kept until apt's package lists change
# (the host's suite) or for a day (another suite, whose lists only vm.sh refreshes).
kernel_package() {
	local fresh=0
	if [[ -s $memo ]]; then
		if ((foreign)); then
			[[ -z $(find "$memo" -mmin -1440) ]] || fresh=1
		else
			[[ ! $memo -nt /var/lib/apt/lists ]] || fresh=1
		fi
	fi
	if ((fresh)); then
		cat "$memo"
		return
	fi
	((!foreign)) || apt_update || return 0
	apt-cache "${apt_opts[@]}" depends linux-image-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ && !found { print $2; found = 1 }' | tee "$memo" || true
}

# Unpacks the ELF kernel from bzImage $1 into $2 when it is xz-compressed (Debian's choice up to 6.1;
# trixie's is zstd, which boots as it is): qemu boots an ELF through its PVH entry, which skips the
# decompressor, 4 of 6 seconds of a TCG boot.
extract_vmlinux() {
	local off
	off=$(grep -aboF $'\xfd7zXZ\x00' "$1" | head -n 1 | cut -d: -f1) || true
	[[ -n $off ]] || return 0
	tail -c +"$((off + 1))" "$1" | xz -dc --single-stream >"$2" 2>/dev/null || true
	[[ $(head -c 4 "$2") == $'\x7fELF' ]] || rm -f "$2"
}

# Downloads package $1 into directory $2, refreshing apt's lists once if that fails.
download() {
	(cd "$2" && apt-get "${apt_opts[@]}" download -qq "$1" 2>/dev/null) ||
		{ apt_update && (cd "$2" && apt-get "${apt_opts[@]}" download -qq "$1"); }
}

# Copies module file $1 (.ko, or compressed: busybox insmod reads plain .ko only) to $2, uncompressed.
copy_module() {
	case $1 in
	*.ko) cp "$1" "$2" ;;
	*.ko.xz) xz -dc "$1" >"$2" ;;
	*.ko.gz) gzip -dc "$1" >"$2" ;;
	*.ko.zst)
		command -v zstd >/dev/null || die "${1##*/} is zstd-compressed: apt-get install zstd"
		zstd -qdc "$1" >"$2"
		;;
	*) die "unknown module file ${1##*/}" ;;
	esac
}

# Adds module $1 and, before it, every module it depends on to $mods_dir and to the load order $order,
# from the unpacked module tree $mods_src. A module the kernel builds in needs nothing; one that is
# neither built in nor in the package is a loud failure (the guest could not mount its root).
add_module() {
	local mod=${1//-/_} ko deps dep
	[[ -z ${seen[$mod]:-} ]] || return 0
	seen[$mod]=1
	grep -qx "$mod" <<<"$builtin" && return 0
	ko=$(find "$mods_src" \( -name "$mod.ko*" -o -name "${mod//_/-}.ko*" \) -print -quit)
	[[ -n $ko ]] || die "kernel $kver has no module $mod and does not build it in (needed for the guest's root)"
	copy_module "$ko" "$mods_dir/$mod.ko"
	deps=$(tr '\0' '\n' <"$mods_dir/$mod.ko" | sed -n 's/^depends=//p')
	for dep in ${deps//,/ }; do
		add_module "$dep"
	done
	order+=("$mod")
}

# Unpacks kernel package file $1 (version $2) into $cache/kernel-$2: vmlinuz plus the needed modules,
# uncompressed and listed in load order.
unpack_kernel() {
	local deb=$1 kver=$2 x dir mods_src mods_dir builtin order=()
	local -A seen=()
	x=$(dirname "$deb")/x
	dpkg-deb -x "$deb" "$x"
	[[ -f $x/boot/vmlinuz-$kver ]] || die "${deb##*/} has no boot/vmlinuz-$kver"
	# /lib/modules up to bookworm, /usr/lib/modules from trixie on.
	mods_src=$x/lib/modules/$kver
	[[ -d $mods_src ]] || mods_src=$x/usr/lib/modules/$kver
	[[ -d $mods_src ]] || die "${deb##*/} has no lib/modules/$kver"
	builtin=$(sed 's|.*/||; s|\.ko$||; s|-|_|g' "$mods_src/modules.builtin" 2>/dev/null || true)
	dir=$cache/kernel-$kver
	rm -rf "$dir.new"
	mkdir -p "$dir.new/modules"
	mods_dir=$dir.new/modules
	cp "$x/boot/vmlinuz-$kver" "$dir.new/vmlinuz"
	extract_vmlinux "$dir.new/vmlinuz" "$dir.new/vmlinux"
	for mod in "${root_modules[@]}"; do
		add_module "$mod"
	done
	printf '%s\n' "${order[@]}" >"$mods_dir/load.order"
	echo "vm: kernel $kver loads: ${order[*]}" >&2
	rm -rf "$dir"
	mv "$dir.new" "$dir"
	# Only the newest kernel of each series is kept ("kernel-6.1.*" does not match "kernel-6.12.*").
	find "$cache" -maxdepth 1 -name "kernel-$series.*" ! -name "kernel-$kver" -exec rm -rf {} +
}

# Sets $kdir to the cached kernel of --kernel's series (the current Debian ABI), fetching it when needed.
# When apt cannot resolve or download it, a cached kernel of the same series is used, with a message;
# never one of another series: with none, this fails.
ensure_kernel() {
	local pkg tmp
	setup_apt
	pkg=$(kernel_package)
	if [[ -z $pkg ]] && ((!foreign)); then
		apt_update || true
		pkg=$(kernel_package)
	fi
	if [[ -n $pkg && $pkg != linux-image-"$series".* ]]; then
		die "--kernel $series: linux-image-amd64 of ${suite_of[$series]} depends on $pkg, not a $series kernel"
	fi
	if [[ -n $pkg ]]; then
		kdir=$cache/kernel-${pkg#linux-image-}
		[[ -f $kdir/vmlinuz ]] && return
		echo "vm: fetching $pkg (${suite_of[$series]})" >&2
		tmp=$(mktemp -d)
		if download "$pkg" "$tmp"; then
			unpack_kernel "$tmp"/*.deb "${pkg#linux-image-}"
			rm -rf "$tmp"
			return
		fi
		rm -rf "$tmp"
		echo "vm: cannot download $pkg" >&2
	else
		echo "vm: cannot resolve linux-image-amd64 of ${suite_of[$series]} (--kernel $series)" >&2
	fi
	kdir=$(find "$cache" -maxdepth 2 -path "$cache/kernel-$series.*/vmlinuz" -printf '%h\n' | sort -V | tail -n 1)
	[[ -n $kdir ]] || die "no $series kernel: cannot resolve or download it, and none is cached"
	echo "vm: using the cached ${kdir##*/} instead" >&2
}

# Sets $initrd to the initramfs for $kdir, rebuilt whenever the init script, kernel or busybox changes.
# One is kept per kernel.
ensure_initramfs() {
	local key stage kname=${kdir##*/kernel-}
	key=$({
		cat "$script_dir/init.sh" "$kdir/modules/load.order"
		echo "$kdir"
		dpkg-query -W -f '${Version}' busybox-static
	} | sha256sum | cut -c1-16)
	initrd=$cache/initramfs-$kname-$key.cpio.gz
	[[ -f $initrd ]] && return
	# This kernel's older ones, and those named before there was a kernel in the name.
	find "$cache" -maxdepth 1 \( -name "initramfs-$kname-*" -o -name 'initramfs-????????????????.cpio.gz' \) -delete
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
		# The guest runs the kernel it was asked for, or nothing: MEMGUARD_VM_KERNEL tells the tests which.
		printf 'kver=%q\n' "${kdir##*/kernel-}"
		cat <<-'EOF'
			if [[ $(uname -r) != "$kver" ]]; then
				echo "vm: the guest runs kernel $(uname -r), not $kver" >/dev/ttyS1
				echo 125 >/memguard-vm/status
				sync
				exit
			fi
			export MEMGUARD_VM_KERNEL=$kver
		EOF
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
	-append "console=ttyS0 quiet loglevel=3 panic=-1 ${MEMGUARD_VM_KARGS:-} $append" \
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
