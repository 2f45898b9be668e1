/* A PSI trigger armed through lib/ on a cgroup's memory.pressure fires when
 * the cgroup is squeezed, and reports the cgroup's removal as -ENODEV. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"
#include "memguard/cgroup.h"
#include "memguard/psi.h"
#include "memguard/util.h"

static void trigger_fires_under_memory_high(void **state)
{
	int mountfd = itest_mount_fd();
	char path[256];
	int cg = itest_cgroup(mountfd, "psi", path, sizeof(path));
	struct mg_psi before, after;
	int status;

	/* memory.high far below what the task touches: reclaim and throttling,
	 * no kill, so stalls build up. */
	assert_int_equal(mg_cg_write_size(cg, path, "memory.high", 48ull << 20, NULL, 0), 0);
	assert_int_equal(mg_cg_write_size(cg, path, "memory.swap.max", 0, NULL, 0), 0);
	assert_int_equal(mg_psi_read(cg, "memory.pressure", &before), 0);

	int fd = mg_psi_trigger_open(cg, "memory.pressure", MG_PSI_SOME, 50000, 500000);
	assert_true(fd >= 0);
	/* Nothing runs yet: the trigger stays quiet. */
	assert_int_equal(mg_psi_trigger_wait(fd, 600), 0);

	pid_t pid = itest_spawn_toucher(cg, 120ull << 20, 0);
	uint64_t start = mg_now_usec();
	int fired = mg_psi_trigger_wait(fd, 20000);
	uint64_t waited_ms = (mg_now_usec() - start) / 1000;
	print_message("trigger fired after %llu ms\n", (unsigned long long)waited_ms);
	assert_int_equal(fired, 1);

	assert_int_equal(mg_psi_read(cg, "memory.pressure", &after), 0);
	assert_true(after.some.total_usec > before.some.total_usec);

	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	itest_cgroup_destroy(mountfd, "psi", cg);
	/* The cgroup is gone: the trigger fd says so. */
	assert_int_equal(mg_psi_trigger_wait(fd, 1000), -ENODEV);
	close(fd);
	close(mountfd);
}

static void system_trigger_arms(void **state)
{
	int procfd = open("/proc", O_RDONLY | O_DIRECTORY);
	struct mg_psi psi;

	assert_true(procfd >= 0);
	assert_int_equal(mg_psi_read(procfd, "pressure/memory", &psi), 0);
	assert_true(psi.full.present);
	int fd = mg_psi_trigger_open(procfd, "pressure/memory", MG_PSI_FULL, 100000, 1000000);
	assert_true(fd >= 0);
	/* An idle test machine: no full stall of 100 ms within a second. */
	assert_int_equal(mg_psi_trigger_wait(fd, 0), 0);
	close(fd);
	close(procfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(trigger_fires_under_memory_high),
	        cmocka_unit_test(system_trigger_arms),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
