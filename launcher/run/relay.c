/* The launcher's first process, relaying to the launcher that memguardd placed. */
#include "run/relay.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "memguard/log.h"
#include "memguard/paths.h"
#include "memguard/util.h"
#include "run/preflight.h"

/* How often the first process looks whether memguardd removed the run's
 * cgroup after the launcher ended, and whether memguardd still runs. */
#define GONE_POLL_MS 20
#define DAEMON_POLL_MS 500
/* Past kill_grace (10 s by default) and the removal: a memguardd that never
 * removes the run must not hold the batch job's end for ever. */
#define GONE_WAIT_MAX_MS (5 * 60 * 1000)

static const int relayed[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGTSTP, SIGCONT};

/* Waits until memguardd removed the run's cgroup: it does once the launcher
 * is gone and what it left had its grace period. No wait without a run
 * (the launcher never named one) or once no memguardd runs to remove it: a
 * restarted one adopts and removes the run. */
static void wait_run_gone(int fd)
{
	char path[PATH_MAX];
	ssize_t n = mg_read_small_fd(fd, path, sizeof(path));
	struct stat st;

	if (n <= 0)
		return;
	for (int waited = 0; stat(path, &st) == 0; waited += GONE_POLL_MS) {
		if (waited % DAEMON_POLL_MS == 0 && mg_daemon_running_at(AT_FDCWD, MG_DAEMON_PIDFILE) == 0)
			return;
		if (waited >= GONE_WAIT_MAX_MS) {
			log_warn(
			        "memguardd has not removed the run's cgroup %s %d s after the run ended: not "
			        "waiting longer",
			        path, GONE_WAIT_MAX_MS / 1000);
			return;
		}
		nanosleep(&(struct timespec){.tv_nsec = GONE_POLL_MS * 1000000L}, NULL);
	}
}

static _Noreturn void relay(pid_t child, int fd, const sigset_t *set)
{
	for (;;) {
		siginfo_t si;
		int status, sig = sigwaitinfo(set, &si);

		if (sig < 0)
			continue;
		if (sig != SIGCHLD) {
			(void)kill(child, sig);
			/* Stopped as the default action would stop it: a shell sees the
			 * job stopped, and the SIGCONT that resumes it is relayed too. */
			if (sig == SIGTSTP)
				(void)raise(SIGSTOP);
			continue;
		}
		if (waitpid(child, &status, WNOHANG) != child)
			continue;
		wait_run_gone(fd);
		if (!WIFSIGNALED(status))
			_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
		sig = WTERMSIG(status);
		signal(sig, SIG_DFL);
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, sig);
		(void)sigprocmask(SIG_UNBLOCK, &one, NULL);
		raise(sig);
		_exit(128 + sig);
	}
}
int mg_relay_fork(void)
{
	sigset_t set, old;
	int p[2];

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (size_t i = 0; i < MG_ARRAY_SIZE(relayed); i++)
		sigaddset(&set, relayed[i]);
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	/* Blocked before the fork, so none is lost to the parent meanwhile. */
	sigprocmask(SIG_BLOCK, &set, &old);
	pid_t pid = fork();
	if (pid < 0) {
		int r = -errno;
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(p[0]);
		close(p[1]);
		return r;
	}
	if (pid == 0) {
		/* Its own process group: a terminal's ^C or a killpg reaches the
		 * first process, which relays it, and the launcher gets it once. */
		(void)setpgid(0, 0);
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(p[0]);
		return p[1];
	}
	close(p[1]);
	relay(pid, p[0], &set);
}

void mg_relay_tell_run(int fd, const char *path)
{
	if (fd < 0)
		return;
	(void)!write(fd, path, strlen(path));
	close(fd);
}
