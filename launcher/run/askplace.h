/* The launcher's side of memguardd's placement service: an ordinary user's
 * run asks the node's trusted daemon for a real cgroup. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memguard/paths.h"

enum mg_place_answer_kind {
	MG_PLACE_ANSWER_JOB, /* moved into <cgroup>/job: put the run below <cgroup> */
	MG_PLACE_ANSWER_RUN, /* moved into <cgroup>/supervisor: <cgroup> is the run */
};

struct mg_place_answer {
	enum mg_place_answer_kind kind;
	char cgroup[512];     /* below the mount */
	uint64_t limit;       /* RUN: its memory.max, MG_SIZE_UNLIMITED for none */
	char limit_from[512]; /* RUN: the cgroup that set it, "" for none */
	bool budget_refused;  /* memguardd did not know budget=: asked again without */
};

/* Parses one reply line. Returns 0, -EPERM with the daemon's reason in why
 * for "err ...", or -EBADMSG for anything else. */
int mg_place_parse_reply(const char *line, struct mg_place_answer *ret, char *why, size_t whysize);

/* Connects to socket_path, sends "place" (with job=ID when job_hint is a
 * valid id, and budget=BYTES when budget is neither 0 nor unlimited: what
 * the run hands out, which decides what the caller's cgroup keeps of the
 * job), waits at most timeout_ms for the reply. A memguardd older than
 * budgets refuses the request as bad: it is asked once more without one,
 * and ret->budget_refused says so. Returns 0, or -errno with a one-line
 * reason in why (the caller then runs degraded). */
int mg_place_ask(const char *socket_path, const char *job_hint, uint64_t budget, int timeout_ms,
                 struct mg_place_answer *ret, char *why, size_t whysize);
