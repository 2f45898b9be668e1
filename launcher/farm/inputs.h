/* GNU parallel's input sources: ::: ARGS, :::: FILES, -a FILE, and
 * standard input; several give the cross product (the last varies
 * fastest), :::+ and ::::+ link a source to the one before (job k takes
 * the kth of each, as many jobs as the shortest has). --colsep splits each
 * value into columns. The jobs and their arguments are pure functions of
 * the sources; only mg_inputs_load reads files. */
#pragma once

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

/* Bounds, as --tasks has them: a file (or standard input), one line, and
 * the jobs of the cross product. */
#define MG_INPUT_MAX_BYTES (64u << 20)
#define MG_INPUT_MAX_LINE (1u << 20)
#define MG_INPUT_MAX_JOBS (1u << 20)
/* Input sources on one command line (parallel has no bound; 64 is plenty). */
#define MG_INPUT_MAX_SOURCES 64u

/* The separators on memguard's command line, after the command. */
enum mg_input_sep {
	MG_SEP_NONE,
	MG_SEP_ARGS,        /* ::: */
	MG_SEP_FILES,       /* :::: */
	MG_SEP_ARGS_LINKED, /* :::+ */
	MG_SEP_FILES_LINKED /* ::::+ */
};

/* Which separator word is, if any. */
enum mg_input_sep mg_input_sep(const char *word);

struct mg_source {
	char **values; /* borrowed: argv, or lines split in place in a text the inputs keep */
	size_t n;
	bool linked; /* with the source before it */
	char *name;  /* for messages: ":::", or the file's name; heap */
};

struct mg_inputs {
	struct mg_source *src;
	size_t nsrc;
	char **texts; /* the files read, kept while values point into them */
	size_t ntexts;
	char *stdin_text; /* standard input, read once */
	bool has_colsep;
	regex_t colsep;
};

/* Adds a source of values (a ::: list, or lines), linked or not. Returns 0,
 * -ENOMEM, or -E2BIG past MG_INPUT_MAX_SOURCES. */
int mg_inputs_add(struct mg_inputs *in, char **values, size_t n, bool linked, const char *name);

/* Splits text (taken over, kept by in) into lines as parallel reads them:
 * at each "\n", a last line without one included, nothing else dropped
 * ("\r" and blank lines are values). Adds them as a source. -ENOMEM;
 * -EINVAL for a NUL byte, -EMSGSIZE for a line over MG_INPUT_MAX_LINE
 * (its number in *ret_line). */
int mg_inputs_add_text(struct mg_inputs *in, char *text, size_t len, bool linked, const char *name,
                       size_t *ret_line);

/* Adds the ::: lists as they come on the command line: each word is one
 * value per line it holds (parallel reads ::: values as lines). */
int mg_inputs_add_words(struct mg_inputs *in, char **words, size_t n, bool linked);

/* Reads the sources: -a FILEs (arg_files, in order), then what follows the
 * command: first (the first separator) and the words after it, and standard
 * input when use_stdin ("-" names it too). A one-line reason in err on
 * error: -errno of the file, -EINVAL, -EMSGSIZE, -E2BIG (too many jobs). */
int mg_inputs_load(struct mg_inputs *in, const char *const *arg_files, size_t narg_files, const char *first,
                   char **words, bool use_stdin, char *err, size_t errsize);

/* --colsep REGEXP: Perl's \t \n \s \S \d \D \w \W and escaped
 * punctuation translated to a POSIX extended expression. -EINVAL with a
 * reason in err when it does not compile. */
int mg_inputs_set_colsep(struct mg_inputs *in, const char *perl_regexp, char *err, size_t errsize);

/* The number of jobs: the product over the groups of linked sources of
 * each group's shortest source; an empty source counts as one empty value
 * when another has values. 0 when all are empty; -E2BIG above
 * MG_INPUT_MAX_JOBS. Pure. */
long mg_inputs_count(const struct mg_inputs *in);

/* Job k's value of each source (in->nsrc of them; "" from an empty
 * source), k from 0 in parallel's order. Pure. */
void mg_inputs_job(const struct mg_inputs *in, size_t k, const char **ret);

/* Job k's arguments as the replacement strings see them: the values, or
 * with --colsep each value's columns, trimmed of white space at both ends
 * (as parallel trims them then). A heap array of heap strings, freed with
 * mg_inputs_args_free. -ENOMEM. */
int mg_inputs_args(const struct mg_inputs *in, size_t k, char ***ret, size_t *ret_n);
void mg_inputs_args_free(char **args, size_t n);

void mg_inputs_done(struct mg_inputs *in);
