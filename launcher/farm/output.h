/* The tasks' output with GNU parallel's inputs, as parallel prints it:
 * each task's output whole as it ends (stdout, then stderr), or with
 * --line-buffer whole lines as they come; -k (--keep-order) in the order of
 * the inputs; --tag before each line. Each task writes into two pipes that
 * memguard reads as they fill (so its output is not charged to the task's
 * memory, as a file in a tmpfs /tmp would be); what must wait is kept in one
 * unlinked spool file of memguard's own, and the space of what was printed
 * is given back. A --results folder gets a copy of everything. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

enum mg_output_mode {
	MG_OUTPUT_PASS,  /* the task writes to memguard's own stdout and stderr (--ungroup) */
	MG_OUTPUT_GROUP, /* all of a task's output as it ends (parallel's default) */
	MG_OUTPUT_LINE,  /* whole lines as they come (--line-buffer) */
};

struct mg_output_stream;
struct mg_output_task;

struct mg_output {
	enum mg_output_mode mode;
	bool keep_order;              /* -k */
	bool tag;                     /* --tag */
	int fd[2];                    /* where it goes: 1 and 2 */
	const char *const *tags;      /* by task index: --tag's text */
	size_t ntasks;                /* in the list */
	struct mg_output_task **task; /* by index: while it runs or its output waits */
	unsigned char *state;         /* by index */
	size_t next;                  /* -k: the lowest index not printed or skipped */
	sd_event *event;
	int spool; /* held output, -1 until needed */
	off_t spool_end;
	size_t spooled; /* tasks with output in the spool */
	bool gone[2];   /* a write failed (a closed pipe): nothing more goes there */
	bool halted;    /* --halt now: nothing more is printed */
};

/* Sets it up for ntasks tasks, each of which this run starts or skips;
 * tags (NULL without --tag) stay borrowed. -ENOMEM. */
int mg_output_init(struct mg_output *o, enum mg_output_mode mode, bool keep_order, const char *const *tags,
                   size_t ntasks);

/* Tasks the run will not start (a resume has them done): -k goes past them. */
void mg_output_skip(struct mg_output *o, size_t index);

/* Reads the pipes in this event loop from now on (may be NULL: the output
 * is read only as each task ends). */
void mg_output_attach(struct mg_output *o, sd_event *e);

/* An attempt of task index starts. *out and *err: on entry the --results
 * files (-1 without), taken over; on return the fds the task writes to (the
 * same, -1 for memguard's own, or the pipes' ends, which the caller closes
 * once the task has them). 0 or -errno (said). */
int mg_output_start(struct mg_output *o, size_t index, int *out, int *err);

/* Output of task index that reaches memguard some other way than the task's
 * pipe (which: 0 stdout, 1 stderr): a Slurm step's stderr, once memguard has
 * taken its helper's records out. Handled as if read from the pipe. */
void mg_output_feed(struct mg_output *o, size_t index, int which, const char *data, size_t len);

/* The attempt is over: what is left in its pipes is read, and its output
 * printed (at once, or when its turn comes with -k) when keep, else dropped
 * (a retry follows, or --halt now killed it). */
void mg_output_end(struct mg_output *o, size_t index, bool keep);

/* --halt now: what was not printed yet never is, as with parallel. */
void mg_output_halt(struct mg_output *o);

/* The end of the run: what waits for -k is printed in order, past tasks
 * that never ended; everything is closed. */
void mg_output_done(struct mg_output *o);

/* Writes data to fd with prefix (may be NULL) and a tab before each line
 * that starts in it; *line_start says whether data begins a line, and is
 * left saying whether the next byte would. Returns 0 or -errno. */
int mg_output_tagged(int fd, const char *prefix, const char *data, size_t len, bool *line_start);
