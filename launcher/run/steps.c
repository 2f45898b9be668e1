/* Each task a Slurm job step: the allocation, the srun command line, the
 * helper's records (steps.h). */
#include "run/steps.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "memguard/units.h"
#include "memguard/util.h"
#include "run/budget.h"
#include "run/spawn.h"
#include "task.h"

#define HOSTLIST_MAX 65536

int mg_steps_available(char *const envp[], char *why, size_t whysize)
{
	const char *step = mg_env_get(envp, "SLURM_STEP_ID") ?: mg_env_get(envp, "SLURM_STEPID");

	if (!mg_env_get(envp, "SLURM_JOB_ID")) {
		snprintf(why, whysize, "not in a Slurm job (no SLURM_JOB_ID)");
		return 0;
	}
	if (step) {
		snprintf(why, whysize,
		         "already inside Slurm step %s.%s: a step of its own would wait for what this one "
		         "holds",
		         mg_env_get(envp, "SLURM_JOB_ID"), step);
		return 0;
	}
	return 1;
}

void mg_steps_names_free(char **names)
{
	for (size_t i = 0; names && names[i]; i++)
		free(names[i]);
	free(names);
}

struct names {
	char **v;
	size_t n, cap;
};

static int names_add(struct names *l, const char *name, size_t len)
{
	if (l->n + 1 >= HOSTLIST_MAX)
		return -E2BIG;
	if (l->n + 2 > l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		char **bigger = realloc(l->v, cap * sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		l->v = bigger;
		l->cap = cap;
	}
	if (!(l->v[l->n] = strndup(name, len)))
		return -ENOMEM;
	l->v[++l->n] = NULL;
	return 0;
}

static int parse_number(const char *s, size_t len, unsigned long *ret)
{
	char buf[16];
	uint64_t v;

	if (len == 0 || len >= sizeof(buf) || strspn(s, "0123456789") < len)
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (mg_parse_u64(buf, &v) < 0 || v > 999999999)
		return -EINVAL;
	*ret = (unsigned long)v;
	return 0;
}

/* Expands one host expression (no comma outside brackets) of len bytes:
 * prefix, then each value of the first bracket group, then the rest. */
static int expand_one(const char *s, size_t len, char *prefix, size_t plen, struct names *out)
{
	const char *open = memchr(s, '[', len), *close;

	if (memchr(s, ']', open ? (size_t)(open - s) : len))
		return -EINVAL;
	if (!open) {
		if (plen + len >= 256)
			return -EINVAL;
		memcpy(prefix + plen, s, len);
		return names_add(out, prefix, plen + len);
	}
	close = memchr(open, ']', len - (size_t)(open - s));
	if (!close || close == open + 1 || plen + (size_t)(open - s) >= 200)
		return -EINVAL;
	memcpy(prefix + plen, s, (size_t)(open - s));
	plen += (size_t)(open - s);
	for (const char *r = open + 1; r < close;) {
		const char *comma = memchr(r, ',', (size_t)(close - r)) ?: close;
		const char *dash = memchr(r, '-', (size_t)(comma - r));
		unsigned long lo, hi;
		size_t width = (size_t)((dash ? dash : comma) - r);
		int e;

		if ((e = parse_number(r, width, &lo)) < 0 ||
		    (e = parse_number(dash ? dash + 1 : r, dash ? (size_t)(comma - dash - 1) : width, &hi)) <
		            0)
			return e;
		if (hi < lo || hi - lo >= HOSTLIST_MAX)
			return hi < lo ? -EINVAL : -E2BIG;
		for (unsigned long v = lo; v <= hi; v++) {
			/* A leading zero fixes the width: node[01-10]. */
			int n = snprintf(prefix + plen, 32, "%0*lu", r[0] == '0' ? (int)width : 1, v);
			if ((e = expand_one(close + 1, len - (size_t)(close + 1 - s), prefix,
			                    plen + (size_t)n, out)) < 0)
				return e;
		}
		r = comma + (comma < close);
	}
	return 0;
}

int mg_hostlist_expand(const char *expr, char ***ret)
{
	struct names out = {0};
	char prefix[256];
	int r = 0;

	if (!expr || !*expr)
		return -EINVAL;
	for (const char *s = expr; r >= 0 && *s;) {
		/* The next comma outside brackets ends this expression. */
		const char *e = s;
		int depth = 0;
		for (; *e && (*e != ',' || depth); e++)
			depth += *e == '[' ? 1 : *e == ']' ? -1 : 0;
		if (e == s || depth)
			r = -EINVAL;
		else
			r = expand_one(s, (size_t)(e - s), prefix, 0, &out);
		s = *e ? e + 1 : e;
		if (r >= 0 && *e && !*s)
			r = -EINVAL; /* a trailing comma */
	}
	if (r < 0) {
		mg_steps_names_free(out.v);
		return r;
	}
	*ret = out.v;
	return (int)out.n;
}

int mg_countlist_expand(const char *expr, unsigned *ret, size_t n)
{
	size_t at = 0;

	for (const char *s = expr; *s;) {
		unsigned long count, times = 1;
		size_t len = strspn(s, "0123456789");

		if (parse_number(s, len, &count) < 0)
			return -EINVAL;
		s += len;
		if (*s == '(') {
			if (s[1] != 'x' || (len = strspn(s + 2, "0123456789")) == 0 || s[2 + len] != ')' ||
			    parse_number(s + 2, len, &times) < 0)
				return -EINVAL;
			s += len + 3;
		}
		if (times > n - at)
			return -EINVAL;
		for (unsigned long i = 0; i < times; i++)
			ret[at++] = (unsigned)count;
		if (*s == ',' && s[1])
			s++;
		else if (*s)
			return -EINVAL;
	}
	return at == n ? 0 : -EINVAL;
}

static int fail(char *err, size_t errsize, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errsize, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errsize, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int env_unsigned(char *const envp[], const char *name, unsigned long *ret)
{
	const char *v = mg_env_get(envp, name);
	uint64_t n;

	if (!v)
		return 0;
	if (mg_parse_u64(v, &n) < 0 || n > UINT32_MAX)
		return -EINVAL;
	*ret = (unsigned long)n;
	return 1;
}

void mg_steps_alloc_done(struct mg_steps_alloc *a)
{
	free(a->nodes);
	a->nodes = NULL;
	a->nnodes = 0;
}

int mg_steps_alloc_from_env(char *const envp[], struct mg_steps_alloc *ret, char *err, size_t errsize)
{
	const char *job = mg_env_get(envp, "SLURM_JOB_ID");
	const char *list = mg_env_get(envp, "SLURM_JOB_NODELIST") ?: mg_env_get(envp, "SLURM_NODELIST");
	const char *cpus = mg_env_get(envp, "SLURM_JOB_CPUS_PER_NODE");
	const char *self = mg_env_get(envp, "SLURMD_NODENAME");
	unsigned long per_node = 0, per_cpu = 0, on_node = 0;
	_cleanup_free_ unsigned *counts = NULL;
	char **names = NULL;
	int n, r;

	*ret = (struct mg_steps_alloc){.self = SIZE_MAX};
	if (!job || !*job || strlen(job) >= sizeof(ret->job_id))
		return fail(err, errsize, "not in a Slurm job: SLURM_JOB_ID is not set");
	snprintf(ret->job_id, sizeof(ret->job_id), "%s", job);
	if (!list)
		return fail(err, errsize, "Slurm job %s: SLURM_JOB_NODELIST is not set", job);
	if ((n = mg_hostlist_expand(list, &names)) <= 0)
		return n == -ENOMEM
		               ? -ENOMEM
		               : fail(err, errsize, "SLURM_JOB_NODELIST=%s is not a Slurm host list", list);
	if (!(counts = calloc((size_t)n, sizeof(*counts))) ||
	    !(ret->nodes = calloc((size_t)n, sizeof(*ret->nodes)))) {
		mg_steps_names_free(names);
		return -ENOMEM;
	}
	ret->nnodes = (size_t)n;
	for (int i = 0; i < n; i++) {
		snprintf(ret->nodes[i].name, sizeof(ret->nodes[i].name), "%s", names[i]);
		if (self && strcmp(names[i], self) == 0)
			ret->self = (size_t)i;
	}
	mg_steps_names_free(names);

	/* CPUs per node; a single-node job may only say SLURM_CPUS_ON_NODE. */
	r = cpus ? mg_countlist_expand(cpus, counts, (size_t)n) : -ENOENT;
	if (r == -EINVAL) {
		mg_steps_alloc_done(ret);
		return fail(err, errsize, "SLURM_JOB_CPUS_PER_NODE=%s does not match the %d nodes of %s",
		            cpus, n, list);
	}
	if (r < 0 && (env_unsigned(envp, "SLURM_CPUS_ON_NODE", &on_node) <= 0 || on_node == 0))
		on_node = 1;
	if ((r = env_unsigned(envp, "SLURM_MEM_PER_NODE", &per_node)) < 0 ||
	    (r == 0 && env_unsigned(envp, "SLURM_MEM_PER_CPU", &per_cpu) < 0)) {
		mg_steps_alloc_done(ret);
		return fail(err, errsize, "SLURM_MEM_PER_NODE or SLURM_MEM_PER_CPU is not a number of MiB");
	}
	for (int i = 0; i < n; i++) {
		struct mg_step_node *node = &ret->nodes[i];
		node->cpus = cpus ? counts[i] : (unsigned)on_node;
		node->mem = per_node  ? (uint64_t)per_node << 20
		            : per_cpu ? (uint64_t)per_cpu * node->cpus << 20
		                      : MG_SIZE_UNLIMITED;
	}
	return 0;
}

uint64_t mg_steps_node_budget(uint64_t usable, uint64_t held, unsigned parallel)
{
	uint64_t overhead = (uint64_t)parallel * MG_STEP_OVERHEAD;

	if (usable == MG_SIZE_UNLIMITED || usable <= held || usable - held <= overhead)
		return 0;
	return mg_steps_share(usable - held - overhead);
}

int mg_steps_plan(const struct mg_steps_plan_input *in, struct mg_node_pool *ret, char *err, size_t errsize)
{
	const struct mg_steps_alloc *a = in->alloc;
	size_t here = a->self < a->nnodes ? a->self : 0, n = in->everywhere ? a->nnodes : 1;
	unsigned sruns = in->parallel * (unsigned)n;
	char size[MG_SIZE_STRLEN], min[MG_SIZE_STRLEN];

	for (size_t p = 0; p < n; p++) {
		size_t i = in->everywhere ? p : here;
		const struct mg_step_node *node = &a->nodes[i];
		bool ours = i == a->self;
		/* The node's CPUs split evenly over the steps at once there. */
		unsigned cpus = in->cpus_option             ? in->cpus_option
		                : node->cpus > in->parallel ? node->cpus / in->parallel
		                                            : 1;
		if (cpus > node->cpus) {
			snprintf(err, errsize,
			         "node %s: a step of %u CPUs does not fit in the job's %u there", node->name,
			         cpus, node->cpus);
			return -ERANGE;
		}
		uint64_t usable = ours ? in->usable_here : node->mem;
		if (!ours && in->mem_option < usable)
			usable = in->mem_option;
		if (usable == MG_SIZE_UNLIMITED)
			usable = in->usable_here;
		uint64_t budget =
		        mg_steps_node_budget(usable, ours ? in->held_here : 0, ours ? sruns : in->parallel);
		uint64_t share = mg_steps_share(in->mem_per_task ? in->mem_per_task : budget / in->parallel);
		if (share == 0 || share < in->min_share || (uint64_t)in->parallel * share > budget) {
			snprintf(err, errsize,
			         "node %s: %s for %u steps at once leaves each less than %s (a step costs "
			         "the job "
			         "%llu MiB beside its share)",
			         node->name, mg_size_format(usable, size), in->parallel,
			         mg_size_format(in->mem_per_task ? in->mem_per_task
			                        : in->min_share  ? in->min_share
			                                         : MG_STEP_UNIT,
			                        min),
			         (unsigned long long)(MG_STEP_OVERHEAD >> 20));
			return -ERANGE;
		}
		ret[p] = (struct mg_node_pool){.name = node->name,
		                               .parallel = in->parallel,
		                               .cpus = node->cpus,
		                               .step_cpus = cpus,
		                               .budget = budget,
		                               .share = share};
	}
	return (int)n;
}

static int add(char **argv, size_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int add(char **argv, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&argv[*n], fmt, ap);
	va_end(ap);
	if (r < 0) {
		argv[*n] = NULL;
		return -ENOMEM;
	}
	argv[++*n] = NULL;
	return 0;
}

char **mg_steps_srun_argv(const struct mg_step_request *req)
{
	size_t ncmd = 0, n = 0;
	char **argv;
	int r = 0;

	while (req->command[ncmd])
		ncmd++;
	if (!(argv = calloc(ncmd + 24, sizeof(*argv))))
		return NULL;
	/* --exact: only the CPUs and memory asked for, so that steps run side
	 * by side; one task on one node; its name is the task's in sacct. */
	r = add(argv, &n, "srun");
	r = r < 0 ? r : add(argv, &n, "--exact");
	r = r < 0 ? r : add(argv, &n, "--nodes=1");
	r = r < 0 ? r : add(argv, &n, "--ntasks=1");
	r = r < 0 ? r : add(argv, &n, "--cpus-per-task=%u", req->cpus);
	r = r < 0 ? r : add(argv, &n, "--mem=%" PRIu64 "M", (uint64_t)(req->share / MG_STEP_UNIT));
	r = r < 0 || !req->node ? r : add(argv, &n, "--nodelist=%s", req->node);
	r = r < 0 ? r : add(argv, &n, "--job-name=task-%u", req->seq);
	r = r < 0 ? r : add(argv, &n, "%s", req->self);
	r = r < 0 ? r : add(argv, &n, "%s", MG_STEP_SUBCOMMAND);
	r = r < 0 ? r : add(argv, &n, "--nonce=%s", req->nonce);
	r = r < 0 ? r : add(argv, &n, "--share=%" PRIu64, req->share);
	r = r < 0 ? r : add(argv, &n, "--rlimit-as=%" PRIu64, req->rlimit_as);
	r = r < 0 ? r : add(argv, &n, "--grace=%" PRIu64 "us", req->grace_usec);
	r = r < 0 ? r : add(argv, &n, "--");
	for (size_t i = 0; r >= 0 && i < ncmd; i++)
		r = add(argv, &n, "%s", req->command[i]);
	if (r < 0) {
		mg_steps_names_free(argv);
		return NULL;
	}
	return argv;
}

/* The records: key=value words after "start" or "end". */
struct field {
	const char *key;
	enum { F_U64, F_INT, F_BOOL, F_STR, F_SIZE } type;
	size_t offset, size;
};
#define FIELD(k, t, m)                                                                                       \
	{                                                                                                    \
		k, t, offsetof(struct mg_step_record, m), sizeof(((struct mg_step_record *)0)->m)            \
	}
static const struct field start_fields[] = {
        FIELD("step", F_STR, step),
        FIELD("node", F_STR, node),
        FIELD("limit", F_SIZE, limit),
};
static const struct field end_fields[] = {
        FIELD("status", F_INT, status),
        FIELD("exec_errno", F_INT, exec_errno),
        FIELD("watchdog", F_BOOL, watchdog),
        FIELD("peak", F_U64, peak),
        FIELD("peak_known", F_BOOL, peak_known),
        FIELD("peak_sampled", F_BOOL, peak_sampled),
        FIELD("as_peak", F_U64, as_peak),
        FIELD("as_peak_known", F_BOOL, as_peak_known),
        FIELD("oom", F_U64, events.oom),
        FIELD("oom_kill", F_U64, events.oom_kill),
        FIELD("oom_group_kill", F_U64, events.oom_group_kill),
        FIELD("max", F_U64, events.max),
        FIELD("high", F_U64, events.high),
};

static int set_field(struct mg_step_record *rec, const struct field *f, const char *v)
{
	char *at = (char *)rec + f->offset;
	uint64_t n;

	switch (f->type) {
	case F_STR:
		if (strlen(v) >= f->size)
			return -EINVAL;
		memcpy(at, v, strlen(v) + 1);
		return 0;
	case F_SIZE:
		if (strcmp(v, "max") == 0) {
			*(uint64_t *)(void *)at = MG_SIZE_UNLIMITED;
			return 0;
		}
		/* fall through */
	case F_U64:
		if (mg_parse_u64(v, &n) < 0)
			return -EINVAL;
		*(uint64_t *)(void *)at = n;
		return 0;
	case F_INT:
		if (mg_parse_u64(v, &n) < 0 || n > INT32_MAX)
			return -EINVAL;
		*(int *)(void *)at = (int)n;
		return 0;
	case F_BOOL:
		if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
			return -EINVAL;
		*(bool *)(void *)at = v[0] == '1';
		return 0;
	}
	return -EINVAL;
}

int mg_step_record_parse(const char *line, struct mg_step_record *rec)
{
	const struct field *fields;
	size_t nfields;
	char word[256];
	bool start;

	if (strncmp(line, "start ", 6) == 0 || strcmp(line, "start") == 0)
		start = true, fields = start_fields, nfields = MG_ARRAY_SIZE(start_fields);
	else if (strncmp(line, "end ", 4) == 0 || strcmp(line, "end") == 0)
		start = false, fields = end_fields, nfields = MG_ARRAY_SIZE(end_fields);
	else
		return -EINVAL;
	for (const char *p = strchr(line, ' '); p && *p;) {
		p += strspn(p, " ");
		size_t len = strcspn(p, " ");
		const char *eq = memchr(p, '=', len);
		if (len == 0)
			break;
		if (!eq || len >= sizeof(word))
			return -EINVAL;
		memcpy(word, p, len);
		word[len] = '\0';
		word[eq - p] = '\0';
		for (size_t i = 0; i < nfields; i++)
			if (strcmp(word, fields[i].key) == 0 &&
			    set_field(rec, &fields[i], word + (eq - p) + 1) < 0)
				return -EINVAL;
		p += len;
	}
	if (start)
		rec->started = true;
	else
		rec->ended = true;
	return 0;
}

const char *mg_step_record_format_start(const char *nonce, const struct mg_step_record *rec, char *buf,
                                        size_t size)
{
	char limit[24];

	if (rec->limit == MG_SIZE_UNLIMITED)
		snprintf(limit, sizeof(limit), "max");
	else
		snprintf(limit, sizeof(limit), "%" PRIu64, rec->limit);
	snprintf(buf, size, "%s %s start step=%s node=%s limit=%s\n", MG_STEP_MARK, nonce,
	         rec->step[0] ? rec->step : "?", rec->node[0] ? rec->node : "?", limit);
	return buf;
}

const char *mg_step_record_format_end(const char *nonce, const struct mg_step_record *rec, char *buf,
                                      size_t size)
{
	const struct mg_memory_events *e = &rec->events;

	snprintf(buf, size,
	         "%s %s end status=%d exec_errno=%d watchdog=%d peak=%" PRIu64
	         " peak_known=%d peak_sampled=%d "
	         "as_peak=%" PRIu64 " as_peak_known=%d oom=%" PRIu64 " oom_kill=%" PRIu64
	         " oom_group_kill=%" PRIu64 " max=%" PRIu64 " high=%" PRIu64 "\n",
	         MG_STEP_MARK, nonce, rec->status, rec->exec_errno, rec->watchdog, rec->peak, rec->peak_known,
	         rec->peak_sampled, rec->as_peak, rec->as_peak_known, e->oom, e->oom_kill, e->oom_group_kill,
	         e->max, e->high);
	return buf;
}

/* The record's start in data[0..len): the mark, a space and our nonce.
 * NULL when not there. */
static const char *find_record(const struct mg_step_stream *st, const char *data, size_t len)
{
	char mark[sizeof(MG_STEP_MARK) + MG_STEP_NONCE_LEN + 2];
	size_t mlen = (size_t)snprintf(mark, sizeof(mark), "%s %s ", MG_STEP_MARK, st->nonce);

	for (const char *p = data; (p = memchr(p, MG_STEP_MARK[0], len - (size_t)(p - data))); p++)
		if ((size_t)(data + len - p) >= mlen && memcmp(p, mark, mlen) == 0)
			return p;
	return NULL;
}

/* Passes text on, and notes srun's verdict on a step the kernel OOM-killed
 * in ("srun: error: NODE: task 0: Out Of Memory") as its line ends. */
static void pass_on(struct mg_step_stream *st, const char *data, size_t len, mg_step_out_fn out, void *ctx)
{
	static const char oom[] = ": Out Of Memory", srun[] = "srun: error: ";

	for (size_t i = 0; i < len; i++) {
		if (data[i] != '\n') {
			if (st->nline < sizeof(st->line))
				st->line[st->nline++] = data[i];
			continue;
		}
		if (st->nline >= sizeof(srun) - 1 && memcmp(st->line, srun, sizeof(srun) - 1) == 0 &&
		    memmem(st->line, st->nline, oom, sizeof(oom) - 1))
			st->rec.srun_oom = true;
		st->nline = 0;
	}
	out(ctx, data, len);
}

/* One complete line (with its newline): a record, or text to pass on. */
static void take_line(struct mg_step_stream *st, const char *line, size_t len, mg_step_out_fn out, void *ctx)
{
	const char *rec = find_record(st, line, len);
	char text[sizeof(st->held) + 1];
	size_t skip = strlen(MG_STEP_MARK) + 1 + strlen(st->nonce) + 1;

	if (!rec) {
		pass_on(st, line, len, out, ctx);
		return;
	}
	/* A task's last words without a newline, then the record. */
	if (rec > line)
		pass_on(st, line, (size_t)(rec - line), out, ctx);
	size_t rlen = len - (size_t)(rec - line) - skip;
	if (rlen > 0 && rec[skip + rlen - 1] == '\n')
		rlen--;
	if (rlen >= sizeof(text)) {
		st->bad = true;
		return;
	}
	memcpy(text, rec + skip, rlen);
	text[rlen] = '\0';
	if (mg_step_record_parse(text, &st->rec) < 0)
		st->bad = true;
	/* srun says its verdict after the helper's end; before, such a line was the task's own. */
	else if (st->rec.ended)
		st->rec.srun_oom = false;
}

void mg_step_stream_feed(struct mg_step_stream *st, const char *data, size_t len, mg_step_out_fn out,
                         void *ctx)
{
	while (len > 0) {
		size_t take = sizeof(st->held) - st->nheld;
		if (take > len)
			take = len;
		memcpy(st->held + st->nheld, data, take);
		st->nheld += take;
		data += take;
		len -= take;

		/* Whole lines go now; of a partial one, only what holds no mark's
		 * first byte (a record cannot start there). */
		char *nl;
		size_t done = 0;
		while ((nl = memchr(st->held + done, '\n', st->nheld - done))) {
			size_t l = (size_t)(nl - (st->held + done)) + 1;
			take_line(st, st->held + done, l, out, ctx);
			done += l;
		}
		const char *mark = memchr(st->held + done, MG_STEP_MARK[0], st->nheld - done);
		size_t keep_from = mark ? (size_t)(mark - st->held) : st->nheld;
		/* A full buffer holds no record: let it go. */
		if (done == 0 && st->nheld == sizeof(st->held))
			keep_from = st->nheld;
		if (keep_from > done)
			pass_on(st, st->held + done, keep_from - done, out, ctx);
		memmove(st->held, st->held + keep_from, st->nheld - keep_from);
		st->nheld -= keep_from;
	}
}

void mg_step_stream_finish(struct mg_step_stream *st, mg_step_out_fn out, void *ctx)
{
	if (st->nheld)
		take_line(st, st->held, st->nheld, out, ctx);
	st->nheld = 0;
}

void mg_step_apply(const struct mg_step_record *rec, int srun_status, struct mg_task *t)
{
	t->wait_status = srun_status;
	if (rec->srun_oom && t->events.oom_kill == 0)
		t->events.oom_kill = 1;
	if (!rec->ended)
		return;
	t->wait_status = rec->status;
	if (rec->exec_errno)
		t->exec_errno = rec->exec_errno;
	if (rec->peak_known) {
		t->peak = rec->peak;
		t->peak_known = true;
		t->peak_sampled = rec->peak_sampled;
	}
	if (rec->as_peak_known && (!t->as_peak_known || rec->as_peak > t->as_peak)) {
		t->as_peak = rec->as_peak;
		t->as_peak_known = true;
	}
	t->events = rec->events;
	if (rec->srun_oom && t->events.oom_kill == 0)
		t->events.oom_kill = 1;
	if (rec->watchdog)
		t->killed_by = MG_KILL_WATCHDOG;
}

int mg_steps_nonce(char out[MG_STEP_NONCE_LEN + 1])
{
	uint64_t v;

	if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
		return -errno;
	snprintf(out, MG_STEP_NONCE_LEN + 1, "%016" PRIx64, v);
	return 0;
}

int mg_steps_spawn(const struct mg_spawn_request *base, pid_t *ret_pid, int *ret_stdin, int *ret_stderr,
                   int *ret_exec_errno)
{
	struct mg_spawn_request req = *base;
	int in[2] = {-1, -1}, err[2] = {-1, -1}, r;

	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
		r = -errno;
		goto fail;
	}
	req.stdin_fd = in[0];
	req.stderr_fd = err[1];
	if ((r = mg_spawn(&req, ret_pid, ret_exec_errno)) < 0)
		goto fail;
	close(in[0]);
	close(err[1]);
	(void)fcntl(in[1], F_SETFL, O_NONBLOCK);
	(void)fcntl(err[0], F_SETFL, O_NONBLOCK);
	*ret_stdin = in[1];
	*ret_stderr = err[0];
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (err[i] >= 0)
			close(err[i]);
	}
	return r;
}
