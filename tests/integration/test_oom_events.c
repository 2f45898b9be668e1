/* The kernel's OOM kill inside a task cgroup is seen in memory.events
 * through lib/ code, and memory.peak reports the limit reached. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"
#include "memguard/cgroup.h"
#include "memguard/units.h"

static void oom_kill_is_counted(void **state)
{
	int mountfd = itest_mount_fd();
	char path[256];
	int cg = itest_cgroup(mountfd, "oom", path, sizeof(path));
	struct mg_memory_events ev;
	uint64_t max, peak;
	int status;

	assert_int_equal(mg_cg_write_size(cg, path, "memory.max", 64ull << 20, NULL, 0), 0);
	assert_int_equal(mg_cg_write_size(cg, path, "memory.swap.max", 0, NULL, 0), 0);
	assert_int_equal(mg_cg_read_u64(cg, "memory.max", &max), 0);
	assert_int_equal(max, 64ull << 20);

	pid_t pid = itest_spawn_toucher(cg, 200ull << 20, 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);

	assert_int_equal(mg_cg_read_memory_events(cg, &ev), 0);
	assert_true(ev.oom_kill >= 1);
	assert_true(ev.max >= 1);
	/* memory.peak came in 5.19: before, it must be absent, not wrong. */
	if (itest_kernel_at_least(5, 19)) {
		assert_int_equal(mg_cg_read_u64(cg, "memory.peak", &peak), 0);
		assert_true(peak > 32ull << 20 && peak <= 64ull << 20);
	} else {
		assert_int_equal(mg_cg_read_u64(cg, "memory.peak", &peak), -ENOENT);
	}

	itest_cgroup_destroy(mountfd, "oom", cg);
	close(mountfd);
}

static void within_limit_no_oom(void **state)
{
	int mountfd = itest_mount_fd();
	char path[256];
	int cg = itest_cgroup(mountfd, "fits", path, sizeof(path));
	struct mg_memory_events ev;
	int status;

	assert_int_equal(mg_cg_write_size(cg, path, "memory.max", 64ull << 20, NULL, 0), 0);
	pid_t pid = itest_spawn_toucher(cg, 16ull << 20, 2);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(mg_cg_read_memory_events(cg, &ev), 0);
	assert_int_equal(ev.oom_kill, 0);
	itest_cgroup_destroy(mountfd, "fits", cg);
	close(mountfd);
}

/* memory.oom.group=1: the kernel kills the whole cgroup, so a parent and its
 * idle child die together. */
static void oom_group_kills_all(void **state)
{
	int mountfd = itest_mount_fd();
	char path[256];
	int cg = itest_cgroup(mountfd, "group", path, sizeof(path));
	struct mg_memory_events ev;
	int status;

	assert_int_equal(mg_cg_write_size(cg, path, "memory.max", 64ull << 20, NULL, 0), 0);
	assert_int_equal(mg_cg_write(cg, path, "memory.oom.group", "1", NULL, 0), 0);
	pid_t idle = fork();
	assert_true(idle >= 0);
	if (idle == 0) {
		if (mg_cg_move_pid(cg, 0) < 0)
			_exit(90);
		pause();
		_exit(0);
	}
	while (mg_cg_populated(cg) != 1)
		usleep(1000);
	pid_t hog = itest_spawn_toucher(cg, 200ull << 20, 1);
	assert_int_equal(waitpid(hog, &status, 0), hog);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(waitpid(idle, &status, 0), idle);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	assert_int_equal(mg_cg_read_memory_events(cg, &ev), 0);
	/* The oom_group_kill counter came in 5.17; the group kill itself in 4.19. */
	assert_true(itest_kernel_at_least(5, 17) ? ev.oom_group_kill >= 1 : ev.oom_group_kill == 0);
	assert_true(ev.oom_kill >= 1);
	itest_cgroup_destroy(mountfd, "group", cg);
	close(mountfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(oom_kill_is_counted),
	        cmocka_unit_test(within_limit_no_oom),
	        cmocka_unit_test(oom_group_kills_all),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
