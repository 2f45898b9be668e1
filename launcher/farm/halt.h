/* GNU parallel's --halt and the exit status it gives with its inputs, as
 * parallel 20221122 computes them (its should_we_halt and halt). Pure:
 * table-tested against what parallel itself does. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum mg_halt_when { MG_HALT_NEVER, MG_HALT_SOON, MG_HALT_NOW };
enum mg_halt_why { MG_HALT_FAIL, MG_HALT_SUCCESS, MG_HALT_DONE };

struct mg_halt {
	enum mg_halt_when when; /* NEVER: no --halt, or --halt never */
	enum mg_halt_why why;
	bool percent;   /* value is a percentage of the jobs */
	unsigned value; /* jobs (from 1), or percent (1 to 100) */
	bool given;     /* --halt was on the command line, never included */
};

/* Parses --halt: now|soon,fail|success|done=N|N%, never, and parallel's
 * short forms 0 (never), 1 (soon,fail=1), 2 (now,fail=1), -1
 * (soon,success=1), -2 (now,success=1) and N% (soon,fail=N%). -EINVAL
 * with a reason in err. */
int mg_halt_parse(const char *s, struct mg_halt *ret, char *err, size_t errsize);

/* The run's count, and whether and how it halted. */
struct mg_halt_state {
	size_t started;   /* jobs started */
	size_t completed; /* jobs ended for good (a retry for memory pending is not an end) */
	size_t failed;    /* of them, failed */
	bool halted;
	int status; /* the exit status fixed when it halted */
};

/* A job ended for good with status (0, its exit code, 128 + the signal
 * that killed it): counts it and says what to do now: MG_HALT_NEVER (go
 * on), MG_HALT_SOON (start nothing more) or MG_HALT_NOW (kill what runs).
 * total is the number of jobs, for a percentage. */
enum mg_halt_when mg_halt_job_ended(const struct mg_halt *h, struct mg_halt_state *st, size_t total,
                                    int status);

/* parallel's exit status at the end: the one fixed when it halted, else
 * the failed jobs (at most 101), or with --halt X% the percentage of the
 * started ones that failed, rounded up. */
int mg_halt_exit_status(const struct mg_halt *h, const struct mg_halt_state *st);
