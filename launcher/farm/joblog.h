/* --joblog FILE: one tab-separated line per finished attempt, in GNU
 * parallel's columns and then memguard's, and reading it back for --resume
 * and --resume-failed. Formatting, parsing and the resume plan are pure. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "task.h"

/* GNU parallel's header, memguard's columns before Command, which stays last. */
#define MG_JOBLOG_HEADER                                                                                     \
	"Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tShare\tPeak\tOOMKills\tOutcome\t" \
	"At"                                                                                                 \
	"tempt\tCommand\n"
#define MG_JOBLOG_COLUMNS 14

/* A joblog line longer than this is not ours (a task line is at most 1 MiB). */
#define MG_JOBLOG_MAX_LINE (4u << 20)

/* One line: one attempt of one task. */
struct mg_joblog_entry {
	unsigned long seq; /* the task's number in the list, from 1 */
	const char *host;
	double start;   /* seconds since the epoch */
	double runtime; /* seconds */
	int exitval;    /* the exit code; 0 when killed by a signal; -1 when never started */
	int signal;     /* the signal that ended it, or 0 */
	uint64_t share;
	uint64_t peak; /* when peak_known; "-" in the file otherwise */
	bool peak_known;
	uint64_t oom_kills;
	const char *outcome; /* one word, mg_attempt_outcome */
	unsigned attempt;    /* 1, 2, ... */
	const char *command; /* escaped (mg_joblog_command) */
	const char *file;    /* parsed: which joblog */
	size_t lineno;       /* and which line of it, from 1 */
};

/* The words an attempt ends with in the Outcome column: mg_task_outcome's
 * (ok, failed, killed_by_signal, oom_killed, killed_by_memguardd,
 * killed_by_watchdog, killed_after_grace, killed_on_second_signal,
 * cannot_execute, not_started), and two of the farm's own: near_limit (it
 * failed by itself near a memory limit, memreason.c) and interrupted (it
 * failed after memguard forwarded a terminating signal to it). */
const char *mg_attempt_outcome(const struct mg_task *t);

/* Whether an outcome is a failure for memory, which --retries runs again:
 * oom_killed, killed_by_memguardd, killed_by_watchdog, near_limit. */
bool mg_outcome_for_memory(const char *outcome);

/* The command as the joblog writes it: the words joined by one space, with
 * backslash, tab, newline and CR written \\, \t, \n and \r so the line
 * stays one line, and every other control byte as \xHH so that none
 * reaches a terminal raw. NULL when out of memory. */
char *mg_joblog_command(char *const *argv);

/* Whether two Command texts stand for the same command: compared
 * unescaped, so a joblog written before control bytes were escaped (it has
 * them raw) still matches. */
bool mg_joblog_command_equal(const char *a, const char *b);

/* The entry of a finished attempt of t (its index + 1 is the seq), whose
 * command text is command. host and command are borrowed. */
void mg_joblog_entry_of(const struct mg_task *t, const char *host, const char *command,
                        struct mg_joblog_entry *ret);

/* The line for e, newline included, malloc'd; NULL when out of memory. */
char *mg_joblog_format(const struct mg_joblog_entry *e);

/* Parses one line (without its newline) in place: fields point into it.
 * 0, or -EBADMSG with a reason in why (static text). */
int mg_joblog_parse_line(char *line, struct mg_joblog_entry *ret, const char **why);

/* Parses a whole joblog (text is split in place and must stay alive) and
 * appends its entries to *entries (a heap array of *n, grown). A missing
 * header, a header that is not ours, or a bad line is -EBADMSG, with the
 * line and why in err; except a last line without its newline, which a
 * node that died while writing it leaves: it is dropped, and that attempt
 * counts as never logged. */
int mg_joblog_parse(char *text, const char *name, struct mg_joblog_entry **entries, size_t *n, char *err,
                    size_t errsize);

enum mg_resume_mode { MG_RESUME_NONE, MG_RESUME, MG_RESUME_FAILED };

/* What a resumed run does with one task. */
struct mg_resume_plan {
	bool run;           /* false: the joblog has it done (or failed, under --resume) */
	unsigned attempt;   /* the attempt number it starts with */
	uint64_t share;     /* 0: the run's share; else a retry's, from its last attempt */
	unsigned prior;     /* attempts the joblog has of it */
	unsigned retried;   /* of them, memory failures its retries count (0 under --resume-failed's rerun) */
	bool failed_before; /* the joblog has it failed for good (skipped, or rerun by --resume-failed) */
};

struct mg_resume_input {
	enum mg_resume_mode mode;
	char *const *commands; /* each task's escaped command text, by index */
	size_t ntasks;
	const struct mg_joblog_entry *entries; /* every joblog's, any order */
	size_t nentries;
	unsigned retries; /* --retries of this run */
	uint64_t budget;
	uint64_t page_size;
	bool seq_only;    /* match a line by its Seq alone (a command with {%}, whose text varies) */
	const char *list; /* what makes the tasks, for messages: "task file" (NULL), "inputs" */
};

/* Whether an attempt never finished: memguard's stop cut it off (interrupted,
 * killed_after_grace, killed_on_second_signal) or it never started
 * (not_started). --resume runs such a task again, as parallel's does. */
bool mg_outcome_unfinished(const char *outcome);

/* Decides, per task, what a resume does (docs/sweeps.md): a task with an ok
 * attempt is done; one never logged runs from attempt 1; one whose last
 * attempt never finished (mg_outcome_unfinished) runs again, with the share
 * that attempt had when it was a memory retry; one whose last attempt
 * failed for memory with retries left runs its retry, with the retry's
 * share; any other failure is done under --resume and runs again (attempt
 * numbers go on, the retries count afresh) under --resume-failed. Retries
 * count the memory failures in the joblog. A seq whose command text differs
 * from the task's, or that the task list does not have, is -EBADMSG with
 * the joblog and line in err: the command changed when no line matches,
 * else the task list. ret is an array of ntasks. */
int mg_resume_decide(const struct mg_resume_input *in, struct mg_resume_plan *ret, char *err, size_t errsize);
