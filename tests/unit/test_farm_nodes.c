/* The farm across nodes: rank, world size and run id from the batch
 * system's or MPI launcher's environment (mg_farm_node_from_env), and which
 * files are per-node joblogs (mg_farm_is_node_joblog). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "farm/nodes.h"

#define MAXENV 8

struct node_case {
	const char *name;
	char *env[MAXENV];
	int want; /* 1 multi, 0 one node, -ENXIO */
	unsigned long rank, size;
	const char *run_id;
};

static void from_env_table(void **state)
{
	static const struct node_case cases[] = {
	        {"nothing", {NULL}, 0, 0, 0, NULL},
	        {"a batch script: SLURM_PROCID without a step",
	         {"SLURM_PROCID=0", "SLURM_NTASKS=16", "SLURM_JOB_ID=7", NULL},
	         0,
	         0,
	         0,
	         NULL},
	        {"srun, one task: not several",
	         {"SLURM_PROCID=0", "SLURM_STEP_NUM_TASKS=1", "SLURM_JOB_ID=7", "SLURM_STEP_ID=0", NULL},
	         0,
	         0,
	         0,
	         NULL},
	        {"srun -N2",
	         {"SLURM_PROCID=1", "SLURM_STEP_NUM_TASKS=2", "SLURM_JOB_ID=7", "SLURM_STEP_ID=3", NULL},
	         1,
	         1,
	         2,
	         "7.3"},
	        {"mpirun (Open MPI)",
	         {"OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=4", "PMIX_NAMESPACE=prterun-host-123@1",
	          NULL},
	         1,
	         3,
	         4,
	         "prterun-host-123_1"},
	        {"hydra (PMI)",
	         {"PMI_RANK=0", "PMI_SIZE=2", "PMI_KVSNAME=kvs_55_0", NULL},
	         1,
	         0,
	         2,
	         "kvs_55_0"},
	        {"pbsdsh",
	         {"PBS_VNODENUM=2", "PBS_NUM_NODES=3", "PBS_JOBID=42.server", NULL},
	         1,
	         2,
	         3,
	         "42.server"},
	        {"MEMGUARD_FARM_RUN wins",
	         {"PMI_RANK=1", "PMI_SIZE=2", "PMI_KVSNAME=kvs", "MEMGUARD_FARM_RUN=../sweep 2", NULL},
	         1,
	         1,
	         2,
	         "_._sweep_2"},
	        {"a rank but no run id", {"PMI_RANK=1", "PMI_SIZE=2", NULL}, -ENXIO, 1, 2, NULL},
	        {"rank beyond size: ignored",
	         {"PMI_RANK=2", "PMI_SIZE=2", "PMI_KVSNAME=k", NULL},
	         0,
	         0,
	         0,
	         NULL},
	        {"garbage rank: ignored", {"PMI_RANK=x", "PMI_SIZE=2", "PMI_KVSNAME=k", NULL}, 0, 0, 0, NULL},
	        {"negative size: ignored",
	         {"PMI_RANK=0", "PMI_SIZE=-2", "PMI_KVSNAME=k", NULL},
	         0,
	         0,
	         0,
	         NULL},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const struct node_case *c = &cases[i];
		struct mg_farm_node n;
		char err[512] = "";
		int r = mg_farm_node_from_env(c->env, &n, err, sizeof(err));

		if (r != c->want)
			print_error("%s: %d (%s)\n", c->name, r, err);
		assert_int_equal(r, c->want);
		assert_int_equal(n.multi, c->want != 0);
		if (c->want == 0)
			continue;
		assert_int_equal(n.rank, c->rank);
		assert_int_equal(n.size, c->size);
		if (c->want == -ENXIO) {
			assert_non_null(strstr(err, "MEMGUARD_FARM_RUN"));
			continue;
		}
		if (strcmp(n.run_id, c->run_id) != 0)
			print_error("%s: run id \"%s\"\n", c->name, n.run_id);
		assert_string_equal(n.run_id, c->run_id);
	}
}

static void node_joblogs(void **state)
{
	assert_true(mg_farm_is_node_joblog("sweep.log", "sweep.log.0"));
	assert_true(mg_farm_is_node_joblog("sweep.log", "sweep.log.17"));
	assert_false(mg_farm_is_node_joblog("sweep.log", "sweep.log"));
	assert_false(mg_farm_is_node_joblog("sweep.log", "sweep.log."));
	assert_false(mg_farm_is_node_joblog("sweep.log", "sweep.log.claims"));
	assert_false(mg_farm_is_node_joblog("sweep.log", "sweep.log.1x"));
	assert_false(mg_farm_is_node_joblog("sweep.log", "sweep.logs.1"));
	assert_false(mg_farm_is_node_joblog("sweep.log", "other.log.1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(from_env_table),
	        cmocka_unit_test(node_joblogs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
