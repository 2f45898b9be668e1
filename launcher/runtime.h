/* Which language runtime a task runs, and the heap flags and rlimits that fit
 * its share. Detection (runtime.c) reads the command (and the file it names);
 * flag generation (heapflags.c) is a pure function of the runtime, the share
 * and the user's environment and arguments. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum mg_runtime {
	MG_RUNTIME_GENERIC, /* unknown: no heap flag, no RLIMIT_AS by default */
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
	char name[32];
	char value[256];
};

/* At most this many settings come back. */
#define MG_HEAP_SETTINGS_MAX 4

/* Computes the heap settings for a task of this runtime with memory share
 * share_bytes. envp is the environment the task would inherit and argv its
 * command: a setting the user made explicitly (PYPY_GC_MAX already set,
 * -Xmx in argv or JAVA_TOOL_OPTIONS, --max-old-space-size in argv or
 * NODE_OPTIONS, GOMEMLIMIT, DOTNET_GCHeapHardLimit, R_MAX_VSIZE ...) is never
 * overridden. Appending to a list-valued variable (JAVA_TOOL_OPTIONS,
 * NODE_OPTIONS) keeps what the user had there. The heap cap leaves headroom
 * per runtime, because a GC cap bounds the heap, not the whole RSS.
 * Returns the number of settings written to ret (0..MG_HEAP_SETTINGS_MAX). */
int mg_heap_settings(enum mg_runtime rt, uint64_t share_bytes, char *const envp[], char *const argv[],
                     struct mg_env_setting ret[MG_HEAP_SETTINGS_MAX]);

/* The heap cap the runtime gets for a share (bytes), 0 when none applies:
 * exposed for --explain and tests. */
uint64_t mg_heap_cap(enum mg_runtime rt, uint64_t share_bytes);
