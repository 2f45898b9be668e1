/* Whether a failed task had come near its RLIMIT_AS, memory.max or share. */
#include "report/memreason.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "memguard/procstat.h"
#include "memguard/units.h"
#include "memguard/util.h"

static bool oom_killed(const struct mg_task *t)
{
	return t->events.oom_kill > 0 || t->events.oom_group_kill > 0;
}

/* Ended by itself, and not well: a non-zero exit or a signal nobody we know
 * of sent. */
static bool failed_by_itself(const struct mg_task *t)
{
	if (t->spawn_errno || t->exec_errno || !t->exited || t->killed_by != MG_KILL_NONE || oom_killed(t))
		return false;
	return WIFSIGNALED(t->wait_status) || (WIFEXITED(t->wait_status) && WEXITSTATUS(t->wait_status) != 0);
}

static unsigned percent_of(uint64_t peak, uint64_t limit)
{
	unsigned __int128 p = (unsigned __int128)peak * 100 / limit;

	return p > 999 ? 999 : (unsigned)p;
}

static bool near(uint64_t peak, uint64_t limit)
{
	return (unsigned __int128)peak * 100 >= (unsigned __int128)limit * MG_NEAR_PERCENT;
}

bool mg_memreason_judge(const struct mg_task *t, struct mg_memreason *ret)
{
	*ret = (struct mg_memreason){.near = MG_NEAR_NONE};
	if (!failed_by_itself(t))
		return false;
	if (t->rlimit_as && t->as_peak_known && near(t->as_peak, t->rlimit_as)) {
		*ret = (struct mg_memreason){.near = MG_NEAR_RLIMIT_AS,
		                             .limit = t->rlimit_as,
		                             .peak = t->as_peak,
		                             .peak_known = true,
		                             .percent = percent_of(t->as_peak, t->rlimit_as),
		                             .at_least = true,
		                             .likely = true};
		return true;
	}
	if (t->limit && t->limit != MG_SIZE_UNLIMITED) {
		bool peak_near = t->peak_known && near(t->peak, t->limit);
		if (!peak_near && t->events.max == 0)
			return false;
		*ret = (struct mg_memreason){.near = MG_NEAR_MEMORY_MAX,
		                             .limit = t->limit,
		                             .peak = t->peak,
		                             .peak_known = t->peak_known,
		                             .percent = t->peak_known ? percent_of(t->peak, t->limit) : 0,
		                             .max_events = t->events.max};
		return true;
	}
	if (!t->in_cgroup && !t->limit && t->share && t->peak_known && near(t->peak, t->share)) {
		*ret = (struct mg_memreason){.near = MG_NEAR_SHARE_RSS,
		                             .limit = t->share,
		                             .peak = t->peak,
		                             .peak_known = true,
		                             .percent = percent_of(t->peak, t->share),
		                             .at_least = true,
		                             .likely = true};
		return true;
	}
	return false;
}

const char *mg_memreason_format(const struct mg_memreason *v, uint64_t share, char *buf, size_t size)
{
	char limit[MG_SIZE_STRLEN], sh[MG_SIZE_STRLEN], what[MG_SIZE_STRLEN * 2 + 32], hits[48] = "";

	mg_size_format(v->limit, limit);
	switch (v->near) {
	case MG_NEAR_RLIMIT_AS:
		snprintf(
		        buf, size,
		        " after reaching at least %u%% of its %s address-space limit (RLIMIT_AS): likely out "
		        "of address space (a MemoryError in Python)",
		        v->percent, limit);
		break;
	case MG_NEAR_MEMORY_MAX:
		if (share && v->limit > share)
			snprintf(what, sizeof(what), "%s limit (memory.max; a %s share)", limit,
			         mg_size_format(share, sh));
		else
			snprintf(what, sizeof(what), "%s share (memory.max)", limit);
		if (v->max_events)
			snprintf(hits, sizeof(hits), ", hit %" PRIu64 " time%s", v->max_events,
			         v->max_events == 1 ? "" : "s");
		if (v->peak_known)
			snprintf(buf, size, " after reaching %u%% of its %s%s: possibly out of memory",
			         v->percent, what, hits);
		else
			snprintf(buf, size, " after reaching its %s%s: possibly out of memory", what, hits);
		break;
	case MG_NEAR_SHARE_RSS:
		snprintf(buf, size,
		         " after reaching at least %u%% of its %s share (RSS): likely out of memory",
		         v->percent, limit);
		break;
	default:
		if (size)
			buf[0] = '\0';
		break;
	}
	return buf;
}

const char *mg_near_limit_name(enum mg_near_limit n)
{
	switch (n) {
	case MG_NEAR_RLIMIT_AS:
		return "RLIMIT_AS";
	case MG_NEAR_MEMORY_MAX:
		return "memory.max";
	case MG_NEAR_SHARE_RSS:
		return "share";
	default:
		return NULL;
	}
}

enum mg_memory_end mg_task_memory_end(const struct mg_task *t)
{
	struct mg_memreason v;

	if (t->spawn_errno || t->exec_errno || !t->exited)
		return MG_MEMORY_END_NONE;
	if (t->killed_by == MG_KILL_WATCHDOG || t->killed_by == MG_KILL_DAEMON ||
	    (t->killed_by == MG_KILL_NONE && oom_killed(t)))
		return MG_MEMORY_END_KILLED;
	if (!mg_memreason_judge(t, &v))
		return MG_MEMORY_END_NONE;
	return v.likely ? MG_MEMORY_END_LIKELY : MG_MEMORY_END_POSSIBLE;
}

const char *mg_memory_end_words(enum mg_memory_end end)
{
	switch (end) {
	case MG_MEMORY_END_KILLED:
		return "ran out of memory";
	case MG_MEMORY_END_LIKELY:
		return "likely ran out of memory";
	case MG_MEMORY_END_POSSIBLE:
		return "may have run out of memory";
	default:
		return NULL;
	}
}

/* A "Key:  N kB" field of /proc/<pid>/status in bytes. */
static int status_kib(const char *text, const char *key, uint64_t *ret)
{
	const char *p = mg_status_field(text, key);
	char *end;

	if (!p)
		return -ENODATA;
	if (*p < '0' || *p > '9')
		return -EBADMSG;
	errno = 0;
	unsigned long long kib = strtoull(p, &end, 10);
	if (errno || end == p || strncmp(end, " kB", 3) != 0 || kib > UINT64_MAX / 1024)
		return -EBADMSG;
	*ret = (uint64_t)kib * 1024;
	return 0;
}

int mg_status_vmpeak_parse(const char *text, uint64_t *ret)
{
	return status_kib(text, "VmPeak", ret);
}

int mg_status_as_parse(const char *text, uint64_t *ret_peak, uint64_t *ret_gap)
{
	uint64_t size, rss;
	int r = status_kib(text, "VmPeak", ret_peak);

	if (r < 0 || (r = status_kib(text, "VmSize", &size)) < 0 || (r = status_kib(text, "VmRSS", &rss)) < 0)
		return r;
	*ret_gap = size > rss ? size - rss : 0;
	return 0;
}

/* <procfd>/<pid>/status, into a heap text. */
static int read_status(int procfd, pid_t pid, char **ret)
{
	char name[32];
	ssize_t n;

	snprintf(name, sizeof(name), "%d/status", (int)pid);
	n = mg_read_file_at(procfd, name, ret);
	return n < 0 ? (int)n : 0;
}

int mg_proc_read_vmpeak(int procfd, pid_t pid, uint64_t *ret)
{
	_cleanup_free_ char *text = NULL;
	int r = read_status(procfd, pid, &text);

	return r < 0 ? r : mg_status_vmpeak_parse(text, ret);
}

int mg_proc_read_as(int procfd, pid_t pid, uint64_t *ret_peak, uint64_t *ret_gap)
{
	_cleanup_free_ char *text = NULL;
	int r = read_status(procfd, pid, &text);

	return r < 0 ? r : mg_status_as_parse(text, ret_peak, ret_gap);
}
