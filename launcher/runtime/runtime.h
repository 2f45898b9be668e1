/* Which language runtime a task runs, and the heap flags and rlimits that fit
 * its share. Detection (runtime.c) reads the command (and the file it names);
 * flag generation (heapflags.c) is a pure function of the runtime, the share
 * and the user's environment and arguments. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum mg_runtime {
	MG_RUNTIME_GENERIC, /* unknown, e.g. a shell: see mg_heap_settings; no RLIMIT_AS by default */
	MG_RUNTIME_CPYTHON,
	MG_RUNTIME_PYPY,
	MG_RUNTIME_JVM,
	MG_RUNTIME_GO,
	MG_RUNTIME_NODE,
	MG_RUNTIME_DOTNET,
	MG_RUNTIME_R,
	MG_RUNTIME__COUNT,
};

/* "generic", "cpython", "pypy", "jvm", "go", "node", "dotnet", "r". */
const char *mg_runtime_name(enum mg_runtime rt);
/* Accepts the names above plus aliases ("python", "java", "golang", "nodejs");
 * -EINVAL for anything else. */
int mg_runtime_from_name(const char *name, enum mg_runtime *ret);

/* The runtime a program's basename names (python3.11, pypy3, java, node20,
 * Rscript ...), or MG_RUNTIME_GENERIC for any other name. Pure. */
enum mg_runtime mg_runtime_from_program_name(const char *base);

/* Detects the runtime of argv (NULL-terminated): the program's basename
 * (python3.11, pypy3, java, node, Rscript, dotnet ...), through wrappers
 * (env [-S] [VAR=x ...], nice, ionice, time, stdbuf, taskset, numactl, chrt,
 * nohup, exec-style "--" handling), a "#!" line of the named script, and Go
 * build info in an ELF binary. path_env is the PATH to resolve bare names
 * with (may be NULL). Never fails: unknown is MG_RUNTIME_GENERIC. *ret_why
 * (if given) is set to a static phrase for --explain, e.g. "program name
 * pypy3", "#! line of ./sim.py", "Go build info in /usr/bin/foo". */
enum mg_runtime mg_runtime_detect(char *const argv[], const char *path_env, const char **ret_why);

/* Whether RLIMIT_AS helps this runtime by default (a runaway becomes a
 * MemoryError): true for CPython, PyPy and R; false for the JVM, Go, Node,
 * .NET (large PROT_NONE reservations) and unknown programs (CUDA). */
bool mg_runtime_wants_rlimit_as(enum mg_runtime rt);

/* One environment change: name=value, to set in the task's environment. */
struct mg_env_setting {
	char name[48]; /* CELERY_WORKER_MAX_MEMORY_PER_CHILD is 34 */
	char value[256];
};

/* At most this many settings come back (a generic task's five). */
#define MG_HEAP_SETTINGS_MAX 5
/* A task's heap environment in all: the settings, MALLOC_ARENA_MAX under
 * RLIMIT_AS and a worker pool's variable. */
#define MG_HEAP_ENV_MAX (MG_HEAP_SETTINGS_MAX + 2)

/* Computes the heap settings for a task of this runtime with memory share
 * share_bytes. envp is the environment the task would inherit and argv its
 * command: a setting the user made explicitly (PYPY_GC_MAX already set,
 * -Xmx in argv or JAVA_TOOL_OPTIONS, --max-old-space-size in argv or
 * NODE_OPTIONS, GOMEMLIMIT, DOTNET_GCHeapHardLimit, R_MAX_VSIZE ...) is never
 * overridden. Appending to a list-valued variable (JAVA_TOOL_OPTIONS,
 * NODE_OPTIONS) keeps what the user had there. The heap cap leaves headroom
 * per runtime, because a GC cap bounds the heap, not the whole RSS.
 * A generic task (a shell, a wrapper script, an unknown program) gets the
 * variables only their own runtime reads, each at its runtime's cap:
 * PYPY_GC_MAX, GOMEMLIMIT, NODE_OPTIONS, DOTNET_GCHeapHardLimit and
 * R_MAX_VSIZE; never MALLOC_ARENA_MAX or JAVA_TOOL_OPTIONS.
 * Returns the number of settings written to ret (0..MG_HEAP_SETTINGS_MAX). */
int mg_heap_settings(enum mg_runtime rt, uint64_t share_bytes, char *const envp[], char *const argv[],
                     struct mg_env_setting ret[MG_HEAP_SETTINGS_MAX]);

/* For --explain and the summary's runtime line: what a generic task got, as
 * "sh: PYPY_GC_MAX, GOMEMLIMIT set for any runtime the task starts" (the
 * program after wrappers, then the generic variables among set[0..n)), or
 * "sh: no heap flag". Empty for any other runtime. Cut with "..." to fit
 * size. Pure. Returns the length written. */
size_t mg_heap_describe(enum mg_runtime rt, char *const argv[], const struct mg_env_setting *set, size_t n,
                        char *buf, size_t size);

/* The heap cap the runtime gets for a share (bytes), 0 when none applies:
 * exposed for --explain and tests. */
uint64_t mg_heap_cap(enum mg_runtime rt, uint64_t share_bytes);

/* Worker pools that size themselves: memguard tells each pool its task's
 * share through the pool's own knob (see docs/runtimes.md, Worker pools). */
enum mg_pool {
	MG_POOL_NONE,
	MG_POOL_DASK,   /* dask worker, dask-worker, python -m distributed.cli.dask_worker */
	MG_POOL_CELERY, /* celery ... worker, python -m celery ... worker */
	MG_POOL__COUNT,
};

/* "none", "dask", "celery". */
const char *mg_pool_name(enum mg_pool pool);

struct mg_cmdline;
/* The pool an unwrapped command (tok[0] is the program) starts, and the
 * index in c->tok of the pool worker's first own argument, the one after
 * "worker" (c->n when there is none). */
enum mg_pool mg_pool_locate(const struct mg_cmdline *c, size_t *ret_first);

/* The pool a command starts, looking through wrappers (env, nice ...) and
 * "python -m MODULE". Pure: reads argv only. */
enum mg_pool mg_pool_detect(char *const argv[]);

/* What memguard adds for a pool: at most one variable and one word
 * appended to the command. */
struct mg_pool_settings {
	struct mg_env_setting env; /* env.name[0] == '\0': none */
	char arg[64];              /* "" : none */
};

/* The per-process memory limit a pool worker gets from a task's share,
 * unless the user set one (in argv, in an env wrapper or in envp):
 * - Dask: "--memory-limit=<share / nworkers>" appended to the command (Dask
 *   2022.12 reads only the root cgroup's memory.max, and has no variable
 *   for it);
 * - Celery prefork: CELERY_WORKER_MAX_MEMORY_PER_CHILD=<KiB> (click reads it
 *   for "celery worker --max-memory-per-child"): the share less the main
 *   process and some headroom, split among --concurrency children.
 * Nothing when the split is unknown (--nworkers auto, no --concurrency),
 * for other Celery pools, and for a share of 0 or no real limit.
 * Returns the number of changes in *ret (0..2). */
int mg_pool_settings(enum mg_pool pool, uint64_t share_bytes, char *const envp[], char *const argv[],
                     struct mg_pool_settings *ret);
