/* Running the tasks: start, reap, forward signals, grace kill, watchdog. */
#include "run/supervisor.h"

#include <errno.h>
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

#include "memguard/contract.h"
#include "memguard/event.h"
#include "memguard/log.h"
#include "memguard/procstat.h"
#include "memguard/units.h"
#include "memguard/util.h"
#include "farm/joblog.h"
#include "farm/schedule.h"
#include "farm/sweep.h"
#include "report/memreason.h"
#include "run/spawn.h"
#include "run/steps.h"
#include "run/watcher.h"

/* How long a SIGKILLed launcher's watcher gives the run's processes after
 * SIGTERM before SIGKILL: the grace period, at most this. */
#define WATCHER_DELAY_MAX_USEC (5 * 1000000ull)

/* Under RLIMIT_AS, VmPeak is sampled this many times per watchdog interval
 * (every 50 ms): one read of /proc/<pid>/status per task. */
#define AS_SAMPLES_PER_WATCHDOG 5
/* ... and once soon after a task starts: 10 ms in. */
#define AS_FIRST_SAMPLE_DIVISOR 25

/* After a task's main process exits, how long its leftovers may take to die. */
#define DRAIN_TIMEOUT_USEC (5 * 1000000ull)
#define DRAIN_POLL_USEC 5000ull

/* A step told to die whose srun is still there this much later loses its
 * srun: srun's shepherd then cancels the step with SIGKILL. */
#define STEP_KILL_TIMEOUT_USEC (10 * 1000000ull)

static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2};

/* A status line on demand. Not forwarded: SIGUSR1 and SIGUSR2 are the
 * tasks', and nothing sends SIGALRM to a batch job by itself. */
#define STATUS_SIGNAL SIGALRM

/* Job control: SIGTSTP stops the tasks, then memguard itself, as a shell's
 * Ctrl-Z or a batch system's suspend expects; SIGCONT (which the kernel has
 * already delivered to memguard) continues them. */
static const int job_control[] = {SIGTSTP, SIGCONT};

extern char **environ;

/* A node's room in use. */
struct pool_use {
	size_t running;
	uint64_t in_use;
	unsigned cpus;
};

/* A running step's srun: the helper's stdin, its stderr, filtered. */
struct step_run {
	struct supervisor *s;
	struct mg_task *t;
	int in_fd, err_fd;
	int out_fd; /* where the filtered stderr goes: ours, or --results' file */
	sd_event_source *src;
	struct mg_step_stream stream;
	bool eof, exited;
	int srun_status;
	uint64_t kill_usec; /* when it was told to die; 0: not */
};

struct supervisor {
	const struct mg_supervisor_config *cfg;
	const struct mg_node_pool *pools; /* cfg's, or `here` */
	size_t npools;
	struct mg_node_pool here;
	struct pool_use *use;    /* by pool */
	struct step_run **steps; /* by position in cfg->tasks, while one runs */
	bool said_unlimited;     /* a step without its share as memory.max: said once */
	bool step_started;       /* some step's helper has started: srun works here */
	sd_event *event;
	sd_event_source *grace_timer, *drain_timer, *watchdog_timer, *as_timer, *progress_timer, *peak_timer,
	        *step_kill_timer;
	size_t next;   /* the first attempts: none before it is still pending */
	size_t *retry; /* pending retries (attempt > first_attempt), by index in order */
	size_t nretry;
	size_t running; /* RUNNING or DRAINING */
	size_t done;
	uint64_t in_use; /* the shares of the tasks RUNNING or DRAINING */
	struct mg_farm_counts counts;
	uint64_t start_usec;
	bool status_shown; /* a redrawn status line is on the terminal */
	bool stopping;     /* no task starts any more: a terminating signal, or --halt */
	bool signalled;    /* a terminating signal came: the next one kills at once */
	const char *signal_name;
	sigset_t child_mask;
	uint64_t page_size;
	pid_t self;
	/* Degraded mode: every process last seen in a task's tree, by pid, so
	 * that one double-forked out of it (re-parented to us) stays the task's. */
	struct mg_proc_seen *seen;
	size_t nseen;
	/* Degraded mode: MEMGUARD_RUN of every task, and the watcher that kills
	 * them by it should we be SIGKILLed. */
	char run_token[64];
	struct mg_watcher watcher;
};

static bool terminating(int sig)
{
	return sig == SIGTERM || sig == SIGINT || sig == SIGHUP;
}

/* With GNU parallel's inputs, the sweep's hooks (farm/sweep.h); else NULL. */
static struct mg_sweep *sweep_of(const struct mg_supervisor_config *cfg)
{
	return cfg->farm ? cfg->farm->sweep : NULL;
}

char **mg_expand_command(char *const *command, const char *param)
{
	size_t n = 0;
	char **argv;

	while (command[n])
		n++;
	argv = calloc(n + 1, sizeof(*argv));
	if (!argv)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const char *src = command[i];
		size_t count = 0, plen = strlen(param);
		for (const char *p = src; (p = strstr(p, "{}")); p += 2)
			count++;
		char *dst = malloc(strlen(src) + count * plen + 1), *w = dst;
		if (!dst)
			goto fail;
		for (const char *p = src; *p;) {
			if (p[0] == '{' && p[1] == '}') {
				memcpy(w, param, plen);
				w += plen;
				p += 2;
			} else {
				*w++ = *p++;
			}
		}
		*w = '\0';
		argv[i] = dst;
	}
	return argv;
fail:
	for (size_t i = 0; i < n; i++)
		free(argv[i]);
	free(argv);
	return NULL;
}

void mg_free_argv(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

static void finish(struct supervisor *s, struct mg_task *t);
static int start_step(struct supervisor *s, struct mg_task *t, char *const *argv,
                      struct mg_spawn_request *req, int err);
static void start_more(struct supervisor *s);
static void arm(struct supervisor *s, sd_event_source **src, uint64_t usec, sd_event_time_handler_t cb);
static int on_as_timer(sd_event_source *src, uint64_t usec, void *userdata);
static void halt(struct supervisor *s, const struct mg_task *t, enum mg_halt_when when);
static int scan_tasks(struct supervisor *s, struct mg_proc **ret_procs, long **ret_task);

/* The name of a task's cgroup in the run's: task-<index>. */
static const char *task_cgroup_name(const struct mg_task *t, char buf[static 32])
{
	snprintf(buf, 32, "task-%u", t->index);
	return buf;
}

static int start_task(struct supervisor *s, struct mg_task *t)
{
	const struct mg_supervisor_config *cfg = s->cfg;
	/* + MEMGUARD_TASK, _RUN, _NTASKS, _MEM_BYTES, and PARALLEL_SEQ, _JOBSLOT of a sweep */
	struct mg_env_setting env[MG_HEAP_ENV_MAX + 6];
	char name[32];
	size_t nenv = 0;
	char **argv = NULL;
	int r;

	struct mg_task_limits limits = cfg->limits;
	uint64_t rlimit_as = cfg->rlimit_as;
	struct mg_env_setting heap[MG_HEAP_ENV_MAX];
	size_t nheap = 0;
	int out = -1, err = -1;

	if (!t->share)
		t->share = cfg->share;
	if (!t->attempt)
		t->attempt = t->first_attempt = 1;
	/* A retry's larger share: the limits and heap flags the run's share
	 * got, computed again for it. */
	if (t->share != cfg->share && cfg->limits_in) {
		struct mg_limits_input in = *cfg->limits_in;
		struct mg_limits lim;
		in.share = t->share;
		mg_limits_compute(&in, &lim);
		limits = lim.task;
		rlimit_as = lim.rlimit_as;
		if (cfg->heap_flags)
			nheap = (size_t)mg_heap_settings(cfg->runtime, t->share, environ, cfg->command, heap);
	}
	/* The share's own heap flags replace the run's; MALLOC_ARENA_MAX and a
	 * pool's setting stay. */
	for (size_t i = 0; i < cfg->nheap_env && nheap < MG_HEAP_ENV_MAX; i++) {
		bool redone = false;
		for (size_t k = 0; k < nheap && !redone; k++)
			redone = strcmp(heap[k].name, cfg->heap_env[i].name) == 0;
		if (!redone)
			heap[nheap++] = cfg->heap_env[i];
	}
	/* A step's memory.max is its share, set by Slurm. */
	t->limit = cfg->placement ? limits.max : cfg->steps ? t->share : 0;
	t->rlimit_as = rlimit_as;
	t->start_usec = mg_now_usec();
	struct timespec wall;
	clock_gettime(CLOCK_REALTIME, &wall);
	t->start_wall_usec = (uint64_t)wall.tv_sec * 1000000u + (uint64_t)wall.tv_nsec / 1000u;
	if (cfg->farm && (r = mg_farm_open_results(cfg->farm, t, &out, &err)) < 0) {
		t->spawn_errno = -r;
		return r;
	}
	/* A sweep's output goes through pipes to memguard (grouped, --tag, -k). */
	if ((r = mg_sweep_output(sweep_of(cfg), t, &out, &err)) < 0) {
		t->spawn_errno = -r;
		if (out >= 0)
			close(out), close(err);
		return r;
	}
	if (cfg->placement) {
		t->cgfd = mg_placement_task_create(cfg->placement, task_cgroup_name(t, name), &limits);
		if (t->cgfd < 0) {
			t->spawn_errno = -t->cgfd;
			t->cgfd = -1;
			(void)mg_cg_remove(cfg->placement->runfd, name);
			if (out >= 0)
				close(out), close(err);
			return -t->spawn_errno;
		}
	}
	for (size_t i = 0; i < nheap; i++)
		env[nenv++] = heap[i];
	env[nenv] = (struct mg_env_setting){.name = "MEMGUARD_TASK"};
	snprintf(env[nenv++].value, sizeof(env[0].value), "%u", t->index);
	if (s->run_token[0]) {
		env[nenv] = (struct mg_env_setting){.name = MG_RUN_ENV};
		snprintf(env[nenv++].value, sizeof(env[0].value), "%s", s->run_token);
	}
	env[nenv] = (struct mg_env_setting){.name = "MEMGUARD_NTASKS"};
	snprintf(env[nenv++].value, sizeof(env[0].value), "%zu",
	         cfg->list_size ? cfg->list_size : cfg->ntasks);
	env[nenv] = (struct mg_env_setting){.name = "MEMGUARD_MEM_BYTES"};
	snprintf(env[nenv++].value, sizeof(env[0].value), "%" PRIu64, t->share);

	/* A sweep's task is its line for the shell, in a job slot of its own. */
	if (sweep_of(cfg))
		argv = mg_sweep_argv(sweep_of(cfg), t);
	else if (t->param)
		argv = mg_expand_command(cfg->command, t->param);
	if ((sweep_of(cfg) || t->param) && !argv) {
		t->spawn_errno = ENOMEM;
		if (out >= 0)
			close(out), close(err);
		return -ENOMEM;
	}
	nenv += mg_sweep_env(sweep_of(cfg), t, env + nenv);
	struct mg_spawn_request req = {
	        .argv = argv ? argv : cfg->command,
	        .cgroup_fd = t->cgfd,
	        .rlimit_as = rlimit_as,
	        .env = env,
	        .nenv = nenv,
	        .child_sigmask = &s->child_mask,
	        .nofile = cfg->nofile,
	        .stdin_fd = -1,
	        .stdout_fd = out,
	        .stderr_fd = err,
	};
	if (cfg->steps) {
		r = start_step(s, t, req.argv, &req, err);
		err = -1; /* the step's stderr goes there now */
	} else {
		r = mg_spawn(&req, &t->pid, &t->exec_errno);
	}
	mg_free_argv(argv);
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	/* No fd per running task: 1024 tasks would not fit the usual fd limit. */
	if (t->cgfd >= 0) {
		close(t->cgfd);
		t->cgfd = -1;
		t->in_cgroup = true;
	}
	if (r < 0) {
		t->spawn_errno = -r;
		return mg_log_errno(LOG_ERR, r, "start task %u: %m", t->index + 1);
	}
	t->state = MG_TASK_RUNNING;
	s->running++;
	s->in_use += t->share;
	s->use[t->pool].running++;
	s->use[t->pool].in_use += t->share;
	s->use[t->pool].cpus += cfg->steps ? s->pools[t->pool].step_cpus : 0;
	return 0;
}

static size_t position(const struct supervisor *s, const struct mg_task *t)
{
	return (size_t)(t - s->cfg->tasks);
}

static struct step_run *step_of(const struct supervisor *s, const struct mg_task *t)
{
	return s->steps ? s->steps[position(s, t)] : NULL;
}

/* Passes what the step wrote on its stderr to ours, or to --results' file. */
static void step_out(void *ctx, const char *data, size_t len)
{
	const struct step_run *run = ctx;
	struct mg_sweep *sweep = sweep_of(run->s->cfg);

	/* A sweep's grouped output: into its buffers, not through a pipe that
	 * this same loop would have to drain. */
	if (mg_sweep_captures(sweep)) {
		mg_sweep_feed_err(sweep, run->t, data, len);
		return;
	}
	while (len > 0) {
		ssize_t n = write(run->out_fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* nowhere to put it: the record still counts */
		data += n;
		len -= (size_t)n;
	}
}

/* Tells the helper something through srun's stdin (MG_STEP_CMD_*). */
static void step_tell(const struct step_run *run, const char *what)
{
	ssize_t n;

	do
		n = write(run->in_fd, what, strlen(what));
	while (n < 0 && errno == EINTR);
}

/* Sends sig to a running task: to its process group, or for a step to the
 * helper in it, which passes it on (srun would make SIGKILL of a SIGTERM).
 * 0 or -errno. */
static int signal_task(struct supervisor *s, const struct mg_task *t, int sig)
{
	struct step_run *run = step_of(s, t);
	char word[32];

	if (run) {
		snprintf(word, sizeof(word), MG_STEP_CMD_SIGNAL " %d\n", sig);
		step_tell(run, word);
		return 0;
	}
	return kill(-t->pid, sig) < 0 && errno != ESRCH ? -errno : 0;
}

static int on_step_stderr(sd_event_source *src, int fd, uint32_t revents, void *userdata);

/* The steps backend: the attempt is `srun ... memguard step ... -- argv`,
 * on its pool's node, with the helper's stdin and stderr ours. err is the
 * attempt's --results stderr file or -1, from now on the step's. */
static int start_step(struct supervisor *s, struct mg_task *t, char *const *argv,
                      struct mg_spawn_request *req, int err)
{
	const struct mg_supervisor_config *cfg = s->cfg;
	struct mg_step_request sr = {
	        .self = cfg->steps->self,
	        .node = s->pools[t->pool].name,
	        .cpus = s->pools[t->pool].step_cpus,
	        .share = t->share,
	        .seq = t->index + 1,
	        .nonce = cfg->steps->nonce,
	        .rlimit_as = t->rlimit_as,
	        .grace_usec = cfg->grace_usec,
	        .command = argv,
	};
	struct step_run *run = calloc(1, sizeof(*run));
	char **srun = run ? mg_steps_srun_argv(&sr) : NULL;
	int r = -ENOMEM;

	if (srun) {
		/* srun must not run under the task's RLIMIT_AS: the helper sets it. */
		req->argv = srun;
		req->rlimit_as = 0;
		r = mg_steps_spawn(req, &t->pid, &run->in_fd, &run->err_fd, &t->exec_errno);
		mg_steps_names_free(srun);
	}
	if (r >= 0) {
		snprintf(run->stream.nonce, sizeof(run->stream.nonce), "%s", cfg->steps->nonce);
		run->out_fd = err >= 0 ? err : STDERR_FILENO;
		/* A sweep that groups output reads none of it through this pipe. */
		if (err >= 0 && mg_sweep_captures(sweep_of(cfg))) {
			close(err);
			err = -1;
			run->out_fd = STDERR_FILENO;
		}
		run->stream.rec.limit = MG_SIZE_UNLIMITED;
		run->s = s;
		run->t = t;
		r = sd_event_add_io(s->event, &run->src, run->err_fd, EPOLLIN, on_step_stderr, run);
		if (r < 0) {
			(void)kill(t->pid, SIGKILL); /* its shepherd ends the step */
			close(run->in_fd);
			close(run->err_fd);
		}
	}
	if (r < 0) {
		if (err >= 0)
			close(err);
		free(run);
		return r;
	}
	s->steps[position(s, t)] = run;
	return 0;
}

/* The step's numbers into the task, and its pipes closed. */
static void step_done(struct supervisor *s, struct mg_task *t)
{
	struct step_run *run = step_of(s, t);
	const struct mg_step_record *rec;
	char limit[MG_SIZE_STRLEN];

	if (!run)
		return;
	mg_step_stream_finish(&run->stream, step_out, run);
	rec = &run->stream.rec;
	mg_step_apply(rec, run->srun_status, t);
	snprintf(t->step, sizeof(t->step), "%s", rec->step);
	/* A step srun could not start because the job is ending ran nothing. */
	if (!rec->started && s->stopping)
		t->interrupted = true;
	s->step_started |= rec->started;
	if (!rec->started && !s->stopping) {
		bool sig = WIFSIGNALED(run->srun_status);
		int n = sig ? WTERMSIG(run->srun_status) : WEXITSTATUS(run->srun_status);
		/* srun that starts no step at all would fail every task in turn. */
		if (!s->step_started) {
			s->stopping = true;
			log_err("task %u: srun started no step (srun: %s %d; see srun's words above), and no "
			        "step has started in this run: starting no more tasks; --backend=local runs "
			        "them "
			        "without Slurm steps",
			        t->index + 1, sig ? "signal" : "exit", n);
		} else {
			log_warn("task %u: its step ran no memguard step (srun: %s %d; see srun's words "
			         "above)",
			         t->index + 1, sig ? "signal" : "exit", n);
		}
	} else if (rec->started && rec->limit == MG_SIZE_UNLIMITED && !s->said_unlimited) {
		s->said_unlimited = true;
		log_warn("step %s has no memory limit (Slurm's ConstrainRAMSpace is off?): its task is "
		         "guarded by "
		         "RLIMIT_AS and an RSS watchdog, as in degraded mode",
		         rec->step);
	} else if (rec->started && rec->limit != MG_SIZE_UNLIMITED && rec->limit > t->share &&
	           !s->said_unlimited) {
		s->said_unlimited = true;
		log_warn("step %s has a memory limit of %s, above the task's share", rec->step,
		         mg_size_format(rec->limit, limit));
	}
	if (run->stream.bad)
		log_warn("task %u: its step's record did not parse; its numbers may be missing",
		         t->index + 1);
	sd_event_source_disable_unref(run->src);
	close(run->in_fd);
	close(run->err_fd);
	if (run->out_fd != STDERR_FILENO)
		close(run->out_fd);
	free(run);
	s->steps[position(s, t)] = NULL;
}

/* The attempt is over once srun has exited and its stderr has ended: the
 * end record comes last on it. */
static void step_maybe_over(struct supervisor *s, struct mg_task *t)
{
	struct step_run *run = step_of(s, t);

	if (run && run->exited && run->eof)
		finish(s, t);
}

static int on_step_stderr(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct step_run *run = userdata;
	char buf[8192];

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n > 0) {
			mg_step_stream_feed(&run->stream, buf, (size_t)n, step_out, run);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		run->eof = true;
		(void)sd_event_source_set_enabled(src, SD_EVENT_OFF);
		step_maybe_over(run->s, run->t);
		return 0;
	}
}

static bool is_retry(const struct mg_task *t)
{
	return t->attempt > t->first_attempt;
}

/* The first first attempt still pending, or NULL. */
static struct mg_task *next_first(struct supervisor *s)
{
	const struct mg_supervisor_config *cfg = s->cfg;

	while (s->next < cfg->ntasks &&
	       (cfg->tasks[s->next].state != MG_TASK_PENDING || is_retry(&cfg->tasks[s->next])))
		s->next++;
	return s->next < cfg->ntasks ? &cfg->tasks[s->next] : NULL;
}

/* A pool's free slots: -n less what runs there, and with steps no more
 * than its free CPUs hold, so that srun never has to wait for CPUs. */
static unsigned free_slots(const struct supervisor *s, size_t p)
{
	const struct mg_node_pool *pool = &s->pools[p];
	const struct pool_use *u = &s->use[p];
	unsigned slots = u->running < pool->parallel ? (unsigned)(pool->parallel - u->running) : 0;

	if (pool->cpus && s->cfg->steps) {
		unsigned per = pool->step_cpus ? pool->step_cpus : 1;
		unsigned cpus = u->cpus < pool->cpus ? (pool->cpus - u->cpus) / per : 0;
		slots = cpus < slots ? cpus : slots;
	}
	return slots;
}

/* Asks the scheduler (farm/schedule.c) whom to start and where; NULL for
 * nobody now. The first attempts all wait behind the first one, so one
 * stands for them. */
static struct mg_task *pick(struct supervisor *s)
{
	const struct mg_supervisor_config *cfg = s->cfg;
	struct mg_task *first = next_first(s);
	_cleanup_free_ struct mg_sched_task *pending = calloc(s->nretry + 1, sizeof(*pending));
	_cleanup_free_ struct mg_sched_pool *pools = calloc(s->npools, sizeof(*pools));
	size_t n = 0, index, pool;
	uint64_t share;

	if (!pending || !pools)
		return NULL;
	/* The run's share means the share of the node it goes to (0); a task
	 * a resume planned with a larger one keeps it. */
	if (first)
		pending[n++] = (struct mg_sched_task){.attempt = 1,
		                                      .share = first->share == cfg->share ? 0 : first->share};
	for (size_t i = 0; i < s->nretry; i++)
		pending[n++] = (struct mg_sched_task){.attempt = 2, .share = cfg->tasks[s->retry[i]].share};
	for (size_t p = 0; p < s->npools; p++)
		pools[p] = (struct mg_sched_pool){
		        .budget = s->pools[p].budget ? s->pools[p].budget : UINT64_MAX,
		        .in_use = s->use[p].in_use,
		        .free_slots = free_slots(s, p),
		        .share = s->pools[p].share,
		};
	if (mg_sched_next_pool(pools, s->npools, pending, n, &pool, &index, &share) == 0)
		return NULL;
	struct mg_task *t;
	if (first && index == 0) {
		s->next++;
		t = first;
	} else {
		index -= first != NULL;
		t = &cfg->tasks[s->retry[index]];
		memmove(&s->retry[index], &s->retry[index + 1], (s->nretry - index - 1) * sizeof(*s->retry));
		s->nretry--;
	}
	/* srun's --mem takes whole MiB: a step's memory.max is that. */
	if (cfg->steps && mg_steps_share(share) >= MG_STEP_UNIT)
		share = mg_steps_share(share);
	t->share = share;
	t->pool = (unsigned)pool;
	t->host = s->pools[pool].name;
	return t;
}

static void start_more(struct supervisor *s)
{
	const struct mg_supervisor_config *cfg = s->cfg;
	struct mg_task *t;

	while (!s->stopping && (t = pick(s))) {
		/* A line another node took first is its, not ours. */
		int claim = cfg->farm && !t->claimed ? mg_farm_claim(cfg->farm, t) : 1;
		if (claim == 0) {
			mg_sweep_skip(sweep_of(cfg), t);
			t->state = MG_TASK_DONE;
			t->elsewhere = true;
			s->counts.elsewhere++;
			s->done++;
			continue;
		}
		t->claimed = claim > 0;
		if (claim < 0)
			t->spawn_errno = -claim;
		if (claim < 0 || start_task(s, t) < 0) {
			/* Reported in its own row; the other tasks go on. */
			t->state = MG_TASK_DONE;
			t->end_usec = mg_now_usec();
			if (t->cgfd >= 0) {
				close(t->cgfd);
				t->cgfd = -1;
			}
			if (cfg->farm)
				(void)mg_farm_log_attempt(cfg->farm, t);
			halt(s, t, mg_sweep_ended(sweep_of(cfg), t, true));
			s->counts.failed++;
			s->done++;
		} else if (s->as_timer) {
			/* A first look at its address space soon after it starts:
			 * one that reaches its limit faster than the samples come
			 * still has what of it was never resident known. */
			arm(s, &s->as_timer, cfg->watchdog_interval_usec / AS_FIRST_SAMPLE_DIVISOR,
			    on_as_timer);
		}
	}
	if (s->done == cfg->ntasks || (s->stopping && s->running == 0))
		sd_event_exit(s->event, 0);
}

/* Opens the task's own cgroup, or returns -errno. */
static int open_task_cgroup(const struct supervisor *s, const struct mg_task *t)
{
	char name[32];

	return mg_cg_open(s->cfg->placement->runfd, task_cgroup_name(t, name));
}

/* A task_tag (1 + MEMGUARD_TASK, the task's index in the list) as 1 + its
 * position in cfg->tasks, which a resume or other nodes' claims leave
 * shorter than the list; 0 for none. The tasks are in index order. */
static uint32_t tag_position(const struct mg_supervisor_config *cfg, uint32_t tag)
{
	size_t lo = 0, hi = cfg->ntasks;

	while (tag && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cfg->tasks[mid].index == tag - 1)
			return (uint32_t)mid + 1;
		if (cfg->tasks[mid].index < tag - 1)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Degraded mode: scans /proc and says which task each process belongs to
 * (mg_proc_attribute), reading MEMGUARD_TASK only of our own orphans, then
 * remembers every attributed process for the next scan. Returns the count,
 * or -errno; *ret_procs and *ret_task are heap arrays of that many. */
static int scan_tasks(struct supervisor *s, struct mg_proc **ret_procs, long **ret_task)
{
	const struct mg_supervisor_config *cfg = s->cfg;
	_cleanup_free_ struct mg_proc *procs = NULL;
	_cleanup_free_ pid_t *roots = calloc(cfg->ntasks, sizeof(pid_t));
	_cleanup_free_ long *task = NULL;
	_cleanup_free_ struct mg_proc_seen *seen = NULL;
	size_t nseen = 0;
	int n;

	if (!roots)
		return -ENOMEM;
	n = mg_proc_scan(cfg->procfd, &procs);
	if (n < 0)
		return n;
	if (!(task = calloc((size_t)n + 1, sizeof(*task))) || !(seen = calloc((size_t)n + 1, sizeof(*seen))))
		return -ENOMEM;
	for (size_t i = 0; i < cfg->ntasks; i++)
		roots[i] = cfg->tasks[i].state == MG_TASK_RUNNING ? cfg->tasks[i].pid : 0;
	/* Our children: the tasks' main processes (seen after one scan) and orphans. */
	for (int i = 0; i < n; i++) {
		const struct mg_proc_seen *known = mg_proc_seen_find(s->seen, s->nseen, procs[i].pid);
		if (procs[i].ppid != s->self || (known && known->start_time == procs[i].start_time))
			continue;
		if (mg_proc_read_task_tag(cfg->procfd, procs[i].pid, &procs[i].task_tag) < 0)
			procs[i].task_tag = 0; /* not readable, or cleared: nothing to go by */
		procs[i].task_tag = tag_position(cfg, procs[i].task_tag);
	}
	mg_proc_attribute(procs, (size_t)n, roots, cfg->ntasks, s->self, s->seen, s->nseen, task);
	for (int i = 0; i < n; i++) {
		if (procs[i].pid == s->watcher.pid)
			task[i] = -1; /* our own child, of no task */
		if (task[i] >= 0)
			seen[nseen++] = (struct mg_proc_seen){.pid = procs[i].pid,
			                                      .start_time = procs[i].start_time,
			                                      .task = (uint32_t)task[i]};
	}
	mg_proc_seen_sort(seen, nseen);
	free(s->seen);
	s->seen = TAKE_PTR(seen);
	s->nseen = nseen;
	*ret_procs = TAKE_PTR(procs);
	*ret_task = TAKE_PTR(task);
	return n;
}

/* Degraded mode: SIGKILLs every process of the task at position (in
 * cfg->tasks), in its process group or not. Returns how many were
 * signalled, or -errno. */
static int kill_attributed(struct supervisor *s, size_t position)
{
	_cleanup_free_ struct mg_proc *procs = NULL;
	_cleanup_free_ long *task = NULL;
	int n = scan_tasks(s, &procs, &task), killed = 0;

	for (int k = 0; k < n; k++)
		if (task[k] == (long)position && procs[k].pid != s->self && kill(procs[k].pid, SIGKILL) == 0)
			killed++;
	return n < 0 ? n : killed;
}

/* Kills everything the task still has: its cgroup, or its process group and
 * every process that left it. */
static int on_step_kill_timer(sd_event_source *src, uint64_t usec, void *userdata);

static void kill_task(struct supervisor *s, struct mg_task *t)
{
	struct step_run *run = step_of(s, t);
	int r = 0;

	if (run) {
		/* The helper kills everything in the step; srun, told SIGTERM,
		 * would SIGKILL it without the record. */
		if (t->state == MG_TASK_RUNNING && !run->kill_usec) {
			step_tell(run, MG_STEP_CMD_KILL "\n");
			run->kill_usec = mg_now_usec();
			if (mg_event_arm_timer(s->event, &s->step_kill_timer, STEP_KILL_TIMEOUT_USEC, 1000000,
			                       on_step_kill_timer, s) < 0)
				(void)kill(t->pid, SIGKILL);
		}
		return;
	}
	if (t->in_cgroup) {
		_cleanup_close_ int fd = open_task_cgroup(s, t);
		r = fd < 0 ? fd : mg_cg_kill(fd);
	} else if (t->state == MG_TASK_RUNNING) {
		if (kill(-t->pid, SIGKILL) < 0 && errno != ESRCH)
			r = -errno;
		int k = kill_attributed(s, (size_t)(t - s->cfg->tasks));
		r = r < 0 ? r : k < 0 ? k : 0;
	}
	if (r < 0 && r != -ENOENT)
		mg_log_errno(LOG_WARNING, r, "kill task %u: %m", t->index + 1);
}

/* A step told to die that still runs: its srun goes, and srun's shepherd
 * cancels the step. */
static int on_step_kill_timer(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct supervisor *s = userdata;
	uint64_t now = mg_now_usec();

	for (size_t i = 0; i < s->cfg->ntasks; i++) {
		struct mg_task *t = &s->cfg->tasks[i];
		struct step_run *run = step_of(s, t);
		if (run && run->kill_usec && t->state == MG_TASK_RUNNING &&
		    now - run->kill_usec >= STEP_KILL_TIMEOUT_USEC && kill(t->pid, SIGKILL) == 0)
			log_warn("task %u: its step did not end %llus after the kill; ending its srun",
			         t->index + 1, (unsigned long long)(STEP_KILL_TIMEOUT_USEC / 1000000));
	}
	return 0;
}

/* One line in the log for a task that ended for memory, or likely did, so
 * that it shows in the job's stderr even with --quiet: "out of memory" is
 * what to grep for. */
static void log_memory_end(const struct mg_task *t)
{
	enum mg_memory_end end = mg_task_memory_end(t);
	char why[256];

	if (end != MG_MEMORY_END_NONE)
		log_warn("task %u %s: %s", t->index + 1, mg_memory_end_words(end),
		         mg_task_reason(t, why, sizeof(why)));
}

/* A peak from samples: the largest seen, marked as such. A sample of
 * nothing is no peak: a task caught as it exits (a zombie has no memory)
 * would have a Peak of 0 instead of "-". */
static void note_sampled_peak(struct mg_task *t, uint64_t bytes)
{
	if (!bytes)
		return;
	if (!t->peak_known || bytes > t->peak)
		t->peak = bytes;
	t->peak_known = t->peak_sampled = true;
}

static int on_grace_timer(sd_event_source *src, uint64_t usec, void *userdata);

/* --halt's verdict on a sweep (farm/halt.h): soon starts nothing more; now
 * also stops what runs, as a SIGTERM would, without being one. */
static void halt(struct supervisor *s, const struct mg_task *t, enum mg_halt_when when)
{
	if (when == MG_HALT_NEVER || s->stopping)
		return;
	s->stopping = true;
	log_notice("task %u ended with status %d: --halt %s", t->index + 1, mg_task_exit_status(t),
	           when == MG_HALT_NOW ? "now: stopping the tasks still running"
	                               : "soon: starting no more tasks, waiting for those running");
	if (when != MG_HALT_NOW)
		return;
	for (size_t i = 0; i < s->cfg->ntasks; i++) {
		struct mg_task *r = &s->cfg->tasks[i];
		if (r->state != MG_TASK_RUNNING)
			continue;
		r->interrupted = true;
		int e = signal_task(s, r, SIGTERM);
		if (e < 0)
			mg_log_errno(LOG_WARNING, e, "stop task %u: %m", r->index + 1);
	}
	arm(s, &s->grace_timer, s->cfg->grace_usec, on_grace_timer);
}

/* The attempt is over: into the joblog, and run again with a larger share
 * when it failed for memory and has retries left; else the task is done. */
static void attempt_ended(struct supervisor *s, struct mg_task *t)
{
	const struct mg_supervisor_config *cfg = s->cfg;
	const char *outcome = mg_attempt_outcome(t);
	bool for_memory = mg_outcome_for_memory(outcome);
	struct mg_retry_input in = {
	        .for_memory = for_memory,
	        .retries = cfg->retries,
	        .retried = t->attempt - t->first_attempt,
	        .share = t->share,
	        .peak = t->peak,
	        .peak_known = t->peak_known,
	        .budget = cfg->budget,
	        .page_size = s->page_size,
	};
	uint64_t share = s->stopping || !cfg->budget ? 0 : mg_retry_share(&in);
	size_t *bigger = NULL;

	if (cfg->farm)
		(void)mg_farm_log_attempt(cfg->farm, t);
	if (strcmp(outcome, "oom_killed") == 0 || strcmp(outcome, "killed_by_memguardd") == 0 ||
	    strcmp(outcome, "killed_by_watchdog") == 0)
		s->counts.memory_kills++;
	bool retry = share && (bigger = realloc(s->retry, (s->nretry + 1) * sizeof(*s->retry)));
	/* A failure counts for --halt once it is final: a retry may yet succeed. */
	halt(s, t, mg_sweep_ended(sweep_of(cfg), t, !retry));
	if (retry) {
		char old[MG_SIZE_STRLEN], new[MG_SIZE_STRLEN];
		log_notice(
		        "task %u: attempt %u failed for memory (%s); retry %u of %u with a %s share instead "
		        "of %s, once that much of the budget is free",
		        t->index + 1, t->attempt, outcome, t->attempt - t->first_attempt + 1, cfg->retries,
		        mg_size_format(share, new), mg_size_format(t->share, old));
		s->retry = bigger;
		/* In the task file's order. */
		size_t at = s->nretry;
		size_t pos = (size_t)(t - cfg->tasks);
		while (at > 0 && s->retry[at - 1] > pos)
			at--;
		memmove(&s->retry[at + 1], &s->retry[at], (s->nretry - at) * sizeof(*s->retry));
		s->retry[at] = pos;
		s->nretry++;
		*t = (struct mg_task){.index = t->index,
		                      .param = t->param,
		                      .state = MG_TASK_PENDING,
		                      .cgfd = -1,
		                      .share = share,
		                      .attempt = t->attempt + 1,
		                      .first_attempt = t->first_attempt,
		                      .claimed = t->claimed};
		s->counts.retried++;
		return;
	}
	if (mg_task_exit_status(t) == 0)
		s->counts.ok++;
	else
		s->counts.failed++;
	s->done++;
}

static void finish(struct supervisor *s, struct mg_task *t)
{
	const struct mg_supervisor_config *cfg = s->cfg;

	if (t->in_cgroup) {
		_cleanup_close_ int cgfd = open_task_cgroup(s, t);
		uint64_t peak;
		char name[32];
		int r;

		/* Read the verdict before the cgroup and its counters are gone. */
		if ((r = cgfd < 0 ? cgfd : mg_cg_read_memory_events(cgfd, &t->events)) < 0)
			mg_log_errno(LOG_WARNING, r, "read memory.events of task %u: %m", t->index + 1);
		if (cgfd >= 0 && mg_cg_read_u64(cgfd, "memory.peak", &peak) == 0) {
			t->peak = peak;
			t->peak_known = true;
			t->peak_sampled = false;
		} else if (cgfd >= 0 && mg_cg_read_u64(cgfd, "memory.current", &peak) == 0) {
			note_sampled_peak(t, peak); /* the last look, before the cgroup goes */
		}
		if (cgfd >= 0 && mg_contract_get_killed(cgfd, t->daemon_reason, sizeof(t->daemon_reason)) > 0)
			t->killed_by = MG_KILL_DAEMON;
		if ((r = mg_cg_remove(cfg->placement->runfd, task_cgroup_name(t, name))) < 0)
			mg_log_errno(LOG_WARNING, r, "remove cgroup %s/%s: %m", cfg->placement->run, name);
	}
	step_done(s, t);
	t->state = MG_TASK_DONE;
	log_memory_end(t);
	s->running--;
	s->in_use -= t->share;
	s->use[t->pool].running--;
	s->use[t->pool].in_use -= t->share;
	s->use[t->pool].cpus -= cfg->steps ? s->pools[t->pool].step_cpus : 0;
	attempt_ended(s, t);
	start_more(s);
}

static void arm(struct supervisor *s, sd_event_source **src, uint64_t usec, sd_event_time_handler_t cb)
{
	int r = mg_event_arm_timer(s->event, src, usec, 1000, cb, s);

	if (r < 0)
		mg_log_errno(LOG_ERR, r, "arm timer: %m");
}

static int on_drain_timer(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct supervisor *s = userdata;
	const struct mg_supervisor_config *cfg = s->cfg;
	uint64_t now = mg_now_usec();
	uint64_t next = UINT64_MAX;

	for (size_t i = 0; i < cfg->ntasks; i++) {
		struct mg_task *t = &cfg->tasks[i];
		if (t->state != MG_TASK_DRAINING)
			continue;
		/* A step's end record comes with the end of its stderr
		 * (on_step_stderr); only its deadline is looked at here. */
		if (step_of(s, t)) {
			if (now >= t->drain_deadline_usec)
				finish(s, t);
			else if (t->drain_deadline_usec - now < next)
				next = t->drain_deadline_usec - now;
			continue;
		}
		_cleanup_close_ int cgfd = open_task_cgroup(s, t);
		if (cgfd < 0 || mg_cg_populated(cgfd) == 0 || now >= t->drain_deadline_usec)
			finish(s, t);
		else
			next = DRAIN_POLL_USEC;
	}
	if (next != UINT64_MAX)
		arm(s, &s->drain_timer, next, on_drain_timer);
	return 0;
}

static void note_as_peak(struct mg_task *t, uint64_t bytes)
{
	if (!t->as_peak_known || bytes > t->as_peak)
		t->as_peak = bytes;
	t->as_peak_known = true;
}

static void task_exited(struct supervisor *s, struct mg_task *t, int status)
{
	struct step_run *run = step_of(s, t);

	t->exited = true;
	t->wait_status = status;
	t->end_usec = mg_now_usec();
	/* srun is gone; the helper killed what the task left, and its end
	 * record is the last of the step's stderr. */
	if (run) {
		run->exited = true;
		run->srun_status = status;
		if (run->eof) {
			finish(s, t);
			return;
		}
		t->state = MG_TASK_DRAINING;
		t->drain_deadline_usec = t->end_usec + DRAIN_TIMEOUT_USEC;
		arm(s, &s->drain_timer, 0, on_drain_timer);
		return;
	}
	/* The task is over when its main process is: leftovers would escape
	 * accounting once the cgroup is gone, so they die too. */
	kill_task(s, t);
	if (!t->in_cgroup) {
		finish(s, t);
		return;
	}
	t->state = MG_TASK_DRAINING;
	t->drain_deadline_usec = t->end_usec + DRAIN_TIMEOUT_USEC;
	arm(s, &s->drain_timer, 0, on_drain_timer);
}

static int on_sigchld(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata)
{
	struct supervisor *s = userdata;
	struct rusage ru;
	int status;
	pid_t pid;

	/* As a subreaper we also reap the tasks' orphans; they match no task. */
	while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0) {
		if (pid == s->watcher.pid) {
			/* Reaped: its pid may be a task's process next. */
			s->watcher.pid = -1;
			log_warn("the watcher ended early; if memguard is SIGKILLed, the tasks' children "
			         "live on");
			continue;
		}
		for (size_t i = 0; i < s->cfg->ntasks; i++) {
			struct mg_task *t = &s->cfg->tasks[i];
			if (t->pid == pid && t->state == MG_TASK_RUNNING) {
				/* Resident memory is address space too: its peak, and
				 * the part of the address space that was never resident
				 * beside it, give the address space reached at the end,
				 * which sampling VmPeak misses when the task grows fast
				 * (the same task was near_limit in 1 run of 3). */
				if (t->rlimit_as && ru.ru_maxrss > 0)
					note_as_peak(t, (uint64_t)ru.ru_maxrss * 1024 +
					                        (t->as_gap_known ? t->as_gap : 0));
				task_exited(s, t, status);
				break;
			}
		}
	}
	return 0;
}

static int on_grace_timer(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct supervisor *s = userdata;

	for (size_t i = 0; i < s->cfg->ntasks; i++) {
		struct mg_task *t = &s->cfg->tasks[i];
		if (t->state == MG_TASK_RUNNING) {
			t->killed_by = MG_KILL_GRACE;
			kill_task(s, t);
		}
	}
	return 0;
}

/* The status line on stderr: redrawn in place on a terminal under
 * --progress, else a line of its own. */
static void show_status(struct supervisor *s, bool redraw)
{
	char line[256];

	s->counts.total = s->cfg->ntasks;
	s->counts.running = s->running;
	s->counts.in_use = s->in_use;
	s->counts.budget = 0;
	for (size_t p = 0; p < s->npools; p++)
		s->counts.budget += s->pools[p].budget;
	s->counts.elapsed_usec = mg_now_usec() - s->start_usec;
	mg_farm_status_format(&s->counts, line, sizeof(line));
	if (redraw) {
		fprintf(stderr, "\rmemguard: %s\033[K", line);
		s->status_shown = true;
	} else {
		fprintf(stderr, "%smemguard: %s\n", s->status_shown ? "\r\033[K" : "", line);
		s->status_shown = false;
	}
	fflush(stderr);
}

static int on_progress_timer(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct supervisor *s = userdata;

	arm(s, &s->progress_timer, s->cfg->farm->progress_usec, on_progress_timer);
	show_status(s, s->cfg->farm->progress_tty);
	return 0;
}

/* A signal memguard got, to every running task. */
static void forward(struct supervisor *s, int sig)
{
	for (size_t i = 0; i < s->cfg->ntasks; i++) {
		struct mg_task *t = &s->cfg->tasks[i];
		int e = t->state == MG_TASK_RUNNING ? signal_task(s, t, sig) : 0;
		if (e < 0)
			mg_log_errno(LOG_WARNING, e, "forward SIG%s to task %u: %m", sigabbrev_np(sig),
			             t->index + 1);
	}
}

static int on_job_control(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata)
{
	struct supervisor *s = userdata;
	int sig = (int)si->ssi_signo;

	forward(s, sig);
	if (sig == SIGTSTP)
		raise(SIGSTOP);
	return 0;
}

static int on_status_signal(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata)
{
	show_status(userdata, false);
	return 0;
}

static int on_signal(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata)
{
	struct supervisor *s = userdata;
	int sig = (int)si->ssi_signo;

	forward(s, sig);
	if (!terminating(sig))
		return 0;
	/* What fails from here on failed because we stopped it: the joblog
	 * says interrupted, and --resume-failed runs it again. */
	for (size_t i = 0; i < s->cfg->ntasks; i++)
		if (s->cfg->tasks[i].state == MG_TASK_RUNNING)
			s->cfg->tasks[i].interrupted = true;
	if (s->signalled) {
		log_notice("second SIG%s: killing the tasks now", sigabbrev_np(sig));
		for (size_t i = 0; i < s->cfg->ntasks; i++) {
			struct mg_task *t = &s->cfg->tasks[i];
			if (t->state == MG_TASK_RUNNING) {
				t->killed_by = MG_KILL_SIGNAL;
				t->kill_signal = sig;
				kill_task(s, t);
			}
		}
		return 0;
	}
	/* A --halt may have stopped the starts already: the signal still
	 * gets its grace period and sets the exit status. */
	s->stopping = s->signalled = true;
	s->signal_name = sigdescr_np(sig);
	char grace[32];
	snprintf(grace, sizeof(grace), "%.1fs", (double)s->cfg->grace_usec / 1e6);
	log_notice("received SIG%s: forwarded to the tasks; killing what still runs in %s", sigabbrev_np(sig),
	           grace);
	arm(s, &s->grace_timer, s->cfg->grace_usec, on_grace_timer);
	start_more(s); /* exits the loop at once when nothing runs */
	return 0;
}

/* Before 5.19 the kernel keeps no memory.peak: each running task's
 * memory.current, sampled, gives the largest seen instead. */
static int on_peak_timer(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct supervisor *s = userdata;

	arm(s, &s->peak_timer, s->cfg->watchdog_interval_usec, on_peak_timer);
	for (size_t i = 0; i < s->cfg->ntasks; i++) {
		struct mg_task *t = &s->cfg->tasks[i];
		uint64_t current;
		if (t->state != MG_TASK_RUNNING || !t->in_cgroup)
			continue;
		_cleanup_close_ int cgfd = open_task_cgroup(s, t);
		if (cgfd >= 0 && mg_cg_read_u64(cgfd, "memory.current", &current) == 0)
			note_sampled_peak(t, current);
	}
	return 0;
}

/* Under RLIMIT_AS: the address space each running task's main process has
 * reached (VmPeak, a high-water mark), for the verdict on a task that fails
 * near it. It must be read while the process runs: a zombie has no mm. */
static void sample_as_peaks(const struct supervisor *s)
{
	for (size_t i = 0; s->cfg->rlimit_as && i < s->cfg->ntasks; i++) {
		struct mg_task *t = &s->cfg->tasks[i];
		uint64_t vmpeak, gap;

		/* Unreaped, so the pid is still this task's. */
		if (t->state != MG_TASK_RUNNING || mg_proc_read_as(s->cfg->procfd, t->pid, &vmpeak, &gap) < 0)
			continue;
		note_as_peak(t, vmpeak);
		if (!t->as_gap_known || gap < t->as_gap)
			t->as_gap = gap;
		t->as_gap_known = true;
	}
}

static int on_as_timer(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct supervisor *s = userdata;

	arm(s, &s->as_timer, s->cfg->watchdog_interval_usec / AS_SAMPLES_PER_WATCHDOG, on_as_timer);
	sample_as_peaks(s);
	return 0;
}

/* Degraded mode: no cgroup bounds the tasks, so sum the RSS of every process
 * of each task (its tree, and what left it: scan_tasks) and kill a task past
 * its share. */
static int on_watchdog(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct supervisor *s = userdata;
	const struct mg_supervisor_config *cfg = s->cfg;
	_cleanup_free_ struct mg_proc *procs = NULL;
	_cleanup_free_ long *task = NULL;
	_cleanup_free_ uint64_t *pages = calloc(cfg->ntasks, sizeof(uint64_t));
	int n;

	arm(s, &s->watchdog_timer, cfg->watchdog_interval_usec, on_watchdog);
	if (!pages)
		return 0;
	n = scan_tasks(s, &procs, &task);
	if (n < 0) {
		mg_log_errno(LOG_WARNING, n, "RSS watchdog: scan processes: %m");
		return 0;
	}
	for (int k = 0; k < n; k++)
		if (task[k] >= 0)
			pages[task[k]] += procs[k].rss_pages;
	for (size_t i = 0; i < cfg->ntasks; i++) {
		struct mg_task *t = &cfg->tasks[i];
		uint64_t rss = pages[i] * s->page_size;
		if (t->state != MG_TASK_RUNNING)
			continue;
		note_sampled_peak(t, rss);
		if (rss <= t->share || t->killed_by == MG_KILL_WATCHDOG)
			continue;
		char a[MG_SIZE_STRLEN], b[MG_SIZE_STRLEN];
		log_warn("task %u: RSS %s exceeds its %s share: killing it", t->index + 1,
		         mg_size_format(rss, a), mg_size_format(t->share, b));
		t->killed_by = MG_KILL_WATCHDOG;
		kill(-t->pid, SIGKILL);
		/* Children that left the process group, or the tree, are the task's too. */
		for (int k = 0; k < n; k++)
			if (task[k] == (long)i)
				kill(procs[k].pid, SIGKILL);
	}
	return 0;
}

/* Nothing outlives the run: SIGKILLs whatever is still below us (tasks'
 * orphans re-parented to us, a subreaper) and reaps it, a few rounds for
 * what forks meanwhile. Returns how many were killed. */
static int kill_leftovers(const struct supervisor *s)
{
	int total = 0;

	for (int round = 0; round < 50; round++) {
		_cleanup_free_ struct mg_proc *procs = NULL;
		int n = mg_proc_scan(s->cfg->procfd, &procs), alive = 0;
		pid_t self[] = {s->self};

		if (n < 0)
			return n;
		for (int k = 0; k < n; k++) {
			if (procs[k].pid == s->self || procs[k].pid == s->watcher.pid ||
			    mg_proc_root_of(procs, (size_t)n, self, 1, procs[k].pid) != 0)
				continue;
			if (procs[k].state != 'Z' && kill(procs[k].pid, SIGKILL) == 0) {
				alive++;
				total++;
			}
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (alive == 0)
			break;
		nanosleep(&(struct timespec){.tv_nsec = 10 * 1000000L}, NULL);
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	return total;
}

/* Degraded mode: no cgroup outlives us to kill the tasks' other processes
 * as a unit, so a watcher does it, finding them by the run's token. Without
 * it the run goes on as before; say so. */
static void start_watcher(struct supervisor *s)
{
	uint64_t delay =
	        s->cfg->grace_usec < WATCHER_DELAY_MAX_USEC ? s->cfg->grace_usec : WATCHER_DELAY_MAX_USEC;
	int r = mg_watcher_token(s->cfg->procfd, s->self, s->run_token, sizeof(s->run_token));

	if (r >= 0)
		r = mg_watcher_start(s->cfg->procfd, s->run_token, delay, &s->watcher);
	if (r < 0)
		mg_log_errno(LOG_WARNING, r,
		             "start the watcher: %m; if memguard is SIGKILLed, the tasks' children live on");
}

int mg_supervise(const struct mg_supervisor_config *cfg, const char **ret_signal)
{
	struct supervisor s = {.cfg = cfg,
	                       .page_size = (uint64_t)sysconf(_SC_PAGESIZE),
	                       .self = getpid(),
	                       .watcher = {.pid = -1, .fd = -1}};
	sigset_t mask, old;
	struct sigaction pipe_was;
	int r;

	/* Where tasks run: the config's nodes, or one pool here. */
	s.here = (struct mg_node_pool){.parallel = cfg->parallel, .budget = cfg->budget, .share = cfg->share};
	s.pools = cfg->npools ? cfg->pools : &s.here;
	s.npools = cfg->npools ? cfg->npools : 1;
	s.use = calloc(s.npools, sizeof(*s.use));
	s.steps = cfg->steps ? calloc(cfg->ntasks ? cfg->ntasks : 1, sizeof(*s.steps)) : NULL;
	if (!s.use || (cfg->steps && !s.steps)) {
		free(s.use);
		free(s.steps);
		return mg_log_errno(LOG_ERR, -ENOMEM, "supervise %zu tasks: %m", cfg->ntasks);
	}
	/* A step's srun that is gone must not take us with it when we write to it. */
	sigaction(SIGPIPE, &(struct sigaction){.sa_handler = SIG_IGN}, &pipe_was);

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, STATUS_SIGNAL);
	for (size_t i = 0; i < MG_ARRAY_SIZE(job_control); i++)
		sigaddset(&mask, job_control[i]);
	for (size_t i = 0; i < MG_ARRAY_SIZE(forwarded); i++)
		sigaddset(&mask, forwarded[i]);
	sigprocmask(SIG_BLOCK, &mask, &old);
	s.child_mask = old;
	/* Orphans of a task re-parent to us, so process trees stay whole for the
	 * watchdog and nothing lingers unreaped. */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1);

	r = sd_event_new(&s.event);
	if (r < 0)
		return mg_log_errno(LOG_ERR, r, "create event loop: %m");
	r = sd_event_add_signal(s.event, NULL, SIGCHLD, on_sigchld, &s);
	if (r >= 0)
		r = sd_event_add_signal(s.event, NULL, STATUS_SIGNAL, on_status_signal, &s);
	for (size_t i = 0; r >= 0 && i < MG_ARRAY_SIZE(forwarded); i++)
		r = sd_event_add_signal(s.event, NULL, forwarded[i], on_signal, &s);
	for (size_t i = 0; r >= 0 && i < MG_ARRAY_SIZE(job_control); i++)
		r = sd_event_add_signal(s.event, NULL, job_control[i], on_job_control, &s);
	if (r < 0) {
		sd_event_unref(s.event);
		free(s.use);
		free(s.steps);
		sigaction(SIGPIPE, &pipe_was, NULL);
		return mg_log_errno(LOG_ERR, r, "watch signals: %m");
	}
	mg_sweep_attach(sweep_of(cfg), s.event);
	for (size_t i = 0; i < cfg->ntasks; i++)
		cfg->tasks[i].cgfd = -1;
	/* Each step's helper samples and guards its task where it runs: here,
	 * only the degraded mode's watchdog and watcher, or the samples a
	 * cgroup of ours needs. */
	bool here = !cfg->steps;
	if (here && !cfg->placement && cfg->watchdog_interval_usec)
		arm(&s, &s.watchdog_timer, cfg->watchdog_interval_usec, on_watchdog);
	if (here && cfg->rlimit_as && cfg->watchdog_interval_usec)
		arm(&s, &s.as_timer, cfg->watchdog_interval_usec / AS_SAMPLES_PER_WATCHDOG, on_as_timer);
	if (here && !cfg->placement)
		start_watcher(&s);
	else if (here && cfg->watchdog_interval_usec &&
	         faccessat(cfg->placement->runfd, "memory.peak", F_OK, 0) < 0)
		arm(&s, &s.peak_timer, cfg->watchdog_interval_usec, on_peak_timer);
	s.start_usec = mg_now_usec();
	/* Resumed retries wait for room as this run's own do. */
	for (size_t i = 0; i < cfg->ntasks; i++) {
		struct mg_task *t = &cfg->tasks[i];
		if (!t->attempt)
			t->attempt = t->first_attempt = 1;
		if (is_retry(t) && t->state == MG_TASK_PENDING) {
			size_t *bigger = realloc(s.retry, (s.nretry + 1) * sizeof(*s.retry));
			if (!bigger) {
				r = -ENOMEM;
				break;
			}
			s.retry = bigger;
			s.retry[s.nretry++] = i;
		}
	}
	if (cfg->farm && cfg->farm->progress_usec)
		arm(&s, &s.progress_timer, cfg->farm->progress_usec, on_progress_timer);

	if (r >= 0)
		start_more(&s);
	if (r >= 0 && (s.done < cfg->ntasks || s.running > 0))
		r = sd_event_loop(s.event);
	if (cfg->farm && cfg->farm->progress_usec)
		show_status(&s, false);

	sd_event_source_unref(s.grace_timer);
	sd_event_source_unref(s.drain_timer);
	sd_event_source_unref(s.watchdog_timer);
	sd_event_source_unref(s.as_timer);
	sd_event_source_unref(s.peak_timer);
	sd_event_source_unref(s.progress_timer);
	mg_sweep_attach(sweep_of(cfg), NULL);
	sd_event_source_unref(s.step_kill_timer);
	/* Only after a failed loop: steps still running. Their sruns die below. */
	for (size_t i = 0; s.steps && i < cfg->ntasks; i++)
		if (s.steps[i])
			step_done(&s, &cfg->tasks[i]);
	sd_event_unref(s.event);
	int left = kill_leftovers(&s);
	if (left > 0)
		log_notice("killed %d process%s the tasks left behind", left, left == 1 ? "" : "es");
	else if (left < 0)
		mg_log_errno(LOG_WARNING, left, "kill what the tasks left behind: scan processes: %m");
	/* Only now: had we died while killing the leftovers, it would have. */
	mg_watcher_stop(&s.watcher);
	free(s.seen);
	free(s.retry);
	free(s.use);
	free(s.steps);
	sigaction(SIGPIPE, &pipe_was, NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (ret_signal)
		*ret_signal = s.signal_name;
	return r < 0 ? mg_log_errno(LOG_ERR, r, "event loop: %m") : 0;
}
