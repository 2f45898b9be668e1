/* The farm across nodes: rank and run from the environment (nodes.h). */
#include "farm/nodes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/budget.h"

static bool number(const char *s, unsigned long *ret)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	*ret = strtoul(s, &end, 10);
	return !errno && !*end;
}

int mg_farm_node_from_env(char *const envp[], struct mg_farm_node *ret, char *err, size_t errsize)
{
	static const char *const pairs[][2] = {
	        {"SLURM_PROCID", "SLURM_STEP_NUM_TASKS"},
	        {"PMI_RANK", "PMI_SIZE"},
	        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
	        {"PBS_VNODENUM", "PBS_NUM_NODES"},
	};
	const char *job, *step, *id = NULL;

	*ret = (struct mg_farm_node){0};
	for (size_t i = 0; i < sizeof(pairs) / sizeof(*pairs) && !ret->multi; i++) {
		unsigned long rank, size;
		if (!number(mg_env_get(envp, pairs[i][0]), &rank) ||
		    !number(mg_env_get(envp, pairs[i][1]), &size) || size < 2 || rank >= size)
			continue;
		*ret = (struct mg_farm_node){.multi = true, .rank = rank, .size = size};
		snprintf(ret->rank_from, sizeof(ret->rank_from), "%s", pairs[i][0]);
	}
	if (!ret->multi)
		return 0;
	if ((id = mg_env_get(envp, "MEMGUARD_FARM_RUN")) && *id)
		snprintf(ret->run_id, sizeof(ret->run_id), "%s", id);
	else if ((job = mg_env_get(envp, "SLURM_JOB_ID")) && (step = mg_env_get(envp, "SLURM_STEP_ID")))
		snprintf(ret->run_id, sizeof(ret->run_id), "%s.%s", job, step);
	else if ((id = mg_env_get(envp, "PBS_JOBID")) || (id = mg_env_get(envp, "PMIX_NAMESPACE")) ||
	         (id = mg_env_get(envp, "OMPI_MCA_ess_base_jobid")) || (id = mg_env_get(envp, "PMI_KVSNAME")))
		snprintf(ret->run_id, sizeof(ret->run_id), "%s", id);
	if (!ret->run_id[0]) {
		snprintf(err, errsize,
		         "%s says this memguard is one of %lu, but nothing names the run they share "
		         "(SLURM_JOB_ID "
		         "and SLURM_STEP_ID, PBS_JOBID, PMIX_NAMESPACE, ...): set MEMGUARD_FARM_RUN to one "
		         "value "
		         "on every node",
		         ret->rank_from, ret->size);
		return -ENXIO;
	}
	/* A file name: nothing but letters, digits, '.', '-' and '_'. */
	for (char *p = ret->run_id; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *p))
			*p = '_';
	if (ret->run_id[0] == '.')
		ret->run_id[0] = '_';
	return 1;
}

bool mg_farm_is_node_joblog(const char *base, const char *name)
{
	size_t len = strlen(base);

	if (strncmp(name, base, len) != 0 || name[len] != '.' || !name[len + 1])
		return false;
	return strspn(name + len + 1, "0123456789") == strlen(name + len + 1);
}
