/* Starting one task: inside its cgroup from the first instruction, with its
 * rlimit and environment, in a process group of its own. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtime/runtime.h"

struct mg_spawn_request {
	char *const *argv;
	int cgroup_fd;      /* -1: stay in our cgroup (degraded mode) */
	uint64_t rlimit_as; /* 0: leave RLIMIT_AS alone */
	const struct mg_env_setting *env;
	size_t nenv;
	const sigset_t *child_sigmask; /* the mask the command should start with */
	const struct rlimit *nofile;   /* RLIMIT_NOFILE to restore in the child, or NULL */
	/* The command's stdin, stdout and stderr: -1 keeps ours. --results
	 * gives files; a step's srun gets pipes. */
	int stdin_fd, stdout_fd, stderr_fd;
};

/* Starts the task. Returns 0 with ret_pid set, and ret_exec_errno set when
 * the command could not be executed (the child then exits 126 or 127 and is
 * reaped as usual). -errno when no process could be created. */
int mg_spawn(const struct mg_spawn_request *req, pid_t *ret_pid, int *ret_exec_errno);

/* Proves that a process can be started inside cgroup_fd: a child that exits
 * at once. Moving a process needs write access to cgroup.procs of the common
 * ancestor too, which a delegated subtree alone does not give. 0 or -errno. */
int mg_spawn_probe(int cgroup_fd);
