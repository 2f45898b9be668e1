/* The degraded-mode watcher: which processes it finds by the run's token
 * (fake /proc), and, with real processes, that it kills exactly those once
 * the launcher's end of the pipe closes without a word. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_tree.h"
#include "memguard/procstat.h"
#include "memguard/util.h"
#include "run/watcher.h"

/* A fake /proc/<pid> with a stat line (state) and an environ block. */
static void fake_proc(int fd, int pid, char state, const char *env, size_t len)
{
	char path[64], line[256];

	snprintf(path, sizeof(path), "%d", pid);
	ft_mkdir(fd, path);
	snprintf(line, sizeof(line),
	         "%d (sh) %c 1 %d 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 500 1000 10 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "
	         "0 0 0 0 0",
	         pid, state, pid);
	snprintf(path, sizeof(path), "%d/stat", pid);
	ft_write(fd, path, line);
	snprintf(path, sizeof(path), "%d/environ", pid);
	ft_write_bytes(fd, path, env, len);
}

#define FAKE(fd, pid, state, lit) fake_proc(fd, pid, state, lit, sizeof(lit) - 1)

static void find_by_exact_token(void **state)
{
	struct fake_tree t;
	pid_t *pids = NULL;
	int n;

	ft_new(&t);
	FAKE(t.fd, 10, 'S', "HOME=/\0MEMGUARD_RUN=42-1000\0");           /* found */
	FAKE(t.fd, 11, 'S', "MEMGUARD_RUN=42-10000\0");                  /* another run */
	FAKE(t.fd, 12, 'S', "MEMGUARD_RUN=42-100\0");                    /* a prefix */
	FAKE(t.fd, 13, 'S', "MEMGUARD_TASK=0\0");                        /* cleared the token */
	FAKE(t.fd, 14, 'Z', "MEMGUARD_RUN=42-1000\0");                   /* a zombie: dead already */
	FAKE(t.fd, 15, 'S', "MEMGUARD_RUN=42-1000\0");                   /* the watcher itself */
	FAKE(t.fd, 16, 'R', "A=1\0MEMGUARD_RUN=42-1000");                /* found, no final NUL */
	FAKE(t.fd, 17, 'S', "MEMGUARD_RUN=7-1\0MEMGUARD_RUN=42-1000\0"); /* getenv sees 7-1 */
	ft_mkdir(t.fd, "18");                                            /* vanished: no stat */
	n = mg_watcher_find(t.fd, "42-1000", getuid(), 15, &pids);
	assert_int_equal(n, 2);
	assert_int_equal(pids[0], 10);
	assert_int_equal(pids[1], 16);
	free(pids);
	/* Another user's processes are never the run's. */
	ft_chown(t.fd, "10", getuid() + 1);
	n = mg_watcher_find(t.fd, "42-1000", getuid(), 15, &pids);
	assert_int_equal(n, 1);
	assert_int_equal(pids[0], 16);
	free(pids);
	ft_free(&t);
}

static void token_names_the_launcher(void **state)
{
	_cleanup_close_ int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char token[64], want[64], small[4];
	uint64_t start;

	assert_true(procfd >= 0);
	assert_int_equal(mg_proc_start_time(procfd, getpid(), &start), 0);
	assert_int_equal(mg_watcher_token(procfd, getpid(), token, sizeof(token)), 0);
	snprintf(want, sizeof(want), "%d-%" PRIu64, (int)getpid(), start);
	assert_string_equal(token, want);
	assert_int_equal(mg_watcher_token(procfd, getpid(), small, sizeof(small)), -ENOBUFS);
}

/* A child running sleep with MEMGUARD_RUN=value, SIGTERM ignored if asked. */
static pid_t spawn_with(const char *value, bool ignore_term)
{
	char entry[128];
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		char *argv[] = {"sleep", "30", NULL}, *envp[] = {entry, NULL};
		snprintf(entry, sizeof(entry), "MEMGUARD_RUN=%s", value);
		if (ignore_term)
			signal(SIGTERM, SIG_IGN);
		execve("/bin/sleep", argv, envp);
		_exit(127);
	}
	return pid;
}

/* Until /proc/<pid>/environ shows the exec'd environment. */
static void wait_exec(pid_t pid, const char *value)
{
	char path[64], want[128];

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	snprintf(want, sizeof(want), "MEMGUARD_RUN=%s", value);
	for (int i = 0; i < 500; i++) {
		_cleanup_free_ char *block = NULL;
		ssize_t n = mg_read_file_at(AT_FDCWD, path, &block);
		if (n > 0 && memmem(block, (size_t)n, want, strlen(want)))
			return;
		usleep(10000);
	}
	fail_msg("%d never exec'd with %s", (int)pid, want);
}

static void kills_the_run_when_the_launcher_dies(void **state)
{
	_cleanup_close_ int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct mg_watcher w;
	char token[64], other[80];
	int status;

	assert_true(procfd >= 0);
	snprintf(token, sizeof(token), "%d-unit-%ld", (int)getpid(), (long)time(NULL));
	snprintf(other, sizeof(other), "%s0", token);
	pid_t term = spawn_with(token, false), stubborn = spawn_with(token, true),
	      bystander = spawn_with(other, false);
	wait_exec(term, token);
	wait_exec(stubborn, token);
	wait_exec(bystander, other);
	assert_int_equal(mg_watcher_start(procfd, token, 300 * 1000, &w), 0);
	/* As a SIGKILLed launcher: the write end closes, no byte. */
	close(w.fd);
	status = ft_reap_child(term, 5000);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	status = ft_reap_child(stubborn, 5000);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	status = ft_reap_child(w.pid, 5000);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Its token is not the run's: alive. */
	assert_int_equal(kill(bystander, 0), 0);
	status = ft_reap_child(bystander, 0);
	assert_int_equal(status, -1);
}

static void leaves_the_run_alone_when_told_done(void **state)
{
	_cleanup_close_ int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct mg_watcher w;
	char token[64];

	assert_true(procfd >= 0);
	snprintf(token, sizeof(token), "%d-done-%ld", (int)getpid(), (long)time(NULL));
	pid_t task = spawn_with(token, false);
	wait_exec(task, token);
	assert_int_equal(mg_watcher_start(procfd, token, 0, &w), 0);
	/* A forwarded SIGTERM must not stop it. */
	assert_int_equal(kill(w.pid, SIGTERM), 0);
	usleep(100000);
	assert_int_equal(kill(w.pid, 0), 0);
	mg_watcher_stop(&w); /* reaps it */
	assert_int_equal(w.pid, -1);
	assert_int_equal(w.fd, -1);
	usleep(200000);
	assert_int_equal(kill(task, 0), 0);
	assert_int_equal(ft_reap_child(task, 0), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(find_by_exact_token),
	        cmocka_unit_test(token_names_the_launcher),
	        cmocka_unit_test(kills_the_run_when_the_launcher_dies),
	        cmocka_unit_test(leaves_the_run_alone_when_told_done),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
