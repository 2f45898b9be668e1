/* memguard step: the command a Slurm step of the steps backend runs
 * (steps.h). It starts the task, passes on what the launcher sends through
 * srun's stdin and the signals Slurm sends, samples what the kernel does not
 * keep, and when the task is over kills what it left, reads the step's
 * cgroup and writes the end record. It exits as the task did. */
#pragma once

#include <stddef.h>

/* argv[0] is "step". Returns the exit status (memguard's own errors 125). */
int mg_step_main(int argc, char **argv);

/* The cgroup whose memory.max and memory.events are the step's: Slurm's
 * .../step_<n>/user above a task cgroup, own itself in any other layout
 * (a task of a Slurm without that layout, or no step at all). Writes it
 * into ret. Pure. */
void mg_step_cgroup_of(const char *own, char *ret, size_t size);
