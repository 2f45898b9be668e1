/* One task of a run and what became of it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "memguard/cgroup.h"

enum mg_task_state { MG_TASK_PENDING, MG_TASK_RUNNING, MG_TASK_DRAINING, MG_TASK_DONE };

/* Who ended a task, when it did not end by itself. */
enum mg_kill_cause {
	MG_KILL_NONE,
	MG_KILL_KERNEL_OOM, /* the kernel's OOM killer, inside the task's cgroup */
	MG_KILL_GRACE,      /* memguard, after a forwarded signal and the grace period */
	MG_KILL_SIGNAL,     /* memguard, at once on a second terminating signal (kill_signal) */
	MG_KILL_WATCHDOG,   /* memguard's RSS watchdog (degraded mode) */
	MG_KILL_DAEMON,     /* memguardd, under node memory pressure */
};

struct mg_task {
	unsigned index;
	const char *param; /* the task-file line, or NULL */
	enum mg_task_state state;
	pid_t pid;
	int cgfd;        /* open only while the task starts; -1 otherwise */
	bool in_cgroup;  /* it has a cgroup of its own, task-<index> in the run's */
	int wait_status; /* as from waitpid(), valid when exited */
	bool exited;
	int exec_errno;  /* nonzero when the command could not run */
	int spawn_errno; /* nonzero when no process could be created */
	enum mg_kill_cause killed_by;
	int kill_signal; /* MG_KILL_SIGNAL: the second signal */
	uint64_t share;
	uint64_t limit; /* its memory.max: the share (strict) or the budget (elastic); 0 without a cgroup */
	uint64_t peak;  /* memory.peak, or the largest memory.current or RSS sampled */
	bool peak_known;
	bool peak_sampled; /* peak is the largest sample (no memory.peak before 5.19, or degraded) */
	struct mg_memory_events events;
	uint64_t start_usec, end_usec;
	uint64_t start_wall_usec; /* when it started, since the epoch: the joblog's Starttime */
	unsigned attempt;         /* 1, 2, ...: a retry (--retries) or a resumed task goes on counting */
	unsigned first_attempt;   /* this run's first: retries are counted from it */
	bool interrupted;         /* memguard forwarded a terminating signal to it while it ran */
	bool elsewhere;           /* another node's memguard claimed it first (farm/nodes.h) */
	bool claimed;             /* this node has claimed it: its retries need no claim */
	unsigned pool;            /* the node it runs on (mg_node_pool); 0 but with steps on several */
	const char *host;         /* that node's name for the joblog; NULL: this one's */
	char step[48];            /* the Slurm step it ran as (JOBID.STEPID), or "" */
	uint64_t drain_deadline_usec;
	char daemon_reason[256]; /* memguardd's words, when it killed the task */
	uint64_t rlimit_as;      /* its RLIMIT_AS; 0: none */
	/* At least this much address space was reached under that limit: the
	 * largest VmPeak sampled while the main process ran, or its ru_maxrss at
	 * exit (resident memory is address space too). A lower bound: sampling
	 * can miss the peak. */
	uint64_t as_peak;
	bool as_peak_known;
	/* The smallest part of that address space sampled that was not
	 * resident (VmSize - VmRSS): at exit, ru_maxrss plus it is the address
	 * space the process reached, where the last sample can be long before. */
	uint64_t as_gap;
	bool as_gap_known;
};

/* The exit status a task contributes: 0 on success, its exit code, 128+signal,
 * 126/127 when it could not be executed, 125 when memguard could not start it. */
int mg_task_exit_status(const struct mg_task *t);

/* A one-line reason in words, e.g. "killed by the kernel: 2.3GiB share
 * exceeded". Writes into buf and returns it. */
const char *mg_task_reason(const struct mg_task *t, char *buf, size_t size);
