/* One task list across the nodes of a job: each node's memguard knows its
 * rank and the run it belongs to from the launcher that started it (srun,
 * mpirun, pbsdsh), writes a joblog of its own (FILE.<rank>), and takes a
 * line only by creating its claim file with O_EXCL in a folder beside the
 * joblog, on the filesystem the nodes share. No server, no messages. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "task.h"

struct mg_farm_node {
	bool multi; /* started as one of several: claims and FILE.<rank> */
	unsigned long rank;
	unsigned long size; /* 0: not known (pbsdsh) */
	char rank_from[40]; /* the variable it came from */
	char run_id[128];   /* the same on every node of one run, another for the next run */
};

/* From the environment, pure. Multi-node when a rank comes with a world
 * size above 1: SLURM_PROCID with SLURM_STEP_NUM_TASKS (srun sets both; a
 * batch script has no step), PMI_RANK with PMI_SIZE, OMPI_COMM_WORLD_RANK
 * with OMPI_COMM_WORLD_SIZE, or PBS_VNODENUM with PBS_NUM_NODES (pbsdsh).
 * The run's id: SLURM_JOB_ID.SLURM_STEP_ID, PBS_JOBID, PMIX_NAMESPACE,
 * OMPI_MCA_ess_base_jobid or PMI_KVSNAME, the first one set, overridden by
 * MEMGUARD_FARM_RUN. Returns 1 for multi-node, 0 for one node, -ENXIO when a
 * rank was found but no run id (said in err). */
int mg_farm_node_from_env(char *const envp[], struct mg_farm_node *ret, char *err, size_t errsize);

/* Whether name is path's per-node joblog: path, a dot, then digits. */
bool mg_farm_is_node_joblog(const char *base, const char *name);
