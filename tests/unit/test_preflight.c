/* Checks before a run: mg_daemon_running_at (the lock on memguardd's pid
 * file) and mg_command_resolve (the command's program, as execvp finds it). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_tree.h"
#include "run/preflight.h"

/* --- mg_daemon_running_at --- */

static void daemon_no_file_is_not_running(void **state)
{
	struct fake_tree t;

	ft_new(&t);
	assert_int_equal(mg_daemon_running_at(t.fd, "memguardd.pid"), 0);
	ft_mkdir(t.fd, "run");
	assert_int_equal(mg_daemon_running_at(t.fd, "run/memguardd.pid"), 0);
	ft_free(&t);
}

/* The old check trusted any live pid: a stale file naming a live process
 * (here our own pid) without the lock is no daemon. */
static void daemon_stale_file_with_live_pid_is_not_running(void **state)
{
	struct fake_tree t;
	char pid[32];

	ft_new(&t);
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	ft_write(t.fd, "memguardd.pid", pid);
	assert_int_equal(mg_daemon_running_at(t.fd, "memguardd.pid"), 0);
	/* Asking leaves no lock behind: a daemon could take it at once. */
	int fd = openat(t.fd, "memguardd.pid", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	close(fd);
	ft_free(&t);
}

/* A child holds LOCK_EX as memguardd does, until it dies. */
static void daemon_file_locked_by_a_child_is_running(void **state)
{
	struct fake_tree t;
	int ready[2];
	char c;

	ft_new(&t);
	ft_write(t.fd, "memguardd.pid", "1\n"); /* the pid does not matter, the lock does */
	assert_int_equal(pipe(ready), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(60);
		int fd = openat(t.fd, "memguardd.pid", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
			_exit(1);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	bool locked = read(ready[0], &c, 1) == 1;
	close(ready[0]);
	int running = locked ? mg_daemon_running_at(t.fd, "memguardd.pid") : -1;
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_true(locked);
	assert_int_equal(running, 1);
	/* The lock died with its holder. */
	assert_int_equal(mg_daemon_running_at(t.fd, "memguardd.pid"), 0);
	ft_free(&t);
}

/* A symlink at the pid file's name is not followed. */
static void daemon_symlink_is_refused(void **state)
{
	struct fake_tree t;

	ft_new(&t);
	ft_write(t.fd, "target", "1\n");
	assert_int_equal(symlinkat("target", t.fd, "memguardd.pid"), 0);
	assert_int_equal(mg_daemon_running_at(t.fd, "memguardd.pid"), -ELOOP);
	ft_free(&t);
}

/* --- mg_command_resolve --- */

struct bins {
	struct fake_tree t;
	char bin1[PATH_MAX + 8], bin2[PATH_MAX + 8];
};

static void make_file(int dirfd, const char *name, mode_t mode)
{
	ft_write(dirfd, name, "#!/bin/sh\nexit 0\n");
	assert_int_equal(fchmodat(dirfd, name, mode, 0), 0);
}

/* bin1: prog (0755), noexec (0644), adir/, both (0644);
 * bin2: prog (0755), both (0755). */
static void bins_new(struct bins *b)
{
	ft_new(&b->t);
	ft_mkdir(b->t.fd, "bin1");
	ft_mkdir(b->t.fd, "bin2");
	ft_mkdir(b->t.fd, "bin1/adir");
	make_file(b->t.fd, "bin1/prog", 0755);
	make_file(b->t.fd, "bin1/noexec", 0644);
	make_file(b->t.fd, "bin1/both", 0644);
	make_file(b->t.fd, "bin2/prog", 0755);
	make_file(b->t.fd, "bin2/both", 0755);
	snprintf(b->bin1, sizeof(b->bin1), "%s/bin1", b->t.path);
	snprintf(b->bin2, sizeof(b->bin2), "%s/bin2", b->t.path);
}

static void expect_resolve(const char *name, const char *path_env, int want, const char *want_path)
{
	char buf[PATH_MAX];
	int r = mg_command_resolve(name, path_env, buf, sizeof(buf));

	if (r != want)
		print_error("resolve \"%s\" in \"%s\": %d (%s), want %d\n", name,
		            path_env ? path_env : "(null)", r, strerror(-r), want);
	assert_int_equal(r, want);
	if (want_path)
		assert_string_equal(buf, want_path);
}

static void resolve_in_path(void **state)
{
	struct bins b;
	char path_env[4 * PATH_MAX], want[2 * PATH_MAX];

	bins_new(&b);
	snprintf(path_env, sizeof(path_env), "%s:%s", b.bin1, b.bin2);

	snprintf(want, sizeof(want), "%s/prog", b.bin1);
	expect_resolve("prog", path_env, 0, want); /* the first one */
	/* execvp goes on past a file it may not run */
	snprintf(want, sizeof(want), "%s/both", b.bin2);
	expect_resolve("both", path_env, 0, want);
	expect_resolve("missing", path_env, -ENOENT, NULL);
	expect_resolve("", path_env, -ENOENT, NULL);
	/* found, but not to be run: 126 */
	expect_resolve("noexec", path_env, -EACCES, NULL);
	expect_resolve("adir", path_env, -EISDIR, NULL);

	/* an entry that is a file or missing is skipped */
	snprintf(path_env, sizeof(path_env), "%s/prog:%s/none:%s", b.bin1, b.t.path, b.bin2);
	snprintf(want, sizeof(want), "%s/prog", b.bin2);
	expect_resolve("prog", path_env, 0, want);
	/* only bin2: noexec and adir are nowhere */
	expect_resolve("noexec", b.bin2, -ENOENT, NULL);
	expect_resolve("adir", b.bin2, -ENOENT, NULL);
	/* an empty PATH finds nothing but the cwd's, which is not ours here */
	expect_resolve("prog", "/nonexistent", -ENOENT, NULL);
	ft_free(&b.t);
}

/* An empty entry (leading, trailing or doubled colon) is the cwd. */
static void resolve_empty_entry_is_cwd(void **state)
{
	static const char *const paths[] = {":/nonexistent", "/nonexistent:", "/nonexistent::/none", ""};
	struct bins b;
	int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	assert_true(cwd >= 0);
	bins_new(&b);
	assert_int_equal(chdir(b.bin1), 0);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		expect_resolve("prog", paths[i], 0, "prog");
		expect_resolve("noexec", paths[i], -EACCES, NULL);
	}
	expect_resolve("prog", "/nonexistent", -ENOENT, NULL);
	assert_int_equal(fchdir(cwd), 0);
	close(cwd);
	ft_free(&b.t);
}

/* A '/' in the name: that file and no search. */
static void resolve_name_with_slash(void **state)
{
	struct bins b;
	char name[2 * PATH_MAX];

	bins_new(&b);
	snprintf(name, sizeof(name), "%s/prog", b.bin1);
	expect_resolve(name, NULL, 0, name);
	expect_resolve(name, "/nonexistent", 0, name);
	snprintf(name, sizeof(name), "%s/noexec", b.bin1);
	expect_resolve(name, b.bin2, -EACCES, NULL); /* bin2 is not searched */
	snprintf(name, sizeof(name), "%s/adir", b.bin1);
	expect_resolve(name, NULL, -EISDIR, NULL);
	snprintf(name, sizeof(name), "%s/missing", b.bin1);
	expect_resolve(name, NULL, -ENOENT, NULL);
	snprintf(name, sizeof(name), "%s/prog/x", b.bin1);
	expect_resolve(name, NULL, -ENOTDIR, NULL);
	snprintf(name, sizeof(name), "%s/both", b.bin2);
	expect_resolve(name, NULL, 0, name);

	/* relative, from the cwd */
	int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(cwd >= 0);
	assert_int_equal(chdir(b.t.path), 0);
	expect_resolve("bin1/prog", "/nonexistent", 0, "bin1/prog");
	expect_resolve("./bin1/noexec", NULL, -EACCES, NULL);
	expect_resolve("./prog", b.bin1, -ENOENT, NULL); /* not looked up in PATH */
	assert_int_equal(fchdir(cwd), 0);
	close(cwd);

	/* a name that does not fit the buffer */
	char small[8];
	assert_int_equal(mg_command_resolve("/bin/sh-long-name", NULL, small, sizeof(small)), -ENAMETOOLONG);
	ft_free(&b.t);
}

/* No PATH at all: execvp's default, /bin:/usr/bin. */
static void resolve_without_path(void **state)
{
	char buf[PATH_MAX];

	assert_int_equal(mg_command_resolve("sh", NULL, buf, sizeof(buf)), 0);
	assert_true(strcmp(buf, "/bin/sh") == 0 || strcmp(buf, "/usr/bin/sh") == 0);
	assert_int_equal(mg_command_resolve("no-such-program-memguard", NULL, buf, sizeof(buf)), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(daemon_no_file_is_not_running),
	        cmocka_unit_test(daemon_stale_file_with_live_pid_is_not_running),
	        cmocka_unit_test(daemon_file_locked_by_a_child_is_running),
	        cmocka_unit_test(daemon_symlink_is_refused),
	        cmocka_unit_test(resolve_in_path),
	        cmocka_unit_test(resolve_empty_entry_is_cwd),
	        cmocka_unit_test(resolve_name_with_slash),
	        cmocka_unit_test(resolve_without_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
