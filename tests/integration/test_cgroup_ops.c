/* cgroup v2 operations of lib/ on a real kernel: kill a whole subtree,
 * the no-internal-processes rule, nested removal, pid paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"
#include "memguard/cgroup.h"
#include "memguard/util.h"

/* A child in cg that forks `kids` grandchildren, all sleeping. */
static pid_t spawn_family(int cg, int kids)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (mg_cg_move_pid(cg, 0) < 0)
			_exit(90);
		for (int i = 0; i < kids; i++)
			if (fork() == 0)
				for (;;)
					pause();
		for (;;)
			pause();
	}
	return pid;
}

static int count_procs(int cg)
{
	_cleanup_free_ char *text = NULL;
	int n = 0;

	assert_true(mg_read_file_at(cg, "cgroup.procs", &text) >= 0);
	for (char *p = text; (p = strchr(p, '\n')); p++)
		n++;
	return n;
}

static void kill_takes_the_whole_subtree(void **state)
{
	int mountfd = itest_mount_fd();
	int cg = itest_cgroup(mountfd, "kill", NULL, 0);
	int child = mg_cg_create(cg, "nested");
	int status;

	assert_true(child >= 0);
	pid_t a = spawn_family(cg, 3);
	pid_t b = spawn_family(child, 2);
	for (int i = 0; i < 500 && (count_procs(cg) < 4 || count_procs(child) < 3); i++)
		usleep(2000);
	assert_int_equal(count_procs(cg), 4);
	assert_int_equal(count_procs(child), 3);
	assert_int_equal(mg_cg_populated(cg), 1);

	assert_true(mg_cg_kill(cg) >= 0);
	assert_int_equal(waitpid(a, &status, 0), a);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	assert_int_equal(waitpid(b, &status, 0), b);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	for (int i = 0; i < 500 && mg_cg_populated(cg) != 0; i++)
		usleep(2000);
	assert_int_equal(mg_cg_populated(cg), 0);
	close(child);
	/* Removal takes the nested child first. */
	itest_cgroup_destroy(mountfd, "kill", cg);
	assert_int_equal(mg_cg_open(mountfd, "memguard-itest-kill"), -ENOENT);
	close(mountfd);
}

static void internal_process_rule_is_explained(void **state)
{
	int mountfd = itest_mount_fd();
	int cg = itest_cgroup(mountfd, "busy", NULL, 0);
	int status;

	assert_int_equal(mg_cg_has_controller(cg, "memory"), 1);
	pid_t a = spawn_family(cg, 0);
	while (count_procs(cg) < 1)
		usleep(1000);
	assert_int_equal(mg_cg_enable_controllers(cg, "/memguard-itest-busy", "memory", NULL, 0), -EBUSY);
	/* Moved out into a leaf, the parent may enable controllers. */
	int leaf = mg_cg_create(cg, "leaf");
	assert_true(leaf >= 0);
	assert_int_equal(mg_cg_move_pid(leaf, a), 0);
	assert_int_equal(mg_cg_enable_controllers(cg, "/memguard-itest-busy", "memory pids", NULL, 0), 0);
	assert_int_equal(mg_cg_has_controller(leaf, "memory"), 1);
	kill(a, SIGKILL);
	assert_int_equal(waitpid(a, &status, 0), a);
	close(leaf);
	itest_cgroup_destroy(mountfd, "busy", cg);
	close(mountfd);
}

static void pid_path_matches(void **state)
{
	int mountfd = itest_mount_fd();
	int cg = itest_cgroup(mountfd, "path", NULL, 0);
	int procfd = open("/proc", O_RDONLY | O_DIRECTORY);
	char *path = NULL;
	int status;

	pid_t a = spawn_family(cg, 0);
	while (count_procs(cg) < 1)
		usleep(1000);
	assert_int_equal(mg_cg_pid_path(procfd, a, &path), 0);
	assert_string_equal(path, "/memguard-itest-path");
	free(path);
	kill(a, SIGKILL);
	assert_int_equal(waitpid(a, &status, 0), a);
	itest_cgroup_destroy(mountfd, "path", cg);
	close(procfd);
	close(mountfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(kill_takes_the_whole_subtree),
	        cmocka_unit_test(internal_process_rule_is_explained),
	        cmocka_unit_test(pid_path_matches),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
