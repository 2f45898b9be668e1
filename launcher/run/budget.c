/* The budget, each task's share, and the limits a share becomes (pure). */
#include "run/budget.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "memguard/units.h"
#include "memguard/util.h"

#define PAGE_BYTES 4096u

const char *mg_env_get(char *const envp[], const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], name, len) == 0 && envp[i][len] == '=')
			return envp[i] + len + 1;
	return NULL;
}

/* Leading decimal of a value such as "4(x2)" or "16"; 0 when none. */
static uint64_t leading_count(const char *s)
{
	char digits[21];
	size_t n = strspn(s, "0123456789");
	uint64_t v;

	if (n == 0 || n >= sizeof(digits))
		return 0;
	memcpy(digits, s, n);
	digits[n] = '\0';
	return mg_parse_u64(digits, &v) == 0 ? v : 0;
}

void mg_batch_grant_from_env(char *const envp[], struct mg_sourced *ret)
{
	const char *per_node = mg_env_get(envp, "SLURM_MEM_PER_NODE");
	const char *per_cpu = mg_env_get(envp, "SLURM_MEM_PER_CPU");
	const char *cpus = mg_env_get(envp, "SLURM_CPUS_ON_NODE");
	uint64_t mib, n, bytes;

	*ret = (struct mg_sourced){.value = MG_SIZE_UNLIMITED};
	/* Slurm gives MiB; 0 means "all of the node". */
	if (per_node && mg_parse_u64(per_node, &mib) == 0 && mib > 0 &&
	    !__builtin_mul_overflow(mib, 1ull << 20, &bytes)) {
		ret->value = bytes;
		snprintf(ret->where, sizeof(ret->where), "SLURM_MEM_PER_NODE=%s MiB", per_node);
		return;
	}
	if (per_cpu && cpus && mg_parse_u64(per_cpu, &mib) == 0 && mib > 0 && (n = leading_count(cpus)) > 0 &&
	    !__builtin_mul_overflow(mib, n, &mib) && !__builtin_mul_overflow(mib, 1ull << 20, &bytes)) {
		ret->value = bytes;
		snprintf(ret->where, sizeof(ret->where), "SLURM_MEM_PER_CPU=%s MiB x SLURM_CPUS_ON_NODE=%s",
		         per_cpu, cpus);
	}
}

void mg_default_ntasks(char *const envp[], unsigned ncpus, struct mg_sourced *ret)
{
	static const char *const vars[] = {"PBS_NUM_PPN", "NCPUS", "SLURM_NTASKS_PER_NODE",
	                                   "SLURM_TASKS_PER_NODE", "SLURM_CPUS_ON_NODE"};

	for (size_t i = 0; i < MG_ARRAY_SIZE(vars); i++) {
		const char *v = mg_env_get(envp, vars[i]);
		uint64_t n = v ? leading_count(v) : 0;
		if (n > 0 && n <= 1u << 20) {
			ret->value = n;
			snprintf(ret->where, sizeof(ret->where), "%s=%s", vars[i], v);
			return;
		}
	}
	ret->value = ncpus > 0 ? ncpus : 1;
	snprintf(ret->where, sizeof(ret->where), "CPUs this process may run on");
}

int mg_budget_compute(const struct mg_budget_input *in, struct mg_budget *ret, char *err, size_t errsize)
{
	struct mg_budget b = {.limit = in->mem.mem_total, .limit_from = "MemTotal"};
	char s1[MG_SIZE_STRLEN], s2[MG_SIZE_STRLEN];
	const char *why = NULL;
	uint64_t node_room;

	if (in->ntasks == 0) {
		snprintf(err, errsize, "the number of tasks must be at least 1");
		return -EINVAL;
	}
	if (in->cgroup_limit.value < b.limit)
		b.limit = in->cgroup_limit.value, b.limit_from = in->cgroup_limit.where;
	if (in->batch_grant.value < b.limit)
		b.limit = in->batch_grant.value, b.limit_from = in->batch_grant.where;
	if (in->mem_option < b.limit)
		b.limit = in->mem_option, b.limit_from = "--mem";

	if (mg_size_parse(in->reserve, in->mem.mem_total, &b.reserve, &why) < 0) {
		snprintf(err, errsize, "invalid reserve \"%s\": %s", in->reserve, why);
		return -EINVAL;
	}
	b.shmem = in->reserve_shmem ? in->mem.shmem : 0;
	/* The reserve protects the node, so it comes out of what the node has,
	 * and a grant smaller than that is used as it is. */
	if (__builtin_sub_overflow(in->mem.mem_total, b.reserve, &node_room) ||
	    __builtin_sub_overflow(node_room, b.shmem, &node_room) || node_room == 0) {
		snprintf(err, errsize, "reserve %s plus Shmem %s leaves nothing of MemTotal %s",
		         mg_size_format(b.reserve, s1), mg_size_format(b.shmem, s2),
		         mg_size_format(in->mem.mem_total, (char[MG_SIZE_STRLEN]){0}));
		return -ERANGE;
	}
	b.room_from = "MemTotal - reserve - Shmem";
	/* The kernel, its caches and whatever else runs hold memory that MemTotal
	 * counts: promising it to the tasks would let them stall the node before
	 * any reached its limit. MemAvailable now, less the reserve, is what the
	 * node can really give. */
	if (in->mem.mem_available <= b.reserve) {
		snprintf(err, errsize,
		         "MemAvailable %s leaves nothing after the reserve %s: the node's memory is in use",
		         mg_size_format(in->mem.mem_available, s1), mg_size_format(b.reserve, s2));
		return -ERANGE;
	}
	b.available = in->mem.mem_available - b.reserve;
	if (b.available < node_room)
		node_room = b.available, b.room_from = "MemAvailable - reserve";
	b.room = node_room;
	b.usable = b.limit < node_room ? b.limit : node_room;

	if (in->mem_per_task > 0) {
		uint64_t need;
		if (__builtin_mul_overflow(in->mem_per_task, in->ntasks, &need) || need > b.usable) {
			snprintf(err, errsize, "--mem-per-task %s x %u tasks exceeds the usable %s",
			         mg_size_format(in->mem_per_task, s1), in->ntasks,
			         mg_size_format(b.usable, s2));
			return -ERANGE;
		}
		b.share = in->mem_per_task;
	} else {
		b.share = b.usable / in->ntasks;
	}
	b.share -= b.share % PAGE_BYTES;
	if (b.share < in->min_share || b.share == 0) {
		snprintf(err, errsize, "a share of %s per task (%u tasks) is below the minimum %s",
		         mg_size_format(b.share, s1), in->ntasks, mg_size_format(in->min_share, s2));
		return -ERANGE;
	}
	*ret = b;
	return 0;
}

void mg_limits_compute(const struct mg_limits_input *in, struct mg_limits *ret)
{
	enum mg_share_mode mode = in->mode;
	bool want_as = in->rlimit_as == MG_RLIMIT_AS_ON ||
	               (in->rlimit_as == MG_RLIMIT_AS_AUTO && in->runtime_wants_rlimit_as);

	if (mode == MG_SHARE_AUTO)
		mode = in->daemon ? MG_SHARE_ELASTIC : MG_SHARE_STRICT;
	/* Elastic needs a cgroup per task to mean anything; degraded tasks are
	 * held to their share by the watchdog. */
	if (!in->cgroups)
		mode = MG_SHARE_STRICT;
	*ret = (struct mg_limits){
	        .mode = mode,
	        /* The kernel keeps the tasks together inside the budget, unless
	         * memguardd guards elastic tasks: a cap where the daemon acts would
	         * race it, and the kernel would pick the largest process, not the
	         * task furthest over its share. */
	        .run_capped = in->cgroups && !(mode == MG_SHARE_ELASTIC && in->daemon),
	        .run_max = MG_SIZE_UNLIMITED,
	        .run_swap_max = in->swap_max,
	        .task = {.share = in->share,
	                 .max = in->share,
	                 .high = in->high_percent ? in->share / 100 * in->high_percent : 0,
	                 .swap_max = in->swap_max,
	                 .oom_group = in->oom_group},
	};
	if (ret->run_capped)
		ret->run_max = in->usable;
	/* Elastic: a task may use more than its share while the node has room,
	 * up to the whole budget; memguardd takes memory back under pressure. */
	if (mode == MG_SHARE_ELASTIC) {
		ret->task.max = in->usable;
		ret->task.high = 0;
	}
	if (want_as)
		ret->rlimit_as = ret->task.max;
}
