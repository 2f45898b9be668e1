/* Command line of the launcher. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "farm/halt.h"
#include "memguard/config.h"
#include "runtime/runtime.h"

/* Exit statuses of memguard itself (docs/launcher.md). */
enum {
	MG_EXIT_OK = 0,
	MG_EXIT_USAGE = 125,    /* memguard's own error: bad input, no cgroups with --require-cgroups */
	MG_EXIT_NOEXEC = 126,   /* the command was found but could not be executed */
	MG_EXIT_NOTFOUND = 127, /* the command was not found */
};

#define MG_GRACE_UNSET UINT64_MAX

/* Retries of a task that fails for memory, with --tasks and no --retries:
 * two doublings of its share at least, so a task that needed up to four
 * times its share finishes, and one that grows without end costs three
 * attempts. N copies of one command (-n without --tasks) are peers, a
 * worker pool say, and get none by default. */
#define MG_RETRIES_DEFAULT 2
#define MG_RETRIES_MAX 100

/* Where the tasks' cgroups come from (--backend). */
enum mg_backend {
	MG_BACKEND_AUTO,     /* local, else placed, else steps under Slurm, else degraded */
	MG_BACKEND_LOCAL,    /* memguard's own: as root, or in a delegated subtree */
	MG_BACKEND_PLACED,   /* memguardd's placement service */
	MG_BACKEND_STEPS,    /* each task a Slurm job step (run/steps.h) */
	MG_BACKEND_DEGRADED, /* none: RLIMIT_AS, heap flags, an RSS watchdog */
};

/* The backend's name as --backend takes it, and back. */
const char *mg_backend_name(enum mg_backend b);
int mg_backend_from_name(const char *name, enum mg_backend *ret);
/* -a FILE may come this many times. */
#define MG_ARG_FILES_MAX 16

/* How the tasks' output reaches memguard's, with GNU parallel's inputs
 * (farm/output.h): grouped per task (parallel's default), --line-buffer,
 * --ungroup. */
enum mg_output_option { MG_OUT_GROUP, MG_OUT_LINE_BUFFER, MG_OUT_UNGROUP };

struct mg_options {
	unsigned ntasks;        /* 0: the default (batch system or CPUs) */
	const char *tasks_file; /* --tasks FILE */
	uint64_t mem_per_task;  /* 0: split evenly */
	uint64_t mem;           /* --mem, MG_SIZE_UNLIMITED when unset */
	const char *reserve;    /* --reserve, NULL: from config */
	bool runtime_forced;
	enum mg_runtime runtime; /* --runtime */
	int heap_flags;          /* -1: config, 0 off, 1 on */
	int rlimit_as;           /* -1: config, else enum mg_rlimit_as_mode */
	int memory_high;         /* -1: config, else percent */
	int mode;                /* -1: config, else enum mg_share_mode */
	bool require_cgroups;
	bool no_cgroups;         /* --no-cgroups: force degraded mode (testing, debugging) */
	enum mg_backend backend; /* --backend; --no-cgroups is degraded */
	unsigned step_cpus;      /* --step-cpus: each step's CPUs; 0: the job's (run/steps.h) */
	bool share_job; /* --share-job: the job's own processes are not held to what the run leaves */
	bool explain;
	bool dry_run;
	bool quiet;
	int verbose;
	const char *report_path;   /* --report FILE.json */
	const char *metrics_path;  /* --metrics FILE.prom */
	const char *config_path;   /* --config FILE */
	const char *cgroup_parent; /* --cgroup-parent PATH, relative to the cgroup mount */
	uint64_t grace_usec;       /* --grace, MG_GRACE_UNSET: from config */
	const char *joblog_path;   /* --joblog FILE */
	int resume;                /* 0, or enum mg_resume_mode: --resume, --resume-failed */
	int retries;             /* --retries N, -1: the default (MG_RETRIES_DEFAULT with --tasks, else 0) */
	const char *results_dir; /* --results DIR */
	bool progress;           /* --progress[=INTERVAL] */
	uint64_t progress_usec;  /* its INTERVAL, 0: the default (1 s on a terminal, else 60 s) */
	char **command;          /* NULL-terminated, points into argv; empty with parallel's inputs alone */
	/* GNU parallel's command line (docs/sweeps.md, "From GNU parallel"). */
	bool parallel;   /* its inputs: :::, ::::, -a, or stdin for a command with {} */
	bool stdin_only; /* ... stdin alone, only for the {} in the command: no source or option of parallel's
	                  */
	bool short_q;    /* -q was given as -q: with stdin_only, main decides whether that is ambiguous */
	const char *jobs;    /* -j/--jobs N, N%, +N or -N, checked; NULL: -n or the default */
	bool keep_order;     /* -k */
	int output;          /* enum mg_output_option */
	bool tag;            /* --tag */
	struct mg_halt halt; /* --halt */
	const char *colsep;  /* --colsep REGEXP */
	bool quote;          /* --quote */
	const char *arg_files[MG_ARG_FILES_MAX]; /* -a FILE, in order */
	size_t narg_files;
	const char *input_sep; /* the first :::, ::::, :::+ or ::::+ after the command, or NULL */
	char **input_words;    /* what follows it, NULL-terminated */
};

enum mg_parse_result { MG_PARSE_RUN, MG_PARSE_EXIT_OK };

/* Parses argv. Returns MG_PARSE_RUN, MG_PARSE_EXIT_OK after --help or
 * --version (text written to out), or -EINVAL with a one-line reason in err.
 * The first input separator after the command (:::, ...) is overwritten
 * with NULL in argv: it ends the command (input_sep keeps it). */
int mg_options_parse(int argc, char **argv, struct mg_options *ret, char *err, size_t errsize, void *out);

void mg_options_usage(void *out);

/* Tasks at once for -j SPEC (N, N%, +N, -N: parallel's forms, rounded up,
 * at least 1) on cpus CPUs. Pure. 0 when spec is not one of them, or is 0
 * (parallel's "as many as possible", which has no share to give). */
unsigned mg_jobs_resolve(const char *spec, unsigned cpus);
