/* The joblog's lines, written and read back, and the resume plan (joblog.h). */
#include "farm/joblog.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "farm/schedule.h"
#include "report/memreason.h"
#include "report/metrics.h"
#include "report/report.h"

const char *mg_attempt_outcome(const struct mg_task *t)
{
	const char *o = mg_task_outcome(t);

	if (strcmp(o, "failed") != 0 && strcmp(o, "killed_by_signal") != 0)
		return o;
	/* Memguard's own shutdown explains a failure before a memory limit does. */
	if (t->interrupted)
		return "interrupted";
	enum mg_memory_end end = mg_task_memory_end(t);
	if (end == MG_MEMORY_END_LIKELY || end == MG_MEMORY_END_POSSIBLE)
		return "near_limit";
	return o;
}

bool mg_outcome_unfinished(const char *o)
{
	return strcmp(o, "interrupted") == 0 || strcmp(o, "not_started") == 0 ||
	       strcmp(o, "killed_after_grace") == 0 || strcmp(o, "killed_on_second_signal") == 0;
}

bool mg_outcome_for_memory(const char *o)
{
	return strcmp(o, "oom_killed") == 0 || strcmp(o, "killed_by_memguardd") == 0 ||
	       strcmp(o, "killed_by_watchdog") == 0 || strcmp(o, "near_limit") == 0;
}

char *mg_joblog_command(char *const *argv)
{
	size_t len = 1;

	for (size_t i = 0; argv[i]; i++)
		len += 4 * strlen(argv[i]) + 1;
	char *buf = malloc(len), *w = buf;
	if (!buf)
		return NULL;
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			*w++ = ' ';
		for (const unsigned char *p = (const unsigned char *)argv[i]; *p; p++) {
			const char *esc = *p == '\\'   ? "\\\\"
			                  : *p == '\t' ? "\\t"
			                  : *p == '\n' ? "\\n"
			                  : *p == '\r' ? "\\r"
			                               : NULL;
			if (esc) {
				memcpy(w, esc, 2);
				w += 2;
			} else if (*p < 0x20 || *p == 0x7f) {
				w += sprintf(w, "\\x%02x", *p);
			} else {
				*w++ = (char)*p;
			}
		}
	}
	*w = '\0';
	return buf;
}

/* The next byte a Command text stands for, and where the one after starts. */
static int unescaped(const char **p)
{
	const char *s = *p;
	static const char hex[] = "0123456789abcdef";

	if (s[0] != '\\' || !s[1]) {
		*p = s + 1;
		return (unsigned char)s[0];
	}
	*p = s + 2;
	switch (s[1]) {
	case 't':
		return '\t';
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 'x':
		if (s[2] && s[3] && strchr(hex, s[2]) && strchr(hex, s[3])) {
			*p = s + 4;
			return (int)((strchr(hex, s[2]) - hex) * 16 + (strchr(hex, s[3]) - hex));
		}
		return 'x' | 0x100; /* "\x" without its digits: not what any memguard wrote */
	default:
		return (unsigned char)s[1];
	}
}

bool mg_joblog_command_equal(const char *a, const char *b)
{
	while (*a && *b)
		if (unescaped(&a) != unescaped(&b))
			return false;
	return !*a && !*b;
}

void mg_joblog_entry_of(const struct mg_task *t, const char *host, const char *command,
                        struct mg_joblog_entry *ret)
{
	bool ran = t->exited && !t->exec_errno && !t->spawn_errno;

	*ret = (struct mg_joblog_entry){
	        .seq = (unsigned long)t->index + 1,
	        .host = host,
	        .start = (double)t->start_wall_usec / 1e6,
	        .runtime = t->end_usec > t->start_usec ? (double)(t->end_usec - t->start_usec) / 1e6 : 0.0,
	        .exitval = -1,
	        .share = t->share,
	        .peak = t->peak,
	        .peak_known = t->peak_known,
	        .oom_kills = t->events.oom_kill,
	        .outcome = mg_attempt_outcome(t),
	        .attempt = t->attempt ? t->attempt : 1,
	        .command = command,
	};
	if (t->spawn_errno || t->exec_errno || (t->exited && WIFEXITED(t->wait_status)))
		ret->exitval = mg_task_exit_status(t);
	else if (ran && WIFSIGNALED(t->wait_status)) {
		ret->exitval = 0;
		ret->signal = WTERMSIG(t->wait_status);
	}
}

char *mg_joblog_format(const struct mg_joblog_entry *e)
{
	char peak[24], *line;

	if (e->peak_known)
		snprintf(peak, sizeof(peak), "%" PRIu64, e->peak);
	else
		snprintf(peak, sizeof(peak), "-");
	/* GNU parallel's widths: Starttime %.3f, JobRuntime %10.3f. */
	if (asprintf(&line, "%lu\t%s\t%.3f\t%10.3f\t0\t0\t%d\t%d\t%" PRIu64 "\t%s\t%" PRIu64 "\t%s\t%u\t%s\n",
	             e->seq, e->host, e->start, e->runtime, e->exitval, e->signal, e->share, peak,
	             e->oom_kills, e->outcome, e->attempt, e->command) < 0)
		return NULL;
	return line;
}

static int parse_ul(const char *s, unsigned long long max, unsigned long long *ret)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EBADMSG;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -EBADMSG;
	*ret = v;
	return 0;
}

static int parse_int(const char *s, int *ret)
{
	unsigned long long v;
	bool neg = *s == '-';

	if (parse_ul(s + neg, 1u << 20, &v) < 0)
		return -EBADMSG;
	*ret = neg ? -(int)v : (int)v;
	return 0;
}

static int parse_seconds(const char *s, double *ret)
{
	char *end;

	while (*s == ' ')
		s++;
	if (*s < '0' || *s > '9')
		return -EBADMSG;
	*ret = strtod(s, &end);
	return *end ? -EBADMSG : 0;
}

int mg_joblog_parse_line(char *line, struct mg_joblog_entry *ret, const char **why)
{
	char *f[MG_JOBLOG_COLUMNS];
	unsigned long long v;
	size_t n = 0;

	/* Command is last and may hold tabs of its own: split the others off. */
	for (char *p = line; n < MG_JOBLOG_COLUMNS - 1; n++) {
		char *tab = strchr(p, '\t');
		if (!tab)
			return *why = "fewer columns than the header's 14", -EBADMSG;
		*tab = '\0';
		f[n] = p;
		p = tab + 1;
		f[n + 1] = p;
	}
	*ret = (struct mg_joblog_entry){.host = f[1], .outcome = f[11], .command = f[13]};
	if (parse_ul(f[0], ULONG_MAX, &v) < 0 || v == 0)
		return *why = "Seq is not a number from 1", -EBADMSG;
	ret->seq = (unsigned long)v;
	if (parse_seconds(f[2], &ret->start) < 0 || parse_seconds(f[3], &ret->runtime) < 0)
		return *why = "Starttime or JobRuntime is not a number of seconds", -EBADMSG;
	if (parse_int(f[6], &ret->exitval) < 0 || parse_int(f[7], &ret->signal) < 0)
		return *why = "Exitval or Signal is not a number", -EBADMSG;
	if (parse_ul(f[8], UINT64_MAX, &v) < 0)
		return *why = "Share is not a number of bytes", -EBADMSG;
	ret->share = v;
	if (strcmp(f[9], "-") != 0) {
		if (parse_ul(f[9], UINT64_MAX, &v) < 0)
			return *why = "Peak is neither a number of bytes nor -", -EBADMSG;
		ret->peak = v;
		ret->peak_known = true;
	}
	if (parse_ul(f[10], UINT64_MAX, &v) < 0)
		return *why = "OOMKills is not a number", -EBADMSG;
	ret->oom_kills = v;
	if (!*f[11] || strpbrk(f[11], " "))
		return *why = "Outcome is not one word", -EBADMSG;
	if (parse_ul(f[12], 1u << 20, &v) < 0 || v == 0)
		return *why = "Attempt is not a number from 1", -EBADMSG;
	ret->attempt = (unsigned)v;
	return 0;
}

int mg_joblog_parse(char *text, const char *name, struct mg_joblog_entry **entries, size_t *n, char *err,
                    size_t errsize)
{
	size_t header = strlen(MG_JOBLOG_HEADER), lineno = 1;

	if (!*text)
		return 0; /* created, nothing written yet */
	if (strncmp(text, MG_JOBLOG_HEADER, header) != 0) {
		snprintf(err, errsize,
		         "joblog %s: line 1 is not memguard's header (Seq Host ... Attempt Command)", name);
		return -EBADMSG;
	}
	for (char *line = text + header, *next; *line; line = next) {
		struct mg_joblog_entry e;
		const char *why = "";
		char *nl = strchr(line, '\n');

		lineno++;
		if (!nl) {
			/* A node that died while writing leaves a line without its end. */
			break;
		}
		*nl = '\0';
		next = nl + 1;
		if (!*line)
			continue;
		if (strlen(line) > MG_JOBLOG_MAX_LINE || mg_joblog_parse_line(line, &e, &why) < 0) {
			snprintf(err, errsize, "joblog %s: line %zu: %s", name, lineno,
			         *why ? why : "longer than any memguard writes");
			return -EBADMSG;
		}
		e.file = name;
		e.lineno = lineno;
		if (*n % 64 == 0) {
			struct mg_joblog_entry *bigger = realloc(*entries, (*n + 64) * sizeof(**entries));
			if (!bigger)
				return -ENOMEM;
			*entries = bigger;
		}
		(*entries)[(*n)++] = e;
	}
	return 0;
}

/* The first line whose command differs from its task's, or that names a
 * task the list does not have, said in err. Returns -EBADMSG then, else 0. */
static int check_commands(const struct mg_resume_input *in, char *err, size_t errsize)
{
	const struct mg_joblog_entry *first = NULL;
	size_t differ = 0;
	const char *list = in->list ? in->list : "task file";

	for (size_t i = 0; i < in->nentries; i++) {
		const struct mg_joblog_entry *e = &in->entries[i];
		if (e->seq > in->ntasks) {
			snprintf(err, errsize,
			         "joblog %s: line %zu is task %lu, and this run has %zu tasks: the %s "
			         "changed since "
			         "the joblog was written",
			         e->file ? e->file : "", e->lineno, e->seq, in->ntasks, list);
			return -EBADMSG;
		}
		if (in->seq_only || mg_joblog_command_equal(e->command, in->commands[e->seq - 1]))
			continue;
		differ++;
		if (!first || (e->file == first->file && e->lineno < first->lineno))
			first = e;
	}
	if (!first)
		return 0;
	/* A task list edited changes some lines; a command edited, every one. */
	bool command = differ == in->nentries && in->nentries > 1;
	char why[128];
	if (command)
		snprintf(why, sizeof(why),
		         "the command changed since the joblog was written (no line of it matches)");
	else
		snprintf(why, sizeof(why), "the %s changed since the joblog was written", list);
	snprintf(err, errsize,
	         "joblog %s: line %zu: task %lu ran \"%.200s\", and this run makes it \"%.200s\": %s",
	         first->file ? first->file : "", first->lineno, first->seq, first->command,
	         in->commands[first->seq - 1], why);
	return -EBADMSG;
}

int mg_resume_decide(const struct mg_resume_input *in, struct mg_resume_plan *ret, char *err, size_t errsize)
{
	/* Per task: its ok attempt, its last attempt (the highest number), the
	 * one before, and its memory failures. */
	const struct mg_joblog_entry **last = calloc(in->ntasks ? in->ntasks : 1, sizeof(*last));
	const struct mg_joblog_entry **before = calloc(in->ntasks ? in->ntasks : 1, sizeof(*before));
	unsigned *memory = calloc(in->ntasks ? in->ntasks : 1, sizeof(*memory));
	bool *ok = calloc(in->ntasks ? in->ntasks : 1, sizeof(*ok));
	int r = 0;

	if (!last || !before || !memory || !ok) {
		r = -ENOMEM;
		goto out;
	}
	if ((r = check_commands(in, err, errsize)) < 0)
		goto out;
	for (size_t i = 0; i < in->nentries; i++) {
		const struct mg_joblog_entry *e = &in->entries[i];
		size_t k = e->seq - 1;
		if (strcmp(e->outcome, "ok") == 0)
			ok[k] = true;
		memory[k] += mg_outcome_for_memory(e->outcome);
		if (!last[k] || e->attempt >= last[k]->attempt) {
			before[k] = last[k];
			last[k] = e;
		} else if (!before[k] || e->attempt > before[k]->attempt) {
			before[k] = e;
		}
	}
	for (size_t k = 0; k < in->ntasks; k++) {
		const struct mg_joblog_entry *e = last[k];
		struct mg_resume_plan *p = &ret[k];

		*p = (struct mg_resume_plan){.run = true, .attempt = 1};
		if (!e)
			continue;
		p->prior = e->attempt;
		p->attempt = e->attempt + 1;
		p->retried = memory[k];
		if (ok[k]) {
			p->run = false;
			continue;
		}
		/* Cut off by the stop, or never started: it runs, as it would have,
		 * with the larger share of a retry. */
		if (mg_outcome_unfinished(e->outcome)) {
			if (before[k] && mg_outcome_for_memory(before[k]->outcome))
				p->share = e->share;
			continue;
		}
		/* The retry the last run had planned, when it was stopped first. */
		struct mg_retry_input retry = {
		        .for_memory = mg_outcome_for_memory(e->outcome),
		        .retries = in->retries,
		        .retried = memory[k] ? memory[k] - 1 : 0,
		        .share = e->share,
		        .peak = e->peak,
		        .peak_known = e->peak_known,
		        .budget = in->budget,
		        .page_size = in->page_size,
		};
		p->share = mg_retry_share(&retry);
		if (p->share) {
			p->retried = retry.retried + 1;
			continue;
		}
		p->failed_before = true;
		if (in->mode != MG_RESUME_FAILED) {
			p->run = false;
			continue;
		}
		/* Run again by request: a memory failure with its larger share. */
		retry.retried = 0;
		retry.retries = 1;
		p->share = mg_retry_share(&retry);
		p->retried = 0;
	}
out:
	free(last);
	free(before);
	free(memory);
	free(ok);
	return r;
}
