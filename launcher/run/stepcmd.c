/* memguard step: one task inside one Slurm step (stepcmd.h). */
#include "run/stepcmd.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "memguard/cgroup.h"
#include "memguard/event.h"
#include "memguard/locate.h"
#include "memguard/log.h"
#include "memguard/paths.h"
#include "memguard/procstat.h"
#include "memguard/units.h"
#include "memguard/util.h"
#include "options.h"
#include "report/memreason.h"
#include "run/spawn.h"
#include "run/steps.h"

#define SAMPLE_USEC 250000ull

/* Passed on to the task's process group. SIGCONT too: Slurm's suspend
 * stops the step's processes and continues them. */
static const int passed_on[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT, SIGTSTP};

struct step {
	const char *nonce;
	uint64_t share, rlimit_as, grace_usec;
	char *const *command;
	int procfd, stepfd; /* the step's cgroup: -1 without one */
	bool constrained;   /* the step has a memory.max */
	bool peak_file;     /* memory.peak (5.19) */
	pid_t self, pid;
	bool ended, killing;
	sd_event *event;
	sd_event_source *grace, *sample;
	struct mg_step_record rec;
	char line[256];
	size_t nline;
};

void mg_step_cgroup_of(const char *own, char *ret, size_t size)
{
	const char *step = NULL;

	for (const char *p = own; (p = strstr(p, "/step_")); p++)
		step = p;
	if (step) {
		/* .../step_<n>/user/task_<k>: the user cgroup under the step. */
		const char *user = strchr(step + 1, '/');
		if (user && strncmp(user, "/user", 5) == 0 && (user[5] == '/' || user[5] == '\0')) {
			snprintf(ret, size, "%.*s", (int)(user + 5 - own), own);
			return;
		}
	}
	snprintf(ret, size, "%s", own);
}

static void emit(const char *line)
{
	size_t len = strlen(line);
	ssize_t n;

	/* One write: the task's own stderr shares the pipe. */
	do
		n = write(STDERR_FILENO, line, len);
	while (n < 0 && errno == EINTR);
}

/* SIGKILLs every process below us but ourselves: the task and what it
 * left (we are a subreaper, so orphans come back to us). How many were
 * alive. */
static int kill_below(struct step *st)
{
	_cleanup_free_ struct mg_proc *procs = NULL;
	int n = mg_proc_scan(st->procfd, &procs), alive = 0;
	pid_t self[] = {st->self};

	for (int i = 0; i < n; i++)
		if (procs[i].pid != st->self && procs[i].state != 'Z' &&
		    mg_proc_root_of(procs, (size_t)n, self, 1, procs[i].pid) == 0 &&
		    kill(procs[i].pid, SIGKILL) == 0)
			alive++;
	return alive;
}

static void kill_all(struct step *st)
{
	st->killing = true;
	if (st->pid > 0 && !st->ended)
		(void)kill(-st->pid, SIGKILL);
	(void)kill_below(st);
}

static int on_grace(sd_event_source *src, uint64_t usec, void *userdata)
{
	kill_all(userdata);
	return 0;
}

static void pass_on(struct step *st, int sig)
{
	if (st->pid <= 0 || st->ended)
		return;
	(void)kill(-st->pid, sig);
	if ((sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT) && !st->grace)
		(void)mg_event_arm_timer(st->event, &st->grace, st->grace_usec, 1000, on_grace, st);
}

static int on_signal(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata)
{
	pass_on(userdata, (int)si->ssi_signo);
	return 0;
}

/* The launcher's word, through srun's stdin: "signal N" or "kill". */
static void command(struct step *st, const char *line)
{
	uint64_t sig;

	if (strcmp(line, MG_STEP_CMD_KILL) == 0)
		kill_all(st);
	else if (strncmp(line, MG_STEP_CMD_SIGNAL " ", strlen(MG_STEP_CMD_SIGNAL) + 1) == 0 &&
	         mg_parse_u64(line + strlen(MG_STEP_CMD_SIGNAL) + 1, &sig) == 0 && sig > 0 && sig < 65)
		pass_on(st, (int)sig);
}

static int on_stdin(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct step *st = userdata;
	char buf[256];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		/* The launcher closed it, or srun gave no stdin: nothing more to hear. */
		sd_event_source_set_enabled(src, SD_EVENT_OFF);
		return 0;
	}
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] != '\n') {
			if (st->nline < sizeof(st->line) - 1)
				st->line[st->nline++] = buf[i];
			continue;
		}
		st->line[st->nline] = '\0';
		command(st, st->line);
		st->nline = 0;
	}
	return 0;
}

static void note_peak(struct step *st, uint64_t bytes)
{
	if (!st->rec.peak_known || bytes > st->rec.peak)
		st->rec.peak = bytes;
	st->rec.peak_known = st->rec.peak_sampled = true;
}

static void note_as_peak(struct step *st, uint64_t bytes)
{
	if (!st->rec.as_peak_known || bytes > st->rec.as_peak)
		st->rec.as_peak = bytes;
	st->rec.as_peak_known = true;
}

/* What the kernel keeps no record of: the step's memory before 5.19, the
 * task's address space under RLIMIT_AS, and without a limit on the step
 * the RSS of everything below us, against the share. */
static int on_sample(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct step *st = userdata;
	uint64_t v;

	(void)mg_event_arm_timer(st->event, &st->sample, SAMPLE_USEC, 10000, on_sample, st);
	if (st->ended)
		return 0;
	if (st->stepfd >= 0 && !st->peak_file && mg_cg_read_u64(st->stepfd, "memory.current", &v) == 0)
		note_peak(st, v);
	if (st->rlimit_as && mg_proc_read_vmpeak(st->procfd, st->pid, &v) == 0)
		note_as_peak(st, v);
	if (st->constrained || st->killing)
		return 0;
	_cleanup_free_ struct mg_proc *procs = NULL;
	int n = mg_proc_scan(st->procfd, &procs);
	pid_t roots[] = {st->self};
	uint64_t pages = 0;
	if (n < 0)
		return 0;
	mg_proc_tree_rss(procs, (size_t)n, roots, 1, &pages);
	for (int i = 0; i < n; i++)
		if (procs[i].pid == st->self)
			pages -= pages >= procs[i].rss_pages ? procs[i].rss_pages : pages;
	v = pages * (uint64_t)sysconf(_SC_PAGESIZE);
	note_peak(st, v);
	if (v > st->share) {
		st->rec.watchdog = true;
		kill_all(st);
	}
	return 0;
}

static int on_child(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata)
{
	struct step *st = userdata;
	struct rusage ru;
	int status;
	pid_t pid;

	while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0) {
		if (pid != st->pid || st->ended)
			continue;
		st->ended = true;
		st->rec.status = status;
		if (st->rlimit_as && ru.ru_maxrss > 0)
			note_as_peak(st, (uint64_t)ru.ru_maxrss * 1024);
		sd_event_exit(st->event, 0);
	}
	return 0;
}

/* Where the step's limit and counters are: the step's cgroup. */
static void find_step_cgroup(struct step *st)
{
	struct mg_cgroup_mount m = {0};
	_cleanup_free_ char *own = NULL;
	_cleanup_close_ int mountfd = -1;
	char path[4096];

	st->stepfd = -1;
	st->rec.limit = MG_SIZE_UNLIMITED;
	if (mg_cgroup_find_memory_mount(st->procfd, &m) < 0 || !m.unified ||
	    mg_cg_pid_path(st->procfd, 0, &own) < 0 || (mountfd = mg_cg_open(AT_FDCWD, m.path)) < 0) {
		mg_cgroup_mount_done(&m);
		return;
	}
	mg_step_cgroup_of(own, path, sizeof(path));
	st->stepfd = mg_cg_open(mountfd, path[1] ? path + 1 : ".");
	mg_cgroup_mount_done(&m);
	if (st->stepfd < 0) {
		st->stepfd = -1;
		return;
	}
	uint64_t limit;
	if (mg_cg_read_u64(st->stepfd, "memory.max", &limit) == 0)
		st->rec.limit = limit;
	st->constrained = st->rec.limit != MG_SIZE_UNLIMITED;
	st->peak_file = faccessat(st->stepfd, "memory.peak", F_OK, 0) == 0;
}

static int parse(int argc, char **argv, struct step *st)
{
	static const struct option opts[] = {
	        {"nonce", required_argument, NULL, 'n'},
	        {"share", required_argument, NULL, 's'},
	        {"rlimit-as", required_argument, NULL, 'a'},
	        {"grace", required_argument, NULL, 'g'},
	        {NULL, 0, NULL, 0},
	};
	const char *why = NULL;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		int r = 0;
		switch (c) {
		case 'n':
			st->nonce = optarg;
			r = strlen(optarg) == MG_STEP_NONCE_LEN ? 0 : -EINVAL;
			break;
		case 's':
			r = mg_parse_u64(optarg, &st->share);
			break;
		case 'a':
			r = mg_parse_u64(optarg, &st->rlimit_as);
			break;
		case 'g':
			r = mg_duration_parse(optarg, &st->grace_usec, &why);
			break;
		default:
			return -EINVAL;
		}
		if (r < 0)
			return log_err("step: --%s %s: not valid",
			               c == 'n'   ? "nonce"
			               : c == 's' ? "share"
			               : c == 'a' ? "rlimit-as"
			                          : "grace",
			               optarg),
			       -EINVAL;
	}
	if (!st->nonce || !st->share || optind >= argc)
		return log_err("step: usage: memguard step --nonce=HEX --share=BYTES [--rlimit-as=BYTES] "
		               "[--grace=DURATION] -- COMMAND (started by memguard itself)"),
		       -EINVAL;
	st->command = argv + optind;
	return 0;
}

/* Ends as the task ended: its exit code, or its signal, so that srun and
 * sacct say what became of it. */
static int end_as(int status)
{
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		struct rlimit none = {0, 0};
		sigset_t all;
		(void)setrlimit(RLIMIT_CORE, &none);
		signal(sig, SIG_DFL);
		sigfillset(&all);
		sigprocmask(SIG_UNBLOCK, &all, NULL);
		raise(sig);
		return 128 + sig;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : MG_EXIT_USAGE;
}

int mg_step_main(int argc, char **argv)
{
	struct step st = {.self = getpid(), .procfd = -1, .stepfd = -1, .pid = -1};
	char buf[1024];
	sigset_t mask, old;
	int devnull, r;

	mg_log_setup("memguard step", MG_LOG_STDERR, LOG_INFO);
	if (parse(argc, argv, &st) < 0)
		return MG_EXIT_USAGE;
	if ((st.procfd = open(getenv(MG_PROC_PATH_ENV) ?: MG_PROC_PATH, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) <
	    0)
		return mg_log_errno(LOG_ERR, -errno, "step: open /proc: %m"), MG_EXIT_USAGE;
	find_step_cgroup(&st);
	snprintf(st.rec.step, sizeof(st.rec.step), "%s.%s", getenv("SLURM_JOB_ID") ?: "?",
	         getenv("SLURM_STEP_ID") ?: "?");
	if (getenv("SLURMD_NODENAME"))
		snprintf(st.rec.node, sizeof(st.rec.node), "%s", getenv("SLURMD_NODENAME"));
	else if (gethostname(st.rec.node, sizeof(st.rec.node) - 1) < 0)
		st.rec.node[0] = '\0';
	emit(mg_step_record_format_start(st.nonce, &st.rec, buf, sizeof(buf)));

	/* Orphans of the task come back to us, to be counted and killed. */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1);
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	for (size_t i = 0; i < MG_ARRAY_SIZE(passed_on); i++)
		sigaddset(&mask, passed_on[i]);
	sigprocmask(SIG_BLOCK, &mask, &old);
	if ((r = sd_event_new(&st.event)) < 0)
		return mg_log_errno(LOG_ERR, r, "step: event loop: %m"), MG_EXIT_USAGE;
	r = sd_event_add_signal(st.event, NULL, SIGCHLD, on_child, &st);
	for (size_t i = 0; r >= 0 && i < MG_ARRAY_SIZE(passed_on); i++)
		r = sd_event_add_signal(st.event, NULL, passed_on[i], on_signal, &st);
	/* A stdin epoll cannot watch (/dev/null, a file) carries no commands. */
	if (r >= 0 && fcntl(STDIN_FILENO, F_SETFL, O_NONBLOCK) == 0 &&
	    sd_event_add_io(st.event, NULL, STDIN_FILENO, EPOLLIN, on_stdin, &st) < 0)
		log_debug("step: no commands from the launcher: stdin cannot be watched");
	if (r < 0)
		return mg_log_errno(LOG_ERR, r, "step: watch signals and stdin: %m"), MG_EXIT_USAGE;

	/* The launcher's commands come on stdin; the task reads nothing there. */
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	struct mg_spawn_request req = {
	        .argv = st.command,
	        .cgroup_fd = -1,
	        .rlimit_as = st.rlimit_as,
	        .child_sigmask = &old,
	        .stdin_fd = devnull,
	        .stdout_fd = -1,
	        .stderr_fd = -1,
	};
	r = mg_spawn(&req, &st.pid, &st.rec.exec_errno);
	if (devnull >= 0)
		close(devnull);
	if (r < 0) {
		st.rec.status = MG_EXIT_USAGE << 8;
		mg_log_errno(LOG_ERR, r, "step: start %s: %m", st.command[0]);
	} else {
		/* Only for what the kernel keeps no record of. */
		if ((st.stepfd >= 0 && !st.peak_file) || st.rlimit_as || !st.constrained)
			(void)mg_event_arm_timer(st.event, &st.sample, 0, 10000, on_sample, &st);
		r = sd_event_loop(st.event);
	}
	st.ended = true;

	/* The task is over: what it left goes too, before the step's
	 * counters are read, so that they are the whole attempt's. */
	for (int round = 0; round < 100 && kill_below(&st) > 0; round++) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		nanosleep(&(struct timespec){.tv_nsec = 10 * 1000000L}, NULL);
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	uint64_t peak;
	if (st.stepfd >= 0) {
		(void)mg_cg_read_memory_events(st.stepfd, &st.rec.events);
		if (st.peak_file && mg_cg_read_u64(st.stepfd, "memory.peak", &peak) == 0) {
			st.rec.peak = peak;
			st.rec.peak_known = true;
			st.rec.peak_sampled = false;
		}
	}
	emit(mg_step_record_format_end(st.nonce, &st.rec, buf, sizeof(buf)));
	sd_event_source_unref(st.grace);
	sd_event_source_unref(st.sample);
	sd_event_unref(st.event);
	if (st.stepfd >= 0)
		close(st.stepfd);
	close(st.procfd);
	return end_as(st.rec.status);
}
