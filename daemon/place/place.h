/* Where memguardd puts an ordinary user's run: a pure function of what the
 * kernel says about the caller (its uid, its cgroup, that cgroup's chain of
 * limits and whose processes it holds) and of the job cgroups a prologue
 * prepared. The client sends two words: a job id hint, which only chooses
 * among the caller's own job cgroups, and a budget, which sizes the limit
 * memguardd sets on the caller's own task cgroup (mg_place_caller_limit). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A placed run is made beside its caller's cgroup, as
 * <parent of the caller's cgroup>/MG_PLACE_RUN_PREFIX<uid>-<n>: inside the
 * job, so every limit, cpuset and device program the batch system set on the
 * job and its step applies to it by construction. Only beside a job's own
 * task cgroup ([daemon] place_beside), which holds no process of another
 * uid: memguardd sets that cgroup's memory.max (mg_place_caller_limit). The
 * caller's own cgroup keeps the launcher's first process (Slurm signals only
 * the processes it put in its task cgroups), so the run cannot be below it,
 * and a caller's cgroup with a limit of its own is refused. Runs an older
 * memguardd made below the root, MG_PLACE_RUNS_PARENT/MG_PLACE_ROOT_RUN_PREFIX
 * <uid>-<n>, are adopted, never made. */
#define MG_PLACE_RUN_PREFIX "memguard-run-"
#define MG_PLACE_RUNS_PARENT "memguard"
#define MG_PLACE_ROOT_RUN_PREFIX "user-"
/* Where an earlier memguardd made runs as systemd scopes: adopted, never made. */
#define MG_PLACE_SLICE "memguard.slice"
/* The leaf inside a placed run that holds the launcher itself (cgroup v2
 * allows no processes in a cgroup whose children have controllers). */
#define MG_PLACE_SUPERVISOR_LEAF "supervisor"
/* Job cgroups that the Torque/PBS prologue prepares (packaging/pbs/prologue). */
#define MG_PLACE_JOBS_PARENT "memguard.jobs"
#define MG_PLACE_JOB_LEAF "job"

/* One cgroup of the caller's chain: its own cgroup first, then each ancestor
 * up to (not including) the mount's root, as far as memguardd reads it. */
struct mg_place_origin {
	const char *path; /* below the mount */
	uint64_t limit;   /* memory.max, MG_SIZE_UNLIMITED when "max" or absent */
	/* A limit set on this cgroup itself ("memory.max", "cpuset.cpus", a device
	 * program, ...), "" for none; read for the caller's own cgroup only. */
	const char *own_limit;
};

/* What memguardd read of the caller's own cgroup, for a run beside it. */
struct mg_place_caller {
	pid_t stranger;    /* a process in its subtree whose real or effective uid is not the
	                    * caller's, 0 for none, -1 when that could not be told */
	bool own_pids_max; /* it sets pids.max itself: the run takes that budget with it */
	unsigned runs;     /* runs beside it now (its tether) */
	unsigned watches;  /* memguardd's inotify watches this uid's cgroups and runs hold now */
	unsigned max_watches;
};

/* A prepared job cgroup, MG_PLACE_JOBS_PARENT/<name>. */
struct mg_place_job {
	const char *name;
	uid_t owner;   /* owner of the job's directory: the prologue chowns it to the job's user */
	bool has_leaf; /* its MG_PLACE_JOB_LEAF exists */
};

struct mg_place_request {
	uid_t uid;            /* SO_PEERCRED, re-checked against the pinned process */
	const char *job_hint; /* the job id the launcher saw in its environment, or NULL */
	unsigned runs_of_uid; /* placed runs this uid has now */
	unsigned max_runs_per_uid;
	const char *beside;         /* [daemon] place_beside: globs of the cgroups a run goes beside */
	struct mg_place_caller who; /* the caller's own cgroup, for a run beside it */
};

enum mg_place_kind {
	MG_PLACE_REFUSE,
	MG_PLACE_JOB, /* move the caller into jobs[job]'s leaf */
	MG_PLACE_RUN, /* a new run cgroup inside chain[parent], delegated to the caller */
};

struct mg_place_verdict {
	enum mg_place_kind kind;
	size_t job;      /* MG_PLACE_JOB: index into jobs */
	uint64_t limit;  /* MG_PLACE_RUN: the smallest limit of the chain, MG_SIZE_UNLIMITED if none */
	long limit_from; /* index into the chain of the outermost cgroup holding that limit, -1 if none */
	long parent;     /* MG_PLACE_RUN: index into the chain of the cgroup the run goes in
	                  * (1: beside the caller's). The run's tether is chain[0]. */
	char why[256];   /* for REFUSE: the reason; otherwise where the limit came from, in words */
};

/* Decides where the caller's run goes:
 * - a job cgroup owned by the caller's uid, chosen by the hint (or the only
 *   one when there is no hint), when it has its leaf and the caller's chain
 *   has no memory.max (moving there must not take the caller out of a
 *   limit);
 * - else a new run beside the caller's own cgroup, in its parent, which the
 *   limits of every cgroup above covers without a copy; limit is the
 *   smallest memory.max of the chain, for the launcher to say. Only when the
 *   caller's cgroup is a job's task cgroup (it matches a glob of
 *   req->beside), holds no process of another uid, and, when it sets
 *   pids.max itself, has no run beside it yet (the run takes that pids
 *   budget along), and when the user's runs and cgroups hold fewer than
 *   max_watches of memguardd's inotify watches (a run needs two more);
 * - refused when the caller's own cgroup sets a limit of its own (a run
 *   beside it would escape that limit: the launcher then runs in it,
 *   degraded);
 * - refused when the caller is already in a placed run or a job cgroup
 *   (mg_place_path_placed), or has max_runs_per_uid runs already, or its
 *   chain stops short of the top (its outermost cgroup has a parent: the
 *   caller nested deeper than memguardd reads, so the limit it would say
 *   may be wrong).
 * n is the chain's length. Returns the kind, also in ret. */
enum mg_place_kind mg_place_decide(const struct mg_place_request *req, const struct mg_place_origin *chain,
                                   size_t n, const struct mg_place_job *jobs, size_t njobs,
                                   struct mg_place_verdict *ret);

/* True when path (below the mount) is in a placed run or a job cgroup
 * already: a component starts with MG_PLACE_RUN_PREFIX, or it is below
 * MG_PLACE_RUNS_PARENT, MG_PLACE_JOBS_PARENT or MG_PLACE_SLICE. */
bool mg_place_path_placed(const char *path);

/* The longest cgroup path below the mount that a chain holds, with its NUL:
 * a run's own path is this and its name. */
#define MG_PLACE_PATH_MAX 512
/* How many cgroups of the caller's chain memguardd reads. */
#define MG_PLACE_CHAIN_MAX 32

/* paths gets path's chain as memguardd reads it: path (below the mount, no
 * leading '/'), then each ancestor, at most max of them, so a deeper chain
 * stops short of the top (mg_place_decide refuses it). Returns how many, or
 * -ENAMETOOLONG. */
long mg_place_chain_paths(const char *path, char (*paths)[MG_PLACE_PATH_MAX], size_t max);

/* True when path (below the mount) matches one of the space-separated
 * globs (fnmatch, '*' stops at '/'): a cgroup memguardd places a run
 * beside. */
bool mg_place_beside(const char *path, const char *globs);

/* Whether a file of a cgroup is a limit a run beside it would escape: a
 * "*.max" or "*.high" of a controller in controllers (the cgroup's
 * cgroup.controllers, space separated), any cpuset.* but the .effective
 * ones, cgroup.max.descendants and cgroup.max.depth. Not pids.max, which
 * the run takes along, nor protections and weights. */
bool mg_place_limit_file(const char *name, const char *controllers);

/* Whether value (the file's text) sets a limit: anything but its default.
 * "max" (or name=max, after a device or resource name) for the *.max and
 * *.high files, "max <period>" for cpu.max, "" for cpuset.*, "member" for
 * cpuset.cpus.partition. */
bool mg_place_limit_set(const char *name, const char *value);

/* True when s may be a job id: 1 to 64 characters of [A-Za-z0-9._[]-], not
 * starting with '.'. It is only ever compared against directory names. */
bool mg_place_job_id_valid(const char *s);

/* Request and reply lines of the placement protocol (one line each way):
 *   client: "place[ job=<id>][ budget=<bytes>]\n"
 *   server: "ok job <cgroup>\n"                    moved into <cgroup>/job
 *           "ok run <cgroup> <limit|max> <from>\n" moved into <cgroup>/supervisor
 *           "err <reason>\n"
 * <cgroup> is below the mount; <from> is the cgroup that set the limit, or
 * "-". <budget> is what the run will hand its tasks in all (the launcher's
 * word): it sizes the memory.max memguardd writes on the caller's own
 * cgroup, a job's task cgroup holding only the caller's uid's processes
 * (mg_place_caller_limit). mg_place_parse_request returns 0, the hint (NULL
 * when none, else a pointer into line) and the budget (0 when none), or
 * -EINVAL. */
int mg_place_parse_request(char *line, const char **ret_job_hint, uint64_t *ret_budget);

/* The least a caller's cgroup keeps beside its runs: the job script's
 * shell and memguard's first process, and a twentieth of the job (what
 * the script starts beside the run: a Dask scheduler, a monitor). */
#define MG_PLACE_CALLER_MIN (16ull << 20)
#define MG_PLACE_CALLER_PERCENT 5

/* What the caller's own cgroup may hold while runs beside it take taken in
 * all out of the job's limit (the smallest memory.max above both): the
 * rest, and MG_PLACE_CALLER_PERCENT of the limit and MG_PLACE_CALLER_MIN at
 * least, so that when the job's own processes grow, the kernel stops them
 * there rather than the runs' tasks at the job's limit. Never below what the
 * cgroup holds now (current) plus MG_PLACE_CALLER_MIN: setting it must stop
 * nothing at once (a job script's files staged in /dev/shm are charged to
 * it, and killing its processes would not free them). MG_SIZE_UNLIMITED
 * when there is no limit or nothing taken. */
uint64_t mg_place_caller_limit(uint64_t limit, uint64_t taken, uint64_t current);
