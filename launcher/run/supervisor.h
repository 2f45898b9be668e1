/* Runs the tasks of one launch and supervises them until every one is done:
 * starts at most `parallel` at once, forwards signals, kills after a grace
 * period, reaps, and reads each cgroup's verdict before removing it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run/budget.h"
#include "farm/farm.h"
#include "run/placement.h"
#include "runtime/runtime.h"
#include "task.h"

/* One node's room for tasks: here, or a node of a Slurm allocation when
 * every task is a step (steps.h). */
struct mg_node_pool {
	const char *name;   /* the node, for srun and the joblog's Host; NULL: here */
	unsigned parallel;  /* tasks at once there (-n) */
	unsigned cpus;      /* the job's CPUs there, which steps take; 0: not counted */
	uint64_t budget;    /* what its tasks may use together; 0: -n alone */
	uint64_t share;     /* a first attempt's share there */
	unsigned step_cpus; /* a step's CPUs there */
};

/* The steps backend: how each attempt becomes `srun ... memguard step`. */
struct mg_steps_config {
	const char *self;  /* memguard's own path, the same on every node */
	const char *nonce; /* marks the helper's records in the step's stderr */
};

struct mg_supervisor_config {
	char *const *command; /* the template; {} becomes a task's param */
	struct mg_task *tasks;
	size_t ntasks;
	size_t list_size; /* tasks in the whole list (MEMGUARD_NTASKS); 0: ntasks. More after a resume */
	unsigned parallel;
	uint64_t share;
	uint64_t rlimit_as; /* 0: none */
	struct mg_task_limits limits;
	const struct mg_env_setting *heap_env;
	size_t nheap_env;
	struct mg_placement *placement; /* NULL: degraded mode */
	int procfd;                     /* for the RSS watchdog */
	uint64_t grace_usec;
	uint64_t watchdog_interval_usec;
	const struct rlimit *nofile; /* the fd limit tasks start with, or NULL */
	/* The farm. Each task comes with its share (the run's, or a resumed
	 * retry's), attempt and first_attempt set. */
	uint64_t budget;  /* admission: the shares running never pass it; 0: -n alone */
	unsigned retries; /* --retries */
	const struct mg_limits_input *limits_in; /* sizes a share other than the run's */
	enum mg_runtime runtime;                 /* heap flags for such a share */
	bool heap_flags;
	struct mg_farm *farm; /* joblog, results, progress; NULL: none */
	/* Where tasks run: one pool per node. None: one pool here, of
	 * parallel, budget and share. */
	const struct mg_node_pool *pools;
	size_t npools;
	const struct mg_steps_config *steps; /* every attempt a Slurm step; NULL: started here */
};

/* Runs everything. A task that fails for memory is run again with a larger
 * share (farm/schedule.h) while it has retries left; every attempt that
 * ends goes to the joblog. SIGALRM prints a status line at once. Returns 0, or -errno when the event loop
 * itself failed. ret_signal (may be NULL) gets the name of a terminating signal received. */
int mg_supervise(const struct mg_supervisor_config *cfg, const char **ret_signal);

/* The command of a task: "{}" in each word of command becomes param. A heap
 * array, NULL-terminated, freed with mg_free_argv; NULL when out of memory. */
char **mg_expand_command(char *const *command, const char *param);
void mg_free_argv(char **argv);
