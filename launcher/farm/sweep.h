/* A sweep on GNU parallel's command line (docs/sweeps.md, "From GNU
 * parallel"): its inputs (inputs.h) make the tasks, each one's command is
 * composed (compose.h) and run by the shell, its output grouped (output.h),
 * and --halt (halt.h) may stop the run early. The supervisor calls the
 * mg_sweep_* hooks as a task starts and as an attempt ends; each is a no-op
 * for a NULL sweep (--tasks FILE, N copies). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <systemd/sd-event.h>

#include "farm/halt.h"
#include "farm/inputs.h"
#include "farm/output.h"
#include "options.h"
#include "runtime/runtime.h"
#include "task.h"

struct mg_sweep {
	struct mg_inputs inputs;
	char *const *words; /* the command (borrowed), the template of every task's line */
	bool quote;         /* --quote */
	const char *shell;  /* borrowed */
	size_t njobs;
	char **params;     /* by index: the task's arguments joined by spaces (the summary's, --tag's) */
	bool has_slot;     /* the command holds {%} */
	unsigned *slot_of; /* by index: the job slot of its running attempt, 0: none */
	bool *slot_used;   /* slots 1 .. nslots */
	unsigned nslots;
	bool *started; /* by index: counted as started (--halt's percentages) */
	struct mg_halt halt;
	struct mg_halt_state hs;
	struct mg_output output;
	char **commands; /* the joblog's texts by index, or NULL: {%}'s are made as the task starts */
};

/* The tasks: reads the inputs of o (standard input when o has no other
 * source) and makes each task's arguments. words is the command (borrowed),
 * envp gives the shell. Returns the number of tasks (0: no input), or
 * -errno with a one-line reason in err. */
long mg_sweep_plan(struct mg_sweep *s, const struct mg_options *o, char *const *words, char *const envp[],
                   char *err, size_t errsize);

/* Task index's line for the shell, with {%} as slot; heap, NULL when out of
 * memory. */
char *mg_sweep_line(const struct mg_sweep *s, size_t index, unsigned slot);

/* --dry-run: each task's line on out, with --tag's tag before it, as
 * parallel prints them ({%} is 1: nothing runs). -errno when out of memory. */
int mg_sweep_print(const struct mg_sweep *s, bool tag, FILE *out);

/* Before the run: the output for the tasks of this run (indices, in
 * order; the others are skipped by -k), nslots slots for {%}, and commands,
 * the joblog's texts to keep true for {%} (may be NULL). -ENOMEM. */
int mg_sweep_start(struct mg_sweep *s, const struct mg_options *o, const size_t *indices, size_t n,
                   unsigned nslots, char **commands);

/* Hooks. The command an attempt runs ({shell, "-c", line}, freed with
 * mg_free_argv; NULL when out of memory), and the slot it takes. */
char **mg_sweep_argv(struct mg_sweep *s, const struct mg_task *t);
/* PARALLEL_SEQ and PARALLEL_JOBSLOT, as parallel sets them: how many were
 * written to env (room for 2). */
size_t mg_sweep_env(const struct mg_sweep *s, const struct mg_task *t, struct mg_env_setting *env);
/* The fds the attempt writes to (mg_output_start). */
int mg_sweep_output(struct mg_sweep *s, const struct mg_task *t, int *out, int *err);
/* Whether the tasks' output comes to memguard (grouped, --line-buffer), and
 * so a step's filtered stderr goes in through mg_sweep_feed_err instead of
 * its pipe, which memguard would otherwise both write and read. */
bool mg_sweep_captures(const struct mg_sweep *s);
void mg_sweep_feed_err(struct mg_sweep *s, const struct mg_task *t, const char *data, size_t len);
/* The attempt ended; final: no retry follows. Returns what --halt says to
 * do now. */
enum mg_halt_when mg_sweep_ended(struct mg_sweep *s, const struct mg_task *t, bool final);
/* The task will not run here (another node claimed it). */
void mg_sweep_skip(struct mg_sweep *s, const struct mg_task *t);
void mg_sweep_attach(struct mg_sweep *s, sd_event *e);

/* The run's exit status, as parallel's: mg_halt_exit_status. */
int mg_sweep_exit_status(const struct mg_sweep *s);

/* After the run: prints what waits, frees everything. */
void mg_sweep_done(struct mg_sweep *s);
