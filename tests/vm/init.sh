#!/bin/busybox sh
# shellcheck shell=dash
# PID 1 of the test guest (packed into the initramfs by vm.sh).
# Builds the guest root: the host's / over 9p (read-only) under a tmpfs overlay, the work share and the
# control share (both read-write), then runs /memguard-vm/run.sh chrooted, or hands over to systemd.
# Messages go to the console (ttyS0), which vm.sh keeps in a log and shows only when something failed.

/bin/busybox --install -s /bin
export PATH=/bin

die() {
	echo "vm-init: $*"
	poweroff -f
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

# No modules.dep ships with the kernel package: vm.sh lists the modules in dependency order.
while read -r mod; do
	insmod "/lib/modules/$mod.ko" || die "insmod $mod failed"
done </lib/modules/load.order

ninep="trans=virtio,version=9p2000.L,msize=512000"
mkdir -p /lower /upper /newroot
mount -t 9p -o "$ninep,ro,cache=loose" hostroot /lower || die "cannot mount the host root over 9p"
mount -t tmpfs -o mode=0755 upper /upper
mkdir /upper/data /upper/work
mount -t overlay -o lowerdir=/lower,upperdir=/upper/data,workdir=/upper/work overlay /newroot ||
	die "cannot mount the overlay root"

mkdir -p /newroot/memguard-vm
mount -t 9p -o "$ninep" vmctl /newroot/memguard-vm || die "cannot mount the control share"
# Written by vm.sh: SHARE (absolute host path) and MODE (chroot or systemd).
# shellcheck source=/dev/null
. /newroot/memguard-vm/config

if [ "$MODE" = chroot ]; then
	for fs in proc sys dev; do
		mount --move "/$fs" "/newroot/$fs"
	done
	# The same mount options systemd uses, so cgroup semantics match a systemd host.
	mount -t cgroup2 -o nsdelegate,memory_recursiveprot cgroup2 /newroot/sys/fs/cgroup
	mount -t tmpfs -o mode=0755 tmpfs /newroot/run
	mkdir -p /newroot/dev/pts /newroot/dev/shm
	mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /newroot/dev/pts
	mount -t tmpfs -o mode=1777 tmpfs /newroot/dev/shm
	# What udev and systemd-tmpfiles add to devtmpfs on a node; bash's <(...) needs /dev/fd.
	ln -sfn /proc/self/fd /newroot/dev/fd
	ln -sf /proc/self/fd/0 /newroot/dev/stdin
	ln -sf /proc/self/fd/1 /newroot/dev/stdout
	ln -sf /proc/self/fd/2 /newroot/dev/stderr
fi

# A fresh /tmp, also under systemd, whose tmpfiles would otherwise empty the host's /tmp into the overlay.
mount -t tmpfs -o mode=1777 tmpfs /newroot/tmp
# After the tmpfs mounts, which would hide a share under /tmp.
mkdir -p "/newroot$SHARE"
# cache=mmap: shared writable mmap works, while read/write stay uncached so the host sees every write.
mount -t 9p -o "$ninep,cache=mmap" share "/newroot$SHARE" || die "cannot mount the share $SHARE"

if [ "$MODE" = systemd ]; then
	echo "vm-init: root ready, starting systemd"
	# The host's fstab describes the host, not this guest.
	: >/newroot/etc/fstab
	cat >/newroot/etc/systemd/system/memguard-vm.service <<-'EOF'
		[Unit]
		Description=memguard VM test command
		SuccessAction=poweroff-immediate
		FailureAction=poweroff-immediate

		[Service]
		Type=oneshot
		TimeoutStartSec=infinity
		ExecStart=/usr/bin/env -i /bin/bash /memguard-vm/run.sh
	EOF
	cat >/newroot/etc/systemd/system/memguard-vm.target <<-'EOF'
		[Unit]
		Description=memguard VM test
		Requires=memguard-vm.service
		AllowIsolate=yes
	EOF
	# systemd mounts /proc, /sys, /dev, /run and the cgroup2 hierarchy itself.
	umount /proc /sys /dev
	exec switch_root /newroot /lib/systemd/systemd --unit=memguard-vm.target
fi

echo "vm-init: root ready, running the command"
chroot /newroot /usr/bin/env -i /bin/bash /memguard-vm/run.sh || echo "vm-init: run.sh failed"
sync
poweroff -f
