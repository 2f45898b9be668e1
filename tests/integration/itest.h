/* Helpers for the real-kernel integration tests. They need root and cgroup v2
 * with the memory controller: inside the VM (tests/vm), or on such a host.
 * Where that is missing they fail loudly; they never skip. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* An fd for the cgroup2 mount, found through lib/locate.c; fails the test
 * when the memory controller is not on cgroup v2. */
int itest_mount_fd(void);

/* Creates a fresh scratch cgroup "memguard-itest-<name>" below the mount with
 * memory and pids enabled, and returns its fd. ret_path gets its full path. */
int itest_cgroup(int mountfd, const char *name, char *ret_path, size_t size);

/* Kills what is left in the scratch cgroup and removes it. */
void itest_cgroup_destroy(int mountfd, const char *name, int cgfd);

/* Forks a child that joins cgfd and touches `bytes` of memory, page by page,
 * `rounds` times (0: forever), then exits 0. Returns its pid. */
pid_t itest_spawn_toucher(int cgfd, uint64_t bytes, unsigned rounds);

/* Whether the running kernel is at least major.minor. */
bool itest_kernel_at_least(unsigned major, unsigned minor);
