/* How much memory the launcher may hand out, and each task's share.
 * Pure functions of snapshots (meminfo, cgroup limits, environment), so that
 * every number can be explained and unit tested. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memguard/config.h"
#include "memguard/meminfo.h"
#include "run/placement.h"

/* A number and where it came from, for --explain. */
struct mg_sourced {
	uint64_t value; /* MG_SIZE_UNLIMITED, or 0 for a count, when unset */
	char where[160];
};

struct mg_budget_input {
	struct mg_meminfo mem;
	struct mg_sourced cgroup_limit; /* smallest memory.max of our cgroup and its ancestors */
	struct mg_sourced batch_grant;  /* the batch system's grant for this node */
	uint64_t mem_option;            /* --mem, or MG_SIZE_UNLIMITED */
	const char *reserve;            /* size or percent of MemTotal */
	bool reserve_shmem;
	unsigned ntasks;
	uint64_t mem_per_task; /* --mem-per-task, or 0 to split evenly */
	uint64_t min_share;
};

struct mg_budget {
	uint64_t limit; /* smallest of MemTotal, cgroup, grant, --mem */
	const char *limit_from;
	uint64_t reserve;   /* resolved reserve */
	uint64_t shmem;     /* Shmem kept back, 0 unless reserve_shmem */
	uint64_t available; /* MemAvailable at start less the reserve */
	uint64_t room;      /* what the node can give: the smaller of the two bounds */
	const char *room_from;
	uint64_t usable; /* smaller of limit and room: what the tasks may use together */
	uint64_t share;  /* per task, page aligned */
};

/* Computes the budget: the node's room is the smaller of MemTotal - reserve
 * - Shmem and MemAvailable - reserve; usable is the smaller of that and the
 * limit. On error returns -EINVAL/-ERANGE and a one-line reason in err (a
 * share below the minimum, --mem-per-task × N above the usable memory, a
 * reserve that leaves nothing). */
int mg_budget_compute(const struct mg_budget_input *in, struct mg_budget *ret, char *err, size_t errsize);

/* The batch system's memory grant on this node from the environment:
 * SLURM_MEM_PER_NODE (MiB), or SLURM_MEM_PER_CPU × SLURM_CPUS_ON_NODE.
 * ret->value is MG_SIZE_UNLIMITED when none is set. */
void mg_batch_grant_from_env(char *const envp[], struct mg_sourced *ret);

/* The default number of tasks: the batch system's tasks per node
 * (PBS_NUM_PPN, NCPUS for PBS Pro, SLURM_NTASKS_PER_NODE, the first count of
 * SLURM_TASKS_PER_NODE, SLURM_CPUS_ON_NODE), else ncpus (CPUs we may run on). */
void mg_default_ntasks(char *const envp[], unsigned ncpus, struct mg_sourced *ret);

/* getenv over an explicit environment. */
const char *mg_env_get(char *const envp[], const char *name);

/* What the limits are decided from: the share mode asked for, what runs on
 * the node, and the budget. */
struct mg_limits_input {
	enum mg_share_mode mode; /* auto, strict or elastic (--strict/--elastic, else [launcher] mode) */
	bool daemon;             /* memguardd runs on this node */
	bool cgroups;            /* every task gets a cgroup; false: degraded mode */
	uint64_t share;          /* mg_budget.share */
	uint64_t usable;         /* mg_budget.usable */
	unsigned high_percent;   /* memory.high as a percentage of the share; 0: not set */
	enum mg_rlimit_as_mode rlimit_as;
	bool runtime_wants_rlimit_as; /* mg_runtime_wants_rlimit_as() of the detected runtime */
	uint64_t swap_max;
	bool oom_group;
};

/* The limits of one run. */
struct mg_limits {
	enum mg_share_mode mode; /* what the tasks get: strict or elastic, never auto; degraded is strict */
	bool run_capped;         /* the run's cgroup gets memory.max = run_max */
	uint64_t run_max;        /* the usable memory when capped, else MG_SIZE_UNLIMITED */
	uint64_t run_swap_max;
	struct mg_task_limits task; /* each task's cgroup: memory.max, memory.high, ... */
	uint64_t rlimit_as;         /* each task's RLIMIT_AS, 0: not set */
};

/* Decides how the share becomes limits. Auto means elastic when memguardd
 * runs, else strict. Strict: memory.max = the share, memory.high = its
 * high_percent. Elastic (only with cgroups): memory.max = the usable memory
 * and no memory.high. RLIMIT_AS (on, or auto and the runtime wants it) is
 * the task's memory.max. The run's cgroup is capped at the usable memory
 * whenever there are cgroups, unless memguardd guards elastic tasks. */
void mg_limits_compute(const struct mg_limits_input *in, struct mg_limits *ret);
