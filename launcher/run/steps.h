/* Each task a Slurm job step. From a Slurm batch script (inside an
 * allocation, outside any step), memguard starts every attempt as
 *   srun --exact -N1 -n1 -c CPUS --mem=SHARE -w NODE -J task-SEQ memguard step ... -- COMMAND
 * so that Slurm gives it a cgroup with its share as memory.max
 * (job_<id>/step_<n>/user), accounts it (sstat, sacct) and OOM-kills it
 * alone. `memguard step` (stepcmd.c) runs the command inside the step and
 * writes two records on stderr, which the launcher takes out of the stream:
 * where the step runs and under which limit, then the task's numbers.
 * The launcher talks to it through srun's stdin: a signal to pass on, or
 * the kill; srun itself turns SIGTERM into SIGKILL, so it gets none.
 * Everything here is pure but mg_steps_spawn. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "memguard/cgroup.h"
#include "run/supervisor.h"
#include "runtime/runtime.h"

/* What one running step costs the job beside its share: the srun client and
 * its shepherd in the batch step (6 MiB of step_batch/user's memory.current
 * per srun, measured under Slurm 22.05) and the step's slurmstepd in
 * step_<n>/slurm (0.4 MiB), rounded up. The job's memory.max holds them all. */
#define MG_STEP_OVERHEAD (8ull << 20)

/* srun's --mem takes whole MiB: a step's share is a multiple of this. */
#define MG_STEP_UNIT (1ull << 20)

/* The subcommand the step runs: memguard step [OPTIONS] -- COMMAND. */
#define MG_STEP_SUBCOMMAND "step"

/* One node of the allocation. */
struct mg_step_node {
	char name[64];
	unsigned cpus; /* the job's CPUs there */
	uint64_t mem;  /* the job's memory there, MG_SIZE_UNLIMITED: the whole node (--mem=0) */
};

struct mg_steps_alloc {
	char job_id[32];
	struct mg_step_node *nodes;
	size_t nnodes;
	size_t self; /* the node memguard runs on (the batch host); SIZE_MAX: none of them */
};

/* Whether steps can be made from here: in a Slurm allocation (SLURM_JOB_ID)
 * but in no step of it (SLURM_STEP_ID): an srun inside a step would wait
 * for the resources the step itself holds. Pure. 1, or 0 with the reason in
 * why. */
int mg_steps_available(char *const envp[], char *why, size_t whysize);

/* The allocation, from the batch script's environment: SLURM_JOB_ID,
 * SLURM_JOB_NODELIST (expanded), SLURM_JOB_CPUS_PER_NODE, SLURM_MEM_PER_NODE
 * or SLURM_MEM_PER_CPU × the node's CPUs, SLURMD_NODENAME for our own node.
 * Pure. 0, or -EINVAL with a one-line reason in err. */
int mg_steps_alloc_from_env(char *const envp[], struct mg_steps_alloc *ret, char *err, size_t errsize);
void mg_steps_alloc_done(struct mg_steps_alloc *a);

/* Slurm's host list, "node[01-03,7],gpu1" or "rack[1-2]-n[1-2]", expanded
 * in Slurm's order. Pure. The count, with a heap array of heap strings in
 * *ret (mg_steps_names_free), or -EINVAL (not a host list), -E2BIG (more
 * than 65,536 names), -ENOMEM. */
int mg_hostlist_expand(const char *expr, char ***ret);
void mg_steps_names_free(char **names);

/* Slurm's per-node count list, "2(x3),1", into n values: 0, or -EINVAL
 * when it does not hold exactly n. Pure. */
int mg_countlist_expand(const char *expr, unsigned *ret, size_t n);

/* What one node may hand out to its steps: usable less what the batch step
 * holds there (held: memguard and the job script, on our own node only) and
 * MG_STEP_OVERHEAD per step at once, in whole MiB. 0 when nothing is left.
 * Pure. */
uint64_t mg_steps_node_budget(uint64_t usable, uint64_t held, unsigned parallel);

/* What each node's steps get. */
struct mg_steps_plan_input {
	const struct mg_steps_alloc *alloc;
	bool everywhere;       /* a task list: every node of the job; else memguard's own (or the first) */
	unsigned parallel;     /* -n: steps at once per node */
	uint64_t usable_here;  /* the budget on memguard's node (mg_budget_compute's usable) */
	uint64_t held_here;    /* what the batch step holds there: the job script and memguard */
	uint64_t mem_option;   /* --mem, MG_SIZE_UNLIMITED */
	uint64_t mem_per_task; /* --mem-per-task, 0: split evenly */
	uint64_t min_share;
	unsigned cpus_option; /* --step-cpus, 0: the node's CPUs split over -n */
};

/* One pool per node the steps go to: its name, CPUs, budget and share.
 * memguard's node gives usable_here less held_here and MG_STEP_OVERHEAD for
 * every step at once on any node (each one's srun client runs here);
 * another node, whose MemAvailable is not known here, its grant (else
 * usable_here), capped by --mem, less MG_STEP_OVERHEAD per step there.
 * Shares are whole MiB. Each step has cpus_option CPUs, else the node's
 * CPUs split evenly over the -n steps at once there, at least one: a
 * `sbatch -c 8` job runs `-n 1` on 8 CPUs and `-n 3` two at a time on 2 of
 * them. Pure. Returns the number of pools written (at most
 * alloc->nnodes), or -ERANGE with the reason in err (a share below
 * min_share, --mem-per-task × -n above a node's budget). */
int mg_steps_plan(const struct mg_steps_plan_input *in, struct mg_node_pool *ret, char *err, size_t errsize);

/* A share as srun can give it: rounded down to whole MiB. */
static inline uint64_t mg_steps_share(uint64_t share)
{
	return share / MG_STEP_UNIT * MG_STEP_UNIT;
}

/* One attempt's srun command line. */
struct mg_step_request {
	const char *self;   /* memguard's own path, the same on every node */
	const char *node;   /* --nodelist */
	unsigned cpus;      /* --cpus-per-task */
	uint64_t share;     /* --mem, a multiple of MG_STEP_UNIT */
	unsigned seq;       /* --job-name=task-SEQ: sacct's name of every attempt of the task */
	const char *nonce;  /* marks the helper's records */
	uint64_t rlimit_as; /* 0: none; set by the helper, not on srun */
	uint64_t grace_usec;
	char *const *command;
};

/* srun [OPTIONS] self step [OPTIONS] -- command...: a heap array of heap
 * strings (mg_steps_names_free), or NULL when out of memory. Pure. */
char **mg_steps_srun_argv(const struct mg_step_request *req);

/* The helper's records. A record is one line on the step's stderr:
 * MG_STEP_MARK NONCE start|end key=value...\n; the nonce, random per run,
 * keeps a task's own output from passing for one. */
#define MG_STEP_MARK "\037memguard-step"
#define MG_STEP_NONCE_LEN 16

struct mg_step_record {
	bool started;
	char step[48];  /* JOBID.STEPID */
	char node[64];  /* where it ran */
	uint64_t limit; /* the step's memory.max, MG_SIZE_UNLIMITED: none */
	bool ended;
	int status;      /* the task's wait status */
	int exec_errno;  /* the command could not run */
	bool watchdog;   /* no limit on the step: the helper's RSS watchdog killed it */
	uint64_t peak;   /* memory.peak of the step, or the largest sample */
	bool peak_known; /* a peak was read */
	bool peak_sampled;
	uint64_t as_peak; /* the largest VmPeak or ru_maxrss, under RLIMIT_AS */
	bool as_peak_known;
	struct mg_memory_events events; /* of the step's cgroup */
	bool srun_oom; /* not the helper's: srun said "task 0: Out Of Memory" (mg_step_stream_feed) */
};

/* The line after the mark and nonce (start|end key=value...). Unknown keys
 * are skipped. Pure. 0, or -EINVAL. */
int mg_step_record_parse(const char *line, struct mg_step_record *rec);

/* The helper's two lines, newline-terminated. Pure. Returns buf. */
const char *mg_step_record_format_start(const char *nonce, const struct mg_step_record *rec, char *buf,
                                        size_t size);
const char *mg_step_record_format_end(const char *nonce, const struct mg_step_record *rec, char *buf,
                                      size_t size);

/* Takes the helper's records out of a step's stderr, passing everything
 * else on as it comes; only a line that may still become a record is held
 * back until its newline. */
struct mg_step_stream {
	char nonce[MG_STEP_NONCE_LEN + 1];
	char held[4096];
	size_t nheld;
	struct mg_step_record rec;
	bool bad;       /* a record with the nonce that did not parse */
	char line[128]; /* the start of the line being passed on, for srun's verdict */
	size_t nline;
};
typedef void (*mg_step_out_fn)(void *ctx, const char *data, size_t len);
void mg_step_stream_feed(struct mg_step_stream *st, const char *data, size_t len, mg_step_out_fn out,
                         void *ctx);
/* At the end of the stream: what is still held goes out. */
void mg_step_stream_finish(struct mg_step_stream *st, mg_step_out_fn out, void *ctx);

/* Applies an ended step's record to its task: the task's own wait status
 * (srun's says little), its peak, its events. A helper that never reported
 * leaves srun's status. srun's own "Out Of Memory" counts as an OOM kill
 * either way: Slurm's verdict and memguard's agree. Pure. */
struct mg_task;
void mg_step_apply(const struct mg_step_record *rec, int srun_status, struct mg_task *t);

/* The commands the launcher writes to the helper, through srun's stdin. */
#define MG_STEP_CMD_SIGNAL "signal"
#define MG_STEP_CMD_KILL "kill"

/* Starts srun for one attempt (mg_spawn; req's stdin_fd and stderr_fd are
 * replaced) with its stdin and stderr on pipes, whose other ends come back
 * non-blocking and close-on-exec. 0 with *ret_pid, or -errno. */
struct mg_spawn_request;
int mg_steps_spawn(const struct mg_spawn_request *req, pid_t *ret_pid, int *ret_stdin, int *ret_stderr,
                   int *ret_exec_errno);

/* A fresh nonce, MG_STEP_NONCE_LEN hex digits. 0, or -errno. */
int mg_steps_nonce(char out[MG_STEP_NONCE_LEN + 1]);
