/* A sweep on GNU parallel's command line: the supervisor's hooks (sweep.h). */
#include "farm/sweep.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "farm/compose.h"
#include "farm/joblog.h"
#include "memguard/log.h"
#include "memguard/util.h"

long mg_sweep_plan(struct mg_sweep *s, const struct mg_options *o, char *const *words, char *const envp[],
                   char *err, size_t errsize)
{
	bool use_stdin = !o->input_sep && !o->narg_files;
	long n;
	int r;

	*s = (struct mg_sweep){.words = words, .quote = o->quote, .halt = o->halt, .output = {.spool = -1}};
	s->shell = mg_compose_shell(envp);
	if (o->colsep && (r = mg_inputs_set_colsep(&s->inputs, o->colsep, err, errsize)) < 0)
		return r;
	r = mg_inputs_load(&s->inputs, o->arg_files, o->narg_files, o->input_sep, o->input_words, use_stdin,
	                   err, errsize);
	if (r < 0)
		return r;
	if ((n = mg_inputs_count(&s->inputs)) < 0) {
		snprintf(err, errsize, "the inputs make more than %u tasks", MG_INPUT_MAX_JOBS);
		return n;
	}
	s->njobs = (size_t)n;
	s->has_slot = mg_compose_has_slot(words);
	if (!(s->params = calloc(s->njobs ? s->njobs : 1, sizeof(*s->params))))
		goto nomem;
	for (size_t k = 0; k < s->njobs; k++) {
		char **args;
		size_t nargs;
		if (mg_inputs_args(&s->inputs, k, &args, &nargs) < 0)
			goto nomem;
		s->params[k] = mg_compose_tag((const char *const *)args, nargs);
		mg_inputs_args_free(args, nargs);
		if (!s->params[k])
			goto nomem;
	}
	return n;
nomem:
	snprintf(err, errsize, "out of memory for %zu tasks' inputs", s->njobs);
	return -ENOMEM;
}

char *mg_sweep_line(const struct mg_sweep *s, size_t index, unsigned slot)
{
	char **args, *line;
	size_t nargs;

	if (mg_inputs_args(&s->inputs, index, &args, &nargs) < 0)
		return NULL;
	struct mg_compose_job job = {
	        .args = (const char *const *)args, .nargs = nargs, .seq = index + 1, .slot = slot};
	line = mg_compose(s->words, s->quote, &job);
	mg_inputs_args_free(args, nargs);
	return line;
}

int mg_sweep_print(const struct mg_sweep *s, bool tag, FILE *out)
{
	for (size_t k = 0; k < s->njobs; k++) {
		_cleanup_free_ char *line = mg_sweep_line(s, k, 1);
		if (!line)
			return -ENOMEM;
		fprintf(out, "%s%s%s\n", tag ? s->params[k] : "", tag ? "\t" : "", line);
	}
	return fflush(out) == 0 ? 0 : -errno;
}

int mg_sweep_start(struct mg_sweep *s, const struct mg_options *o, const size_t *indices, size_t n,
                   unsigned nslots, char **commands)
{
	enum mg_output_mode mode = o->output == MG_OUT_UNGROUP       ? MG_OUTPUT_PASS
	                           : o->output == MG_OUT_LINE_BUFFER ? MG_OUTPUT_LINE
	                                                             : MG_OUTPUT_GROUP;
	int r;

	s->commands = commands;
	s->nslots = nslots;
	if (!(s->slot_of = calloc(s->njobs ? s->njobs : 1, sizeof(*s->slot_of))) ||
	    !(s->slot_used = calloc(nslots + 1, sizeof(*s->slot_used))) ||
	    !(s->started = calloc(s->njobs ? s->njobs : 1, sizeof(*s->started))))
		return -ENOMEM;
	r = mg_output_init(&s->output, mode, o->keep_order, o->tag ? (const char *const *)s->params : NULL,
	                   s->njobs);
	if (r < 0)
		return r;
	/* -k goes past what this run does not start (a resume has it done). */
	size_t k = 0;
	for (size_t i = 0; i < s->njobs; i++) {
		if (k < n && indices[k] == i) {
			k++;
			continue;
		}
		mg_output_skip(&s->output, i);
	}
	return 0;
}

/* The lowest free slot, as parallel gives them; 0 when none is (a retry of
 * one, beside as many as there are slots, the run said no). */
static unsigned take_slot(struct mg_sweep *s)
{
	for (unsigned k = 1; k <= s->nslots; k++)
		if (!s->slot_used[k]) {
			s->slot_used[k] = true;
			return k;
		}
	return s->nslots + 1;
}

char **mg_sweep_argv(struct mg_sweep *s, const struct mg_task *t)
{
	char **argv = calloc(4, sizeof(*argv)), *line;
	unsigned slot;

	if (!s || !argv) {
		free(argv);
		return NULL;
	}
	slot = s->slot_of[t->index] ? s->slot_of[t->index] : take_slot(s);
	s->slot_of[t->index] = slot;
	if (!s->started[t->index]) {
		s->started[t->index] = true;
		s->hs.started++;
	}
	if (!(line = mg_sweep_line(s, t->index, slot)))
		goto nomem;
	/* The joblog says what ran, {%} included. */
	if (s->has_slot && s->commands) {
		char *words[] = {line, NULL}, *text = mg_joblog_command(words);
		if (!text) {
			free(line);
			goto nomem;
		}
		free(s->commands[t->index]);
		s->commands[t->index] = text;
	}
	argv[0] = strdup(s->shell);
	argv[1] = strdup("-c");
	argv[2] = line;
	if (!argv[0] || !argv[1])
		goto nomem;
	return argv;
nomem:
	for (size_t i = 0; i < 3; i++)
		free(argv[i]);
	free(argv);
	return NULL;
}

size_t mg_sweep_env(const struct mg_sweep *s, const struct mg_task *t, struct mg_env_setting *env)
{
	if (!s)
		return 0;
	env[0] = (struct mg_env_setting){.name = "PARALLEL_SEQ"};
	snprintf(env[0].value, sizeof(env[0].value), "%u", t->index + 1);
	env[1] = (struct mg_env_setting){.name = "PARALLEL_JOBSLOT"};
	snprintf(env[1].value, sizeof(env[1].value), "%u", s->slot_of[t->index]);
	return 2;
}

int mg_sweep_output(struct mg_sweep *s, const struct mg_task *t, int *out, int *err)
{
	return s ? mg_output_start(&s->output, t->index, out, err) : 0;
}

bool mg_sweep_captures(const struct mg_sweep *s)
{
	return s && s->output.mode != MG_OUTPUT_PASS;
}

void mg_sweep_feed_err(struct mg_sweep *s, const struct mg_task *t, const char *data, size_t len)
{
	if (s)
		mg_output_feed(&s->output, t->index, 1, data, len);
}

enum mg_halt_when mg_sweep_ended(struct mg_sweep *s, const struct mg_task *t, bool final)
{
	enum mg_halt_when now;

	if (!s)
		return MG_HALT_NEVER;
	if (s->slot_of[t->index] && s->slot_of[t->index] <= s->nslots)
		s->slot_used[s->slot_of[t->index]] = false;
	s->slot_of[t->index] = 0;
	mg_output_end(&s->output, t->index, final);
	if (!final)
		return MG_HALT_NEVER;
	if (!s->started[t->index]) {
		/* It could not start: a failure all the same. */
		s->started[t->index] = true;
		s->hs.started++;
	}
	now = mg_halt_job_ended(&s->halt, &s->hs, s->njobs, mg_task_exit_status(t));
	if (now == MG_HALT_NOW)
		mg_output_halt(&s->output);
	return now;
}

void mg_sweep_skip(struct mg_sweep *s, const struct mg_task *t)
{
	if (s)
		mg_output_skip(&s->output, t->index);
}

void mg_sweep_attach(struct mg_sweep *s, sd_event *e)
{
	if (s)
		mg_output_attach(&s->output, e);
}

int mg_sweep_exit_status(const struct mg_sweep *s)
{
	return mg_halt_exit_status(&s->halt, &s->hs);
}

void mg_sweep_done(struct mg_sweep *s)
{
	mg_output_done(&s->output);
	for (size_t k = 0; s->params && k < s->njobs; k++)
		free(s->params[k]);
	free(s->params);
	free(s->slot_of);
	free(s->slot_used);
	free(s->started);
	mg_inputs_done(&s->inputs);
	*s = (struct mg_sweep){.output = {.spool = -1}};
}
