/* Starting one task inside its cgroup, with its rlimit and environment. */
#include "run/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memguard/cgroup.h"
#include "memguard/log.h"
#include "memguard/util.h"
#include "options.h"

/* glibc 2.36 has no clone3 wrapper. */
static pid_t clone_into_cgroup(int cgroup_fd)
{
	struct clone_args args = {
	        .flags = CLONE_INTO_CGROUP,
	        .exit_signal = (__u64)SIGCHLD,
	        .cgroup = (__u64)(unsigned)cgroup_fd,
	};

	return (pid_t)syscall(SYS_clone3, &args, sizeof(args));
}

/* Whether clone3 failed in a way that fork, then a write to cgroup.procs,
 * gets round: before 5.7 (ENOSYS, E2BIG), or a seccomp filter that denies
 * clone3 (container runtimes answer ENOSYS or EPERM). Says so once, at debug
 * level: the kernel tests assert which way the tasks started. */
static bool clone3_unavailable(int err)
{
	static bool said;

	if (err != ENOSYS && err != E2BIG && err != EPERM)
		return false;
	if (!said)
		log_debug("clone3 with CLONE_INTO_CGROUP failed (%s): tasks start by fork, then join their "
		          "cgroup through cgroup.procs",
		          strerror(err));
	said = true;
	return true;
}

static void report_and_exit(int pipefd, int err)
{
	ssize_t n = write(pipefd, &err, sizeof(err));
	(void)n;
	_exit(err == ENOENT ? MG_EXIT_NOTFOUND : MG_EXIT_NOEXEC);
}

/* In the child: nothing here may return. */
static void exec_task(const struct mg_spawn_request *req, int pipefd, int move_self, pid_t parent)
{
	static const int reset[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGCHLD, SIGPIPE};

	/* The launcher SIGKILLed (OOM killer, a hard kill) takes the task's main
	 * process with it; it survives exec except into a setuid program. Only
	 * this process: what it forks does not inherit it. If the launcher died
	 * before the prctl, nothing would send it: check. */
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		raise(SIGKILL);
	int r = move_self ? mg_cg_move_pid(req->cgroup_fd, 0) : 0;

	if (r < 0)
		report_and_exit(pipefd, -r);
	for (size_t i = 0; i < MG_ARRAY_SIZE(reset); i++)
		signal(reset[i], SIG_DFL);
	sigprocmask(SIG_SETMASK, req->child_sigmask, NULL);
	/* Its own process group: forwarded signals reach the task's children too. */
	setpgid(0, 0);
	/* Files or pipes memguard opened with O_CLOEXEC: dup2 keeps them open. */
	if ((req->stdin_fd >= 0 && dup2(req->stdin_fd, STDIN_FILENO) < 0) ||
	    (req->stdout_fd >= 0 && dup2(req->stdout_fd, STDOUT_FILENO) < 0) ||
	    (req->stderr_fd >= 0 && dup2(req->stderr_fd, STDERR_FILENO) < 0))
		report_and_exit(pipefd, errno);
	/* memguard raised its own fd limit; the command gets the one it had. */
	if (req->nofile)
		(void)setrlimit(RLIMIT_NOFILE, req->nofile);
	/* Set here, in the child's own copy, so memguard's memory stays flat in N. */
	for (size_t i = 0; i < req->nenv; i++)
		if (setenv(req->env[i].name, req->env[i].value, 1) < 0)
			report_and_exit(pipefd, errno);
	/* Last: setenv allocates, and memguard's own address space (a sanitizer's
	 * shadow, say) may already be past the task's limit. */
	if (req->rlimit_as) {
		struct rlimit rl = {.rlim_cur = req->rlimit_as, .rlim_max = req->rlimit_as};
		if (setrlimit(RLIMIT_AS, &rl) < 0)
			report_and_exit(pipefd, errno);
	}
	execvp(req->argv[0], req->argv);
	report_and_exit(pipefd, errno);
}

int mg_spawn_probe(int cgroup_fd)
{
	int status, r = 0;
	pid_t pid = clone_into_cgroup(cgroup_fd);

	if (pid < 0 && clone3_unavailable(errno)) {
		/* No clone3: the fallback's own move is what must work. */
		pid = fork();
		if (pid == 0)
			_exit(mg_cg_move_pid(cgroup_fd, 0) < 0 ? 1 : 0);
	} else if (pid == 0) {
		_exit(0);
	}
	if (pid < 0)
		return -errno;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		r = -EACCES;
	return r;
}

int mg_spawn(const struct mg_spawn_request *req, pid_t *ret_pid, int *ret_exec_errno)
{
	int pipefd[2], err = 0, move_self = 0;
	pid_t pid = -1, parent = getpid();

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	if (req->cgroup_fd >= 0) {
		pid = clone_into_cgroup(req->cgroup_fd);
		/* Then fork, and move in before exec. */
		if (pid < 0 && clone3_unavailable(errno))
			move_self = 1;
	}
	if (pid < 0 && (req->cgroup_fd < 0 || move_self))
		pid = fork();
	if (pid < 0) {
		err = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return err;
	}
	if (pid == 0) {
		close(pipefd[0]);
		exec_task(req, pipefd[1], move_self, parent);
	}
	close(pipefd[1]);
	/* The pipe closes on a successful exec (O_CLOEXEC) or carries the errno. */
	ssize_t n;
	do
		n = read(pipefd[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	/* The child has exec'd or failed by now, so its setpgid() has run. */
	*ret_pid = pid;
	*ret_exec_errno = n == (ssize_t)sizeof(err) ? err : 0;
	return 0;
}
