#include "itest.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memguard/cgroup.h"
#include "memguard/locate.h"
#include "memguard/paths.h"
#include "memguard/util.h"

int itest_mount_fd(void)
{
	struct mg_cgroup_mount m = {0};
	_cleanup_close_ int procfd = open(MG_PROC_PATH, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = procfd < 0 ? -errno : mg_cgroup_find_memory_mount(procfd, &m);

	if (r < 0)
		fail_msg("no cgroup hierarchy with the memory controller (%s): run this inside tests/vm",
		         strerror(-r));
	if (!m.unified)
		fail_msg("the memory controller is on cgroup v1 at %s: run this inside tests/vm", m.path);
	if (geteuid() != 0)
		fail_msg("integration tests need root");
	int fd = mg_cg_open(AT_FDCWD, m.path);
	if (fd < 0)
		fail_msg("open %s: %s", m.path, strerror(-fd));
	mg_cgroup_mount_done(&m);
	assert_int_equal(mg_cg_enable_controllers(fd, "cgroup root", "memory pids", NULL, 0), 0);
	return fd;
}

int itest_cgroup(int mountfd, const char *name, char *ret_path, size_t size)
{
	char dir[128];
	int fd;

	snprintf(dir, sizeof(dir), "memguard-itest-%s", name);
	(void)mg_cg_remove(mountfd, dir);
	fd = mg_cg_create(mountfd, dir);
	if (fd < 0)
		fail_msg("create cgroup %s: %s", dir, strerror(-fd));
	if (ret_path)
		snprintf(ret_path, size, "/%s", dir);
	return fd;
}

void itest_cgroup_destroy(int mountfd, const char *name, int cgfd)
{
	char dir[128];

	snprintf(dir, sizeof(dir), "memguard-itest-%s", name);
	(void)mg_cg_kill(cgfd);
	for (int i = 0; i < 200 && mg_cg_populated(cgfd) == 1; i++)
		usleep(10000);
	close(cgfd);
	assert_int_equal(mg_cg_remove(mountfd, dir), 0);
}

pid_t itest_spawn_toucher(int cgfd, uint64_t bytes, unsigned rounds)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid > 0)
		return pid;
	if (mg_cg_move_pid(cgfd, 0) < 0)
		_exit(90);
	char *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		_exit(91);
	for (unsigned r = 0; rounds == 0 || r < rounds; r++)
		for (uint64_t off = 0; off < bytes; off += 4096)
			mem[off] = (char)(r + 1);
	_exit(0);
}

bool itest_kernel_at_least(unsigned major, unsigned minor)
{
	struct utsname u;
	unsigned ma = 0, mi = 0;

	if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &ma, &mi) != 2)
		fail_msg("cannot read the kernel's version");
	return ma > major || (ma == major && mi >= minor);
}
