/* GNU parallel's command line, composed as parallel composes it: the
 * command's words joined into one line for the shell, each replacement
 * string ({} {.} {/} {//} {/.} {#} {%} and {N} {N.} {N/} {N//} {N/.})
 * replaced by the job's argument, shell-quoted, and the arguments appended
 * when the command has no replacement string. All pure; the reference is
 * parallel 20221122 (tests/integration/parallel_side_by_side.sh). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* What a replacement string stands for. */
enum mg_rpl {
	MG_RPL_ARG,        /* {}   the argument */
	MG_RPL_NOEXT,      /* {.}  without its extension */
	MG_RPL_BASE,       /* {/}  its basename */
	MG_RPL_DIR,        /* {//} its dirname */
	MG_RPL_BASE_NOEXT, /* {/.} its basename without the extension */
	MG_RPL_SEQ,        /* {#}  the job's number, from 1 */
	MG_RPL_SLOT,       /* {%}  the job slot it runs in, from 1 */
};

/* A replacement string at s: its length (0 when s starts none), what it
 * stands for, and its position: 0 for all the arguments, N > 0 for the
 * Nth ({N}, {N.}, ...), N < 0 for the Nth from the end ({-1}). */
size_t mg_rpl_match(const char *s, enum mg_rpl *ret_rpl, long *ret_pos);

/* Whether any of the words (NULL-terminated) holds a replacement string. */
bool mg_compose_has_rpl(char *const *words);

/* Whether one of them is {%}, whose value depends on when the job runs. */
bool mg_compose_has_slot(char *const *words);

/* An argument transformed as rpl says (not {#} nor {%}), into a new string;
 * NULL when out of memory. {.} drops a last ".ext" with no "/" in it, {/}
 * what comes up to the last "/", {//} is Perl's File::Basename::dirname. */
char *mg_rpl_apply(enum mg_rpl rpl, const char *arg);

/* s quoted for a POSIX shell as parallel quotes it: as it is when it holds
 * only letters, digits and "-_.+/", '' when empty, else in single quotes
 * (a ' inside written '"'"'). NULL when out of memory. */
char *mg_shell_quote(const char *s);

/* One job. */
struct mg_compose_job {
	const char *const *args; /* its arguments: one per input source (or column) */
	size_t nargs;
	unsigned long seq; /* {#} */
	unsigned slot;     /* {%} */
};

/* The job's shell line from the command's words (NULL-terminated; none:
 * the arguments are the command). quote is parallel's --quote (-q): each
 * word shell-quoted with the argument inside it as it is. Otherwise the
 * words are joined as they are and each inserted value is quoted, except
 * when the command's first word holds a replacement string (the arguments
 * name the program, as in parallel {} ::: 'echo a'). A replacement string
 * for all the arguments gives each, separated by spaces; one for the Nth
 * gives "" when there is no Nth. malloc'd; NULL when out of memory. */
char *mg_compose(char *const *words, bool quote, const struct mg_compose_job *job);

/* --tag's tag: the arguments as they are, joined by spaces (what {} gives
 * unquoted). malloc'd; NULL when out of memory. */
char *mg_compose_tag(const char *const *args, size_t nargs);

/* The shell the lines run in: $PARALLEL_SHELL, else $SHELL when it is a
 * Bourne shell (sh, bash, dash, ksh, mksh, zsh, ash, yash, posh), else
 * /bin/sh. envp is the environment to look in. Pure; borrowed result. */
const char *mg_compose_shell(char *const envp[]);

/* The program a task's line starts with, when it can be known before any
 * task runs: the first word of words (of the first word's text, when it
 * holds blanks) if it is a plain name or path, holds no replacement string
 * and is no shell keyword or builtin (cd, for, if, ...). Into buf; NULL
 * when it cannot be known. Pure. */
const char *mg_compose_program(char *const *words, char *buf, size_t size);

/* A command given as one string with blanks ('python3 sim.py {}'), split at
 * the blanks, so that the runtime is known from its words as written: a
 * heap array of heap strings (mg_free_argv), NULL-terminated; NULL when
 * words is not one such string or out of memory. */
char **mg_compose_split(char *const *words);
