/* The degraded-mode watcher: outlives a SIGKILLed launcher to kill the run. */
#include "run/watcher.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "memguard/procstat.h"
#include "memguard/util.h"

#define SWEEP_ROUNDS 50
#define SWEEP_PAUSE_NSEC (20 * 1000000L)
#define TERM_POLL_NSEC (100 * 1000000L)

static const int ignored[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2};

int mg_watcher_token(int procfd, pid_t pid, char *buf, size_t size)
{
	uint64_t start;
	int r = mg_proc_start_time(procfd, pid, &start);

	if (r < 0)
		return r;
	if ((size_t)snprintf(buf, size, "%d-%" PRIu64, (int)pid, start) >= size)
		return -ENOBUFS;
	return 0;
}

int mg_watcher_find(int procfd, const char *token, uid_t uid, pid_t self, pid_t **ret_pids)
{
	_cleanup_free_ struct mg_proc *procs = NULL;
	_cleanup_free_ pid_t *pids = NULL;
	int n = mg_proc_scan(procfd, &procs), found = 0;

	if (n < 0)
		return n;
	if (!(pids = calloc((size_t)n + 1, sizeof(*pids))))
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		_cleanup_free_ char *block = NULL;
		char name[16];
		struct stat st;
		ssize_t size;

		if (procs[i].pid == self || procs[i].state == 'Z')
			continue;
		snprintf(name, sizeof(name), "%d", (int)procs[i].pid);
		if (fstatat(procfd, name, &st, 0) < 0 || st.st_uid != uid)
			continue;
		size = mg_proc_read_environ(procfd, procs[i].pid, &block);
		if (size == -ENOMEM)
			return -ENOMEM;
		if (size >= 0 && mg_proc_environ_has(block, (size_t)size, MG_RUN_ENV, token))
			pids[found++] = procs[i].pid;
	}
	*ret_pids = TAKE_PTR(pids);
	return found;
}

/* Signals pid only if it still holds token: the pidfd pins the process, so
 * a pid recycled since the scan is never hit. Returns 1 when signalled. */
static int signal_if_token(int procfd, pid_t pid, const char *token, int sig)
{
	_cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	_cleanup_free_ char *block = NULL;
	ssize_t size;

	if (pidfd < 0 && errno != ENOSYS)
		return 0;
	size = mg_proc_read_environ(procfd, pid, &block);
	if (size < 0 || !mg_proc_environ_has(block, (size_t)size, MG_RUN_ENV, token))
		return 0;
	if (pidfd >= 0)
		return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) == 0;
	return kill(pid, sig) == 0;
}

/* Signals every process of the run once. Returns how many, or -errno. */
static int sweep(int procfd, const char *token, int sig)
{
	_cleanup_free_ pid_t *pids = NULL;
	int n = mg_watcher_find(procfd, token, getuid(), getpid(), &pids), hit = 0;

	for (int i = 0; i < n; i++)
		hit += signal_if_token(procfd, pids[i], token, sig);
	return n < 0 ? n : hit;
}

static void pause_nsec(long nsec)
{
	struct timespec ts = {.tv_sec = nsec / 1000000000L, .tv_nsec = nsec % 1000000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static bool close_span(int from, int to)
{
	return from > to || syscall(SYS_close_range, (unsigned)from, (unsigned)to, 0u) == 0;
}

/* Closes every fd but a and b. */
static void close_except(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;
	long max = sysconf(_SC_OPEN_MAX);

	if (close_span(0, lo - 1) && close_span(lo + 1, hi - 1) && close_span(hi + 1, INT32_MAX))
		return;
	for (int fd = 0; fd < (max > 0 && max < 65536 ? (int)max : 65536); fd++)
		if (fd != a && fd != b)
			close(fd);
}

/* In the child: nothing here returns. */
static void watch(int procfd, int rfd, const char *token, uint64_t delay_usec)
{
	sigset_t none;
	char byte;
	ssize_t n;

	/* A forwarded or terminal signal must not stop the watcher; only the
	 * socket decides. */
	for (size_t i = 0; i < MG_ARRAY_SIZE(ignored); i++)
		signal(ignored[i], SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Hold no terminal, pipe or file of the launcher's open. */
	close_except(procfd, rfd);
	int null = open("/dev/null", O_RDWR);
	if (null == 0) {
		(void)dup2(0, 1);
		(void)dup2(0, 2);
	}
	while ((n = read(rfd, &byte, 1)) < 0 && errno == EINTR)
		;
	if (n == 1)
		_exit(0); /* the launcher ended and cleaned up itself */
	/* EOF: the launcher died without a word. Its tasks' main processes die
	 * with it (PR_SET_PDEATHSIG); the rest gets the grace to end cleanly. */
	if (sweep(procfd, token, SIGTERM) > 0) {
		for (uint64_t waited = 0; waited * 1000 < delay_usec; waited += TERM_POLL_NSEC / 1000000) {
			pause_nsec(TERM_POLL_NSEC);
			_cleanup_free_ pid_t *pids = NULL;
			if (mg_watcher_find(procfd, token, getuid(), getpid(), &pids) == 0)
				break;
		}
	}
	/* Again until none is left: a process may fork between scans. */
	for (int round = 0; round < SWEEP_ROUNDS && sweep(procfd, token, SIGKILL) > 0; round++)
		pause_nsec(SWEEP_PAUSE_NSEC);
	_exit(0);
}

int mg_watcher_start(int procfd, const char *token, uint64_t delay_usec, struct mg_watcher *ret)
{
	int sv[2], r = 0;
	sigset_t mask, old;
	pid_t pid;

	/* A socket, not a pipe: the byte is sent with MSG_NOSIGNAL, so a watcher
	 * gone already costs us no SIGPIPE. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	/* Blocked until the child ignores them, so none kills it in between. */
	sigemptyset(&mask);
	for (size_t i = 0; i < MG_ARRAY_SIZE(ignored); i++)
		sigaddset(&mask, ignored[i]);
	sigprocmask(SIG_BLOCK, &mask, &old);
	pid = fork();
	if (pid == 0)
		watch(procfd, sv[0], token, delay_usec);
	if (pid < 0)
		r = -errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(sv[0]);
	if (r < 0) {
		close(sv[1]);
		return r;
	}
	/* Only we hold the other end (close-on-exec: no task inherits it), so
	 * EOF means we are gone. */
	*ret = (struct mg_watcher){.pid = pid, .fd = sv[1]};
	return 0;
}

void mg_watcher_stop(struct mg_watcher *w)
{
	if (w->fd >= 0) {
		(void)send(w->fd, "d", 1, MSG_NOSIGNAL);
		close(w->fd);
		w->fd = -1;
	}
	if (w->pid > 0) {
		while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
			;
		w->pid = -1;
	}
}
