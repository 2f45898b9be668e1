/* The supervisor in degraded mode (no cgroups): a second terminating signal
 * kills the tasks at once, and their reason says so; nothing a task started,
 * setsid and double-forked or not, outlives the run; VmPeak is sampled under
 * RLIMIT_AS. */
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
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_tree.h"
#include "memguard/util.h"
#include "report/memreason.h"
#include "report/report.h"
#include "run/spawn.h"
#include "run/supervisor.h"

/* A child that sends sig to us twice, first after first_ms, then gap_ms later. */
static pid_t signal_twice(int sig, int first_ms, int gap_ms)
{
	pid_t parent = getpid();
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		nanosleep(
		        &(struct timespec){.tv_sec = first_ms / 1000, .tv_nsec = first_ms % 1000 * 1000000L},
		        NULL);
		kill(parent, sig);
		nanosleep(&(struct timespec){.tv_sec = gap_ms / 1000, .tv_nsec = gap_ms % 1000 * 1000000L},
		          NULL);
		kill(parent, sig);
		_exit(0);
	}
	return pid;
}

/* Before, the second signal's kill was recorded as the grace period's. */
static void second_sigterm_kills_at_once(void **state)
{
	/* The task ignores SIGTERM (and so does its sleep), as a stuck one would. */
	char *command[] = {"/bin/sh", "-c", "trap '' TERM; sleep 60", NULL};
	struct mg_task tasks[2] = {{.index = 0}, {.index = 1}};
	struct mg_supervisor_config cfg = {
	        .command = command,
	        .tasks = tasks,
	        .ntasks = 2,
	        .parallel = 2,
	        .share = 64 << 20,
	        .procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC),
	        .grace_usec = 60 * 1000000ull, /* far longer than the test may take */
	        .watchdog_interval_usec = 0,
	};
	const char *signal_name = NULL;
	char why[256];

	pid_t sender = signal_twice(SIGTERM, 700, 300);
	uint64_t start = mg_now_usec();
	assert_int_equal(mg_supervise(&cfg, &signal_name), 0);
	uint64_t took = mg_now_usec() - start;
	/* the sender may already have been reaped by the supervisor (a subreaper) */
	(void)waitpid(sender, NULL, 0);

	assert_true(took < 30 * 1000000ull);
	assert_non_null(signal_name);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(tasks[i].state, MG_TASK_DONE);
		assert_true(tasks[i].exited);
		assert_true(WIFSIGNALED(tasks[i].wait_status));
		assert_int_equal(WTERMSIG(tasks[i].wait_status), SIGKILL);
		assert_int_equal(tasks[i].killed_by, MG_KILL_SIGNAL);
		mg_task_reason(&tasks[i], why, sizeof(why));
		assert_string_equal(why, "killed by memguard at once on a second SIGTERM");
		ft_assert_not_contains(why, "grace");
	}
	close(cfg.procfd);
}

/* A task that leaves a process in a session of its own, double-forked so that
 * no ppid leads back to it, then exits 0. Before, that process (out of the
 * task's process group) outlived the run. */
static void escaped_grandchild_dies_with_the_run(void **state)
{
	char dir[] = "/tmp/mg-sup-XXXXXX", file[64], buf[32];
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/pid", dir);
	char script[256];
	snprintf(script, sizeof(script), "setsid sh -c 'sleep 60 & echo $! >%s.new; mv %s.new %s' </dev/null",
	         file, file, file);
	char *command[] = {"/bin/sh", "-c", script, NULL};
	struct mg_task tasks[1] = {{.index = 0}};
	struct mg_supervisor_config cfg = {
	        .command = command,
	        .tasks = tasks,
	        .ntasks = 1,
	        .parallel = 1,
	        .share = 64 << 20,
	        .procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC),
	        .grace_usec = 60 * 1000000ull,
	        .watchdog_interval_usec = 0,
	};

	assert_true(cfg.procfd >= 0);
	assert_int_equal(mg_supervise(&cfg, NULL), 0);
	close(cfg.procfd);
	assert_int_equal(tasks[0].state, MG_TASK_DONE);
	assert_true(WIFEXITED(tasks[0].wait_status));
	ssize_t n = mg_read_small_at(AT_FDCWD, file, buf, sizeof(buf));
	unlink(file);
	rmdir(dir);
	assert_true(n > 0);
	pid_t sleeper = (pid_t)atoi(buf);
	assert_true(sleeper > 1);
	/* Killed and reaped: no such process any more. */
	int alive = kill(sleeper, 0) == 0;
	if (alive)
		kill(sleeper, SIGKILL);
	assert_false(alive);
}

/* A resumed sweep runs only some lines: tasks 1 and 5 of the list sit at
 * positions 0 and 1. When task 1 ended, its leftovers were looked for by its
 * index, 1, which is task 5's position: task 5 was SIGKILLed (seen under
 * Slurm). The run's leftovers are found by position now, and the orphan's
 * MEMGUARD_TASK is mapped to it. */
static void resumed_tasks_keep_their_processes(void **state)
{
	char *command[] = {"/bin/sh", "-c", "[ \"$MEMGUARD_TASK\" = 1 ] && exit 0; sleep 1; exit 3", NULL};
	struct mg_task tasks[2] = {{.index = 1, .param = "a"}, {.index = 5, .param = "b"}};
	struct mg_supervisor_config cfg = {
	        .command = command,
	        .tasks = tasks,
	        .ntasks = 2,
	        .parallel = 2,
	        .share = 64 << 20,
	        .procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC),
	        .grace_usec = 60 * 1000000ull,
	        .watchdog_interval_usec = 0,
	};

	assert_true(cfg.procfd >= 0);
	assert_int_equal(mg_supervise(&cfg, NULL), 0);
	close(cfg.procfd);
	assert_true(tasks[0].exited && WIFEXITED(tasks[0].wait_status));
	assert_int_equal(WEXITSTATUS(tasks[0].wait_status), 0);
	if (!WIFEXITED(tasks[1].wait_status))
		print_error("task 5 was killed by signal %d\n", WTERMSIG(tasks[1].wait_status));
	assert_true(tasks[1].exited && WIFEXITED(tasks[1].wait_status));
	assert_int_equal(WEXITSTATUS(tasks[1].wait_status), 3);
}

/* A launcher SIGKILLed right after it started a task: the task's main process
 * dies with it (PR_SET_PDEATHSIG), where before it ran on, re-parented. */
static void main_process_dies_with_the_launcher(void **state)
{
	int fds[2];
	pid_t task = 0;

	assert_int_equal(pipe(fds), 0);
	/* So the orphaned task re-parents to us, and we can tell how it ended. */
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	fflush(NULL);
	pid_t launcher = fork();
	assert_true(launcher >= 0);
	if (launcher == 0) {
		char *argv[] = {"sleep", "60", NULL};
		sigset_t none;
		int exec_errno = 0;
		pid_t pid;
		sigemptyset(&none);
		struct mg_spawn_request req = {.argv = argv,
		                               .cgroup_fd = -1,
		                               .child_sigmask = &none,
		                               .stdin_fd = -1,
		                               .stdout_fd = -1,
		                               .stderr_fd = -1};
		if (mg_spawn(&req, &pid, &exec_errno) < 0 || exec_errno)
			_exit(1);
		if (write(fds[1], &pid, sizeof(pid)) != (ssize_t)sizeof(pid))
			_exit(1);
		raise(SIGKILL);
		_exit(1);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &task, sizeof(task)), (ssize_t)sizeof(task));
	close(fds[0]);
	int status = ft_reap_child(launcher, 5000);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	/* -1: still alive after 5 s (then killed by ft_reap_child). */
	status = ft_reap_child(task, 5000);
	assert_int_not_equal(status, -1);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
}

/* Under RLIMIT_AS, the address space a task reaches without touching it (so
 * ru_maxrss stays small) is seen only by sampling VmPeak while it runs: the
 * task that fails after filling its limit names it, the one that fails at
 * once does not. */
static void vmpeak_sampled_under_rlimit_as(void **state)
{
	static const char script[] = "import mmap, os, sys, time\n"
	                             "if os.environ['MEMGUARD_TASK'] == '1':\n"
	                             "    sys.exit(1)\n"
	                             "maps = []\n"
	                             "try:\n"
	                             "    while True:\n"
	                             "        maps.append(mmap.mmap(-1, 1 << 20))\n"
	                             "except (OSError, MemoryError):\n"
	                             "    pass\n"
	                             "time.sleep(1)\n"
	                             "sys.exit(1)\n";
	char *command[] = {"python3", "-c", (char *)script, NULL};
	struct mg_task tasks[2] = {{.index = 0}, {.index = 1}};
	struct mg_supervisor_config cfg = {
	        .command = command,
	        .tasks = tasks,
	        .ntasks = 2,
	        .parallel = 2,
	        .share = 1ull << 30, /* far above: the watchdog must not kill */
	        .rlimit_as = 256ull << 20,
	        .procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC),
	        .grace_usec = 60 * 1000000ull,
	        .watchdog_interval_usec = 50000,
	};
	char why[256];

	ft_require_python();
	assert_true(cfg.procfd >= 0);
	assert_int_equal(mg_supervise(&cfg, NULL), 0);
	close(cfg.procfd);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(tasks[i].state, MG_TASK_DONE);
		assert_true(tasks[i].exited && WIFEXITED(tasks[i].wait_status));
		assert_int_equal(WEXITSTATUS(tasks[i].wait_status), 1);
		assert_int_equal(tasks[i].rlimit_as, cfg.rlimit_as);
		assert_true(tasks[i].as_peak_known);
		/* The RSS the watchdog saw stayed far below: untouched mappings. */
		assert_true(tasks[i].peak < cfg.rlimit_as / 2);
	}
	print_message("task 0: as_peak %llu of %llu; task 1: %llu\n", (unsigned long long)tasks[0].as_peak,
	              (unsigned long long)cfg.rlimit_as, (unsigned long long)tasks[1].as_peak);
	assert_true(tasks[0].as_peak >= cfg.rlimit_as / 100 * 95);
	assert_true(tasks[0].as_peak <= cfg.rlimit_as);
	mg_task_reason(&tasks[0], why, sizeof(why));
	ft_assert_contains(why, "failed with exit code 1 after reaching at least ");
	ft_assert_contains(why, "of its 256MiB address-space limit (RLIMIT_AS)");
	assert_true(tasks[1].as_peak < cfg.rlimit_as / 2);
	assert_string_equal(mg_task_reason(&tasks[1], why, sizeof(why)), "failed with exit code 1");
}

/* A CPython task that grows fast to its RLIMIT_AS under a small share:
 * between two samples of VmPeak it goes from far below the limit to its
 * MemoryError, and its resident peak alone stays far below the limit (the
 * interpreter's own mappings are address space that is not resident). The
 * verdict must not depend on where the samples fell: each of the tasks
 * failed near RLIMIT_AS (before, the same task was near_limit in 1 run of
 * 3 and a plain "exit 1" in 2, so whether it was retried varied). */
static void fast_growth_is_near_rlimit_as(void **state)
{
	static const char script[] = "x = []\n"
	                             "while True:\n"
	                             "    x.append(bytearray(1 << 20))\n";
	char *command[] = {"python3", "-c", (char *)script, NULL};
	struct mg_task tasks[4];
	struct mg_supervisor_config cfg = {
	        .command = command,
	        .tasks = tasks,
	        .ntasks = MG_ARRAY_SIZE(tasks),
	        .parallel = 2,
	        .share = 1ull << 30, /* far above: the watchdog must not kill */
	        .rlimit_as = 40ull << 20,
	        .procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC),
	        .grace_usec = 60 * 1000000ull,
	        .watchdog_interval_usec = 250000,
	};

	ft_require_python();
	for (size_t i = 0; i < MG_ARRAY_SIZE(tasks); i++)
		tasks[i] = (struct mg_task){.index = (unsigned)i};
	assert_true(cfg.procfd >= 0);
	assert_int_equal(mg_supervise(&cfg, NULL), 0);
	close(cfg.procfd);
	for (size_t i = 0; i < MG_ARRAY_SIZE(tasks); i++) {
		struct mg_memreason v;
		char why[256];
		assert_true(tasks[i].exited && WIFEXITED(tasks[i].wait_status));
		assert_int_equal(WEXITSTATUS(tasks[i].wait_status), 1);
		mg_task_reason(&tasks[i], why, sizeof(why));
		print_message("task %zu: address space %llu MiB of 40 MiB: %s\n", i + 1,
		              (unsigned long long)(tasks[i].as_peak >> 20), why);
		assert_true(mg_memreason_judge(&tasks[i], &v));
		assert_int_equal(v.near, MG_NEAR_RLIMIT_AS);
		assert_int_equal(mg_task_memory_end(&tasks[i]), MG_MEMORY_END_LIKELY);
		assert_true(tasks[i].as_peak <= cfg.rlimit_as);
	}
}

/* The RSS watchdog that catches a task as it exits sees a zombie of no
 * memory: that is no peak (before, such tasks had a known Peak of 0, and
 * the joblog said 0 instead of "-"). Short tasks under a watchdog that
 * looks very often make the moment common. */
static void no_peak_of_zero(void **state)
{
	char *command[] = {"/bin/sleep", "0.02", NULL};
	struct mg_task tasks[100];
	struct mg_supervisor_config cfg = {
	        .command = command,
	        .tasks = tasks,
	        .ntasks = MG_ARRAY_SIZE(tasks),
	        .parallel = 6,
	        .share = 1ull << 30,
	        .procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC),
	        .grace_usec = 60 * 1000000ull,
	        .watchdog_interval_usec = 300,
	};
	size_t known = 0;

	for (size_t i = 0; i < MG_ARRAY_SIZE(tasks); i++)
		tasks[i] = (struct mg_task){.index = (unsigned)i};
	assert_true(cfg.procfd >= 0);
	assert_int_equal(mg_supervise(&cfg, NULL), 0);
	close(cfg.procfd);
	for (size_t i = 0; i < MG_ARRAY_SIZE(tasks); i++) {
		assert_int_equal(tasks[i].state, MG_TASK_DONE);
		known += tasks[i].peak_known;
		if (tasks[i].peak_known && tasks[i].peak == 0)
			print_error("task %zu: a known peak of 0\n", i + 1);
		assert_false(tasks[i].peak_known && tasks[i].peak == 0);
	}
	print_message("%zu of %zu tasks with a sampled peak\n", known, MG_ARRAY_SIZE(tasks));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(no_peak_of_zero),
	        cmocka_unit_test(fast_growth_is_near_rlimit_as),
	        cmocka_unit_test(second_sigterm_kills_at_once),
	        cmocka_unit_test(escaped_grandchild_dies_with_the_run),
	        cmocka_unit_test(main_process_dies_with_the_launcher),
	        cmocka_unit_test(vmpeak_sampled_under_rlimit_as),
	        cmocka_unit_test(resumed_tasks_keep_their_processes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
