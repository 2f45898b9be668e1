/* Runs the tasks of one launch and supervises them until every one is done:
 * starts at most `parallel` at once, forwards signals, kills after a grace
 * period, reaps, and reads each cgroup's verdict before removing it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "placement.h"
#include "runtime.h"
#include "task.h"

struct mg_supervisor_config {
	char *const *command; /* the template; {} becomes a task's param */
	struct mg_task *tasks;
	size_t ntasks;
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
};

/* Runs everything. Returns 0, or -errno when the event loop itself failed.
 * ret_signal (may be NULL) gets the name of a terminating signal received. */
int mg_supervise(const struct mg_supervisor_config *cfg, const char **ret_signal);
