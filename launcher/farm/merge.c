/* Merging joblogs: memguard report FILE... (merge.h). */
#include "farm/merge.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "farm/sizing.h"
#include "memguard/metrics.h"
#include "report/svg.h"
#include "memguard/log.h"
#include "memguard/units.h"
#include "memguard/util.h"
#include "options.h"
#include "report/report.h"

int mg_merge_joblogs(const struct mg_joblog_entry *e, size_t n, struct mg_merged *ret)
{
	size_t max = 0;

	*ret = (struct mg_merged){0};
	for (size_t i = 0; i < n; i++)
		if (e[i].seq > max)
			max = e[i].seq;
	if (!(ret->tasks = calloc(max ? max : 1, sizeof(*ret->tasks))))
		return -ENOMEM;
	ret->ntasks = max;
	for (size_t i = 0; i < n; i++) {
		struct mg_merged_task *t = &ret->tasks[e[i].seq - 1];
		bool ok = strcmp(e[i].outcome, "ok") == 0;
		if (t->last && strcmp(t->last->command, e[i].command) != 0 && !t->conflict) {
			t->conflict = true;
			ret->conflicts++;
		}
		t->attempts++;
		if (ok || (!t->ok && (!t->last || e[i].attempt >= t->last->attempt)))
			t->last = &e[i];
		t->ok = t->ok || ok;
		if (strcmp(e[i].outcome, "oom_killed") == 0 ||
		    strcmp(e[i].outcome, "killed_by_memguardd") == 0 ||
		    strcmp(e[i].outcome, "killed_by_watchdog") == 0)
			ret->memory_kills++;
	}
	for (size_t k = 0; k < max; k++) {
		const struct mg_merged_task *t = &ret->tasks[k];
		if (!t->last)
			continue;
		ret->seen++;
		ret->retries += t->attempts - 1;
		if (t->ok)
			ret->ok++;
		else
			ret->failed++;
	}
	return 0;
}

void mg_merge_done(struct mg_merged *m)
{
	free(m->tasks);
	*m = (struct mg_merged){0};
}

static void print_row(FILE *out, const struct mg_merged_task *t)
{
	const struct mg_joblog_entry *e = t->last;
	char peak[MG_SIZE_STRLEN], share[MG_SIZE_STRLEN], ps[2 * MG_SIZE_STRLEN + 4], command[60 * 4 + 8];

	snprintf(ps, sizeof(ps), "%s / %s", e->peak_known ? mg_size_format(e->peak, peak) : "?",
	         mg_size_format(e->share, share));
	/* An older joblog may hold control bytes raw: none reaches the terminal. */
	fprintf(out, "%6lu  %8u  %-20s %21s  %-12s  %s\n", e->seq, t->attempts, e->outcome, ps, e->host,
	        mg_report_shown(e->command, 60, command, sizeof(command)));
}

/* The sizing advice of the tasks done (their last, ok, attempt's peak) and
 * the share of first attempts. Returns 0, or -ENODATA (no peak) or -ENOMEM. */
static int merged_sizing(const struct mg_merged *m, struct mg_sizing *ret, uint64_t *ret_share)
{
	_cleanup_free_ uint64_t *peaks = calloc(m->ntasks ? m->ntasks : 1, sizeof(*peaks));
	size_t k = 0;

	if (!peaks)
		return -ENOMEM;
	*ret_share = 0;
	for (size_t i = 0; i < m->ntasks; i++) {
		const struct mg_joblog_entry *e = m->tasks[i].last;
		if (e && e->attempt == 1 && !*ret_share)
			*ret_share = e->share;
		if (e && m->tasks[i].ok && e->peak_known)
			peaks[k++] = e->peak;
	}
	return mg_sizing_advise(peaks, k, 0, 0, ret);
}

/* The merged summary: the sums, the failed tasks, the sizing advice. */
static void print_summary(const struct mg_merged *m, int nfiles, FILE *out)
{
	fprintf(out,
	        "memguard: %zu task%s in %d joblog%s: %zu done, %zu failed; %zu retr%s, %zu killed for "
	        "memory\n",
	        m->seen, m->seen == 1 ? "" : "s", nfiles, nfiles == 1 ? "" : "s", m->ok, m->failed,
	        m->retries, m->retries == 1 ? "y" : "ies", m->memory_kills);
	if (m->seen < m->ntasks)
		fprintf(out, "memguard: %zu seq%s up to %zu have no line: not run yet, or cut off\n",
		        m->ntasks - m->seen, m->ntasks - m->seen == 1 ? "" : "s", m->ntasks);
	if (m->conflicts)
		fprintf(out,
		        "memguard: warning: %zu seq%s ran different commands in these joblogs: joblogs of "
		        "different "
		        "task files?\n",
		        m->conflicts, m->conflicts == 1 ? "" : "s");
	if (m->failed) {
		fprintf(out, "%6s  %8s  %-20s %21s  %-12s  %s\n", "seq", "attempts", "outcome",
		        "peak / share", "host", "command");
		for (size_t k = 0; k < m->ntasks; k++)
			if (m->tasks[k].last && !m->tasks[k].ok)
				print_row(out, &m->tasks[k]);
	}
	struct mg_sizing z;
	uint64_t share = 0;
	if (merged_sizing(m, &z, &share) == 0) {
		char a[MG_SIZE_STRLEN], b[MG_SIZE_STRLEN], c[MG_SIZE_STRLEN], d[MG_SIZE_STRLEN],
		        s[MG_SIZE_STRLEN];
		fprintf(out,
		        "memguard: sizing: the peaks of the %zu task%s done: median %s, 95th percentile %s, "
		        "max %s%s%s%s; "
		        "--mem-per-task %s would fit them all with %u%% to spare\n",
		        z.n, z.n == 1 ? "" : "s", mg_size_format(z.median, a), mg_size_format(z.p95, b),
		        mg_size_format(z.max, c), share ? ", against a " : "",
		        share ? mg_size_format(share, s) : "", share ? " share" : "",
		        mg_size_format(z.suggest_share, d), MG_SIZING_HEADROOM_PERCENT);
	}
}

/* --svg FILE: the histogram of the peaks (report/svg.c), written atomically.
 * Returns 0, or -errno (said). */
static int write_svg(const struct mg_merged *m, const char *path)
{
	_cleanup_free_ struct mg_svg_task *tasks = calloc(m->seen ? m->seen : 1, sizeof(*tasks));
	struct mg_svg_input in = {.tasks = tasks};
	struct mg_sizing z;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	if (!tasks)
		return log_err("out of memory for the picture"), -ENOMEM;
	for (size_t i = 0; i < m->ntasks; i++) {
		const struct mg_joblog_entry *e = m->tasks[i].last;
		if (!e)
			continue;
		if (!e->peak_known) {
			in.unknown++;
			continue;
		}
		tasks[in.n++] = (struct mg_svg_task){.peak = e->peak, .failed = !m->tasks[i].ok};
	}
	if (merged_sizing(m, &z, &in.share) == 0)
		in.advice = z.suggest_share;
	if (!(f = open_memstream(&text, &len)))
		return mg_log_errno(LOG_ERR, -errno, "cannot draw the picture %s: %m", path);
	r = mg_svg_histogram(&in, f);
	if (fclose(f) != 0 && r >= 0)
		r = -errno;
	if (r >= 0)
		r = mg_atomic_write(path, text, len, 0644, false);
	free(text);
	return r < 0 ? mg_log_errno(LOG_ERR, r, "cannot write the picture %s: %m", path) : 0;
}

int mg_report_joblogs_main(int argc, char **argv, FILE *out)
{
	_cleanup_free_ struct mg_joblog_entry *e = NULL;
	_cleanup_free_ char **texts = calloc(argc > 1 ? (size_t)argc : 1, sizeof(char *));
	struct mg_merged m;
	size_t n = 0;
	char err[512];
	int status = MG_EXIT_USAGE, r;

	const char *svg = NULL;

	/* --svg FILE or --svg=FILE first, then the joblogs. */
	if (argc > 1 && strncmp(argv[1], "--svg", 5) == 0 && (argv[1][5] == '=' || !argv[1][5])) {
		svg = argv[1][5] ? argv[1] + 6 : argc > 2 ? argv[2] : "";
		int used = argv[1][5] ? 1 : 2;
		if (!*svg) {
			log_err("--svg needs a file name: memguard report --svg FILE JOBLOG...");
			return MG_EXIT_USAGE;
		}
		argv[used] = argv[0];
		argv += used;
		argc -= used;
	}
	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		fputs("Usage: memguard report [--svg FILE] JOBLOG...\n"
		      "Merge the joblogs of a sweep (one per node: sweep.log.*) into one summary:\n"
		      "the failed tasks, the sums, and the sizing advice. --svg FILE also draws the\n"
		      "peaks as a histogram, the failed tasks marked, the share and the advice as\n"
		      "lines. Exit status 0 when every task is done, 1 when some failed, 125 when a\n"
		      "joblog cannot be read or the picture cannot be written.\n",
		      argc < 2 ? stderr : out);
		return argc < 2 ? MG_EXIT_USAGE : MG_EXIT_OK;
	}
	if (!texts)
		return log_err("out of memory"), MG_EXIT_USAGE;
	for (int i = 1; i < argc; i++) {
		ssize_t len = mg_read_file_max(argv[i], (size_t)1 << 30, &texts[i - 1]);
		if (len < 0) {
			mg_log_errno(LOG_ERR, (int)len, "cannot read the joblog %s: %m", argv[i]);
			goto out;
		}
		if (strlen(texts[i - 1]) != (size_t)len) {
			log_err("the joblog %s holds a NUL byte: not a joblog", argv[i]);
			goto out;
		}
		if ((r = mg_joblog_parse(texts[i - 1], argv[i], &e, &n, err, sizeof(err))) < 0) {
			log_err("%s", r == -ENOMEM ? "out of memory" : err);
			goto out;
		}
	}
	if (mg_merge_joblogs(e, n, &m) < 0) {
		log_err("out of memory merging %zu joblog lines", n);
		goto out;
	}
	print_summary(&m, argc - 1, out);
	status = svg && write_svg(&m, svg) < 0 ? MG_EXIT_USAGE : m.failed ? 1 : MG_EXIT_OK;
	mg_merge_done(&m);
out:
	for (int i = 0; i < argc - 1; i++)
		free(texts[i]);
	return status;
}
