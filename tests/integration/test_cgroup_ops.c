/* cgroup v2 operations of lib/ on a real kernel: kill a whole subtree (the
 * way the kernel allows, with or without a working cgroup.freeze), the
 * no-internal-processes rule, nested removal, pid paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"
#include "memguard/cgroup.h"
#include "memguard/log.h"
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

/* cgroup.kill came in 5.14: the version says which way mg_cg_kill must go,
 * and the file must agree, so no assertion rests on a wrong premise. */
static bool kernel_has_cgroup_kill(int cg)
{
	bool want = itest_kernel_at_least(5, 14), there = faccessat(cg, "cgroup.kill", F_OK, 0) == 0;

	if (want != there)
		fail_msg("this kernel should %shave cgroup.kill, but the file is %s", want ? "" : "not ",
		         there ? "there" : "missing");
	return want;
}

/* mg_cg_kill on dir (a path) from a child, with its "kill ..." debug line
 * in ret_line; with ro_freeze the child first makes dir's cgroup.freeze
 * read-only in a mount namespace of its own, so that the freeze fails for
 * mg_cg_kill alone. Returns what mg_cg_kill returned. */
static int kill_from_child(const char *dir, bool ro_freeze, char *ret_line, size_t size)
{
	char file[PATH_MAX + 32], buf[1024];
	FILE *log = tmpfile();
	int status;

	assert_non_null(log);
	snprintf(file, sizeof(file), "%s/cgroup.freeze", dir);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* A mount of our own: the cgroup's fd must be opened by path after it. */
		if (ro_freeze &&
		    (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		     mount(file, file, NULL, MS_BIND, NULL) < 0 ||
		     mount(NULL, file, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL) < 0))
			_exit(201);
		if (ro_freeze && (open(file, O_WRONLY | O_CLOEXEC) >= 0 || errno != EROFS))
			_exit(202);
		int cg = mg_cg_open(AT_FDCWD, dir);
		if (cg < 0 || dup2(fileno(log), STDERR_FILENO) < 0)
			_exit(203);
		mg_log_set_level(LOG_DEBUG);
		int r = mg_cg_kill(cg);
		_exit(r < 0 ? 200 : r > 199 ? 199 : r);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 201)
		fail_msg("cannot make %s read-only in a mount namespace of its own", file);
	if (WEXITSTATUS(status) == 202)
		fail_msg("%s is not read-only in the child's mount namespace", file);
	if (WEXITSTATUS(status) == 203)
		fail_msg("the child cannot open %s", dir);
	ret_line[0] = '\0';
	rewind(log);
	while (fgets(buf, sizeof(buf), log))
		if (strncmp(buf, "memguard: debug: kill ", 22) == 0) {
			buf[strcspn(buf, "\n")] = '\0';
			snprintf(ret_line, size, "%s", buf + 17);
			break;
		}
	fclose(log);
	if (!ret_line[0])
		fail_msg("mg_cg_kill logged no \"kill ...\" line at debug level");
	print_message("    %s\n", ret_line);
	return WEXITSTATUS(status) == 200 ? -1 : WEXITSTATUS(status);
}

/* Seven processes in a cgroup and its child, killed by mg_cg_kill the way
 * this kernel allows: cgroup.kill (5.14+), else freeze, SIGKILL each, thaw;
 * with ro_freeze, a cgroup.freeze that cannot be written leaves the
 * fallback's kill unfrozen, and it still takes them all. */
static void kill_family(const char *name, bool ro_freeze)
{
	int mountfd = itest_mount_fd();
	int cg = itest_cgroup(mountfd, name, NULL, 0);
	int child = mg_cg_create(cg, "nested");
	char dir[PATH_MAX], link[64], line[1024], want[PATH_MAX + 256];
	uint64_t freeze = 1;
	int status;
	ssize_t n;

	assert_true(child >= 0);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", cg);
	n = readlink(link, dir, sizeof(dir) - 1);
	assert_true(n > 0);
	dir[n] = '\0';
	pid_t a = spawn_family(cg, 3);
	pid_t b = spawn_family(child, 2);
	for (int i = 0; i < 500 && (count_procs(cg) < 4 || count_procs(child) < 3); i++)
		usleep(2000);
	assert_int_equal(count_procs(cg), 4);
	assert_int_equal(count_procs(child), 3);
	assert_int_equal(mg_cg_populated(cg), 1);

	int r = kill_from_child(dir, ro_freeze, line, sizeof(line));
	if (kernel_has_cgroup_kill(cg)) {
		/* The kernel kills: nothing to count, and cgroup.freeze is never touched. */
		snprintf(want, sizeof(want), "kill %s: cgroup.kill", dir);
		assert_string_equal(line, want);
		assert_int_equal(r, 0);
	} else if (ro_freeze) {
		snprintf(want, sizeof(want),
		         "kill %s: no cgroup.kill, and cgroup.freeze failed (Read-only file system): "
		         "SIGKILLed 7 "
		         "processes one by one, unfrozen",
		         dir);
		assert_string_equal(line, want);
		assert_int_equal(r, 7);
	} else {
		snprintf(want, sizeof(want),
		         "kill %s: no cgroup.kill: froze it (frozen), SIGKILLed 7 processes one by one, "
		         "thawed it",
		         dir);
		assert_string_equal(line, want);
		assert_int_equal(r, 7);
	}
	/* Thawed, or never frozen. */
	assert_int_equal(mg_cg_read_u64(cg, "cgroup.freeze", &freeze), 0);
	assert_int_equal(freeze, 0);
	assert_int_equal(waitpid(a, &status, 0), a);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	assert_int_equal(waitpid(b, &status, 0), b);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	for (int i = 0; i < 500 && mg_cg_populated(cg) != 0; i++)
		usleep(2000);
	assert_int_equal(mg_cg_populated(cg), 0);
	close(child);
	/* Removal takes the nested child first. */
	itest_cgroup_destroy(mountfd, name, cg);
	snprintf(want, sizeof(want), "memguard-itest-%s", name);
	assert_int_equal(mg_cg_open(mountfd, want), -ENOENT);
	close(mountfd);
}

static void kill_takes_the_whole_subtree(void **state)
{
	kill_family("kill", false);
}

/* cgroup.freeze came in 5.2, so no kernel from 5.10 up lacks it: a
 * read-only bind mount of it, as in a container that mounts cgroupfs
 * read-only, is how its failure is tested. */
static void kill_without_freezing(void **state)
{
	kill_family("killro", true);
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
	        cmocka_unit_test(kill_without_freezing),
	        cmocka_unit_test(internal_process_rule_is_explained),
	        cmocka_unit_test(pid_path_matches),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
