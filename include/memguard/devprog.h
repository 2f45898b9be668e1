/* The device programs (BPF_CGROUP_DEVICE) on a cgroup, as the kernel lists
 * them: what a batch system's device constraint (Slurm's ConstrainDevices,
 * systemd's DeviceAllow=) attaches. Querying needs CAP_NET_ADMIN, reading a
 * program's tag CAP_SYS_ADMIN. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A program's tag: the kernel's hash of its instructions, the same for two
 * loads of one program. */
struct mg_devprog_tag {
	uint8_t b[8];
};

/* At most this many programs are read per cgroup (the kernel allows 64 per
 * cgroup and attach type). */
#define MG_DEVPROG_MAX 64

/* Fills ret with the tags of the device programs attached to cgfd's cgroup
 * itself, or, when effective, of those that apply to it (its own and its
 * ancestors'). Returns how many (0 without CONFIG_CGROUP_BPF), or -errno
 * (-EPERM without the capabilities). */
int mg_devprog_tags(int cgfd, bool effective, struct mg_devprog_tag *ret, size_t max);

/* True when every one of own[] is among applied[]: a cgroup beside the one
 * with own[], under a parent to which applied[] applies, is held by the
 * same device rules. */
bool mg_devprog_covered(const struct mg_devprog_tag *own, size_t n_own, const struct mg_devprog_tag *applied,
                        size_t n_applied);
