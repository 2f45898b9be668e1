/* Runtime detection and per-runtime heap settings: see runtime.h, and
 * docs/runtimes.md for the reasoning behind every number here.
 *
 * Layout: pure helpers (names, wrapper options, env -S splitting, #! lines,
 * ELF headers, heap formulas) first; the few functions that touch the file
 * system (PATH search, reading a program's first bytes, ELF section reads)
 * are kept small and separate so the logic can be tested without files. */
#include "runtime.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memguard/util.h"

#define MIB (UINT64_C(1) << 20)

/* Wrappers and #! levels followed before giving up: the kernel itself allows
 * only a handful of nested interpreters, and a loop must end. */
#define CMD_HOPS_MAX 8
/* Leading tokens of a command we look at: wrappers and runtime options come
 * first; anything past this is the program's own arguments. */
#define CMD_TOKENS_MAX 128
/* Room for strings we make: env -S pieces, #! interpreters, resolved paths. */
#define CMD_STORE_SIZE 8192
/* NAME=value assignments made by env wrappers that we remember. */
#define CMD_ASSIGN_MAX 32
/* The kernel reads this much of a script for its #! line (BINPRM_BUF_SIZE). */
#define SHEBANG_MAX 256

/* ---------------------------------------------------------------------- */
/* Names */

static const char *const runtime_names[MG_RUNTIME__COUNT] = {
        [MG_RUNTIME_GENERIC] = "generic", [MG_RUNTIME_CPYTHON] = "cpython",
        [MG_RUNTIME_PYPY] = "pypy",       [MG_RUNTIME_JVM] = "jvm",
        [MG_RUNTIME_GO] = "go",           [MG_RUNTIME_NODE] = "node",
        [MG_RUNTIME_DOTNET] = "dotnet",   [MG_RUNTIME_R] = "r",
};

static const struct {
	const char *alias;
	enum mg_runtime rt;
} runtime_aliases[] = {
        {"python", MG_RUNTIME_CPYTHON}, {"python3", MG_RUNTIME_CPYTHON}, {"pypy3", MG_RUNTIME_PYPY},
        {"java", MG_RUNTIME_JVM},       {"golang", MG_RUNTIME_GO},       {"nodejs", MG_RUNTIME_NODE},
        {"rscript", MG_RUNTIME_R},      {".net", MG_RUNTIME_DOTNET},
};

const char *mg_runtime_name(enum mg_runtime rt)
{
	if ((unsigned)rt >= MG_RUNTIME__COUNT)
		return "invalid";
	return runtime_names[rt];
}

int mg_runtime_from_name(const char *name, enum mg_runtime *ret)
{
	if (!name || !ret)
		return -EINVAL;
	for (unsigned i = 0; i < MG_RUNTIME__COUNT; i++)
		if (strcasecmp(name, runtime_names[i]) == 0) {
			*ret = (enum mg_runtime)i;
			return 0;
		}
	for (size_t i = 0; i < MG_ARRAY_SIZE(runtime_aliases); i++)
		if (strcasecmp(name, runtime_aliases[i].alias) == 0) {
			*ret = runtime_aliases[i].rt;
			return 0;
		}
	return -EINVAL;
}

bool mg_runtime_wants_rlimit_as(enum mg_runtime rt)
{
	return rt == MG_RUNTIME_CPYTHON || rt == MG_RUNTIME_PYPY || rt == MG_RUNTIME_R;
}

/* ---------------------------------------------------------------------- */
/* Small string helpers */

static bool streq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!is_digit(*s))
			return false;
	return true;
}

/* "", "3", "3.11", "2.7": a version as interpreters append it to their name. */
static bool is_version(const char *s, size_t len)
{
	if (len == 0)
		return true;
	if (!is_digit(s[0]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!is_digit(s[i]) && s[i] != '.')
			return false;
	return true;
}

static bool has_suffix(const char *s, size_t len, const char *suffix, size_t *ret_stem_len)
{
	size_t n = strlen(suffix);

	if (len < n || memcmp(s + len - n, suffix, n) != 0)
		return false;
	*ret_stem_len = len - n;
	return true;
}

/* stem + optional version + one of the optional ABI suffixes, e.g.
 * python3.11d, python3.13t, pypy3.9-c. */
static bool versioned_name(const char *name, const char *stem, const char *const *abi_suffixes)
{
	size_t stem_len = strlen(stem), len = strlen(name);

	if (strncmp(name, stem, stem_len) != 0)
		return false;
	name += stem_len;
	len -= stem_len;
	if (is_version(name, len))
		return true;
	for (; abi_suffixes && *abi_suffixes; abi_suffixes++) {
		size_t vlen;
		if (has_suffix(name, len, *abi_suffixes, &vlen) && is_version(name, vlen))
			return true;
	}
	return false;
}

/* The runtime a program's basename names, or GENERIC. */
static enum mg_runtime runtime_from_program_name(const char *base)
{
	static const char *const python_abi[] = {"m", "d", "dm", "t", "u", "-dbg", "-debug", NULL};
	static const char *const pypy_abi[] = {"-c", NULL};
	static const struct {
		const char *name;
		enum mg_runtime rt;
	} exact[] = {
	        {"java", MG_RUNTIME_JVM}, {"go", MG_RUNTIME_GO},     {"nodejs", MG_RUNTIME_NODE},
	        {"R", MG_RUNTIME_R},      {"Rscript", MG_RUNTIME_R}, {"dotnet", MG_RUNTIME_DOTNET},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(exact); i++)
		if (streq(base, exact[i].name))
			return exact[i].rt;
	if (versioned_name(base, "python", python_abi))
		return MG_RUNTIME_CPYTHON;
	if (versioned_name(base, "pypy", pypy_abi))
		return MG_RUNTIME_PYPY;
	/* node, node18, node20: some distributions version the binary. */
	if (strncmp(base, "node", 4) == 0 && (base[4] == '\0' || all_digits(base + 4)))
		return MG_RUNTIME_NODE;
	return MG_RUNTIME_GENERIC;
}

/* ---------------------------------------------------------------------- */
/* The command as a list of tokens we can rewrite (env -S, #!) */

struct cmdline {
	const char *tok[CMD_TOKENS_MAX];
	size_t n;
	char store[CMD_STORE_SIZE];
	size_t store_used;
	const char *assign[CMD_ASSIGN_MAX]; /* NAME=value from env wrappers, in order */
	size_t n_assign;
	unsigned hops;
};

static void cmdline_init(struct cmdline *c, char *const argv[])
{
	c->n = 0;
	c->store_used = 0;
	c->n_assign = 0;
	c->hops = 0;
	for (; argv && argv[c->n] && c->n < CMD_TOKENS_MAX; c->n++)
		c->tok[c->n] = argv[c->n];
}

/* Copies len bytes of s into the store, NUL-terminated; NULL when full. */
static char *cmdline_strndup(struct cmdline *c, const char *s, size_t len)
{
	char *p;

	if (len >= CMD_STORE_SIZE - c->store_used)
		return NULL;
	p = c->store + c->store_used;
	memcpy(p, s, len);
	p[len] = '\0';
	c->store_used += len + 1;
	return p;
}

/* Replaces the first `drop` tokens with ins[0..n_ins); what no longer fits
 * at the end is dropped (only leading tokens matter to us). */
static void cmdline_replace_head(struct cmdline *c, size_t drop, const char *const *ins, size_t n_ins)
{
	const char *rest[CMD_TOKENS_MAX];
	size_t n_rest = c->n > drop ? c->n - drop : 0;

	memcpy(rest, c->tok + (c->n - n_rest), n_rest * sizeof(rest[0]));
	c->n = 0;
	for (size_t i = 0; i < n_ins && c->n < CMD_TOKENS_MAX; i++)
		c->tok[c->n++] = ins[i];
	for (size_t i = 0; i < n_rest && c->n < CMD_TOKENS_MAX; i++)
		c->tok[c->n++] = rest[i];
}

/* Splits s the way GNU env -S does: blanks separate; '...' is literal;
 * "..." and bare text take backslash escapes (\_ is a blank outside quotes
 * and a space inside, \c ends the string); a token starting with # starts a
 * comment. ${VAR} is kept as written: we do not know the task's values.
 * The pieces go to c's store. Returns the count, or -E2BIG / -EINVAL. */
static int split_string(struct cmdline *c, const char *s, const char **ret_tok, size_t tok_max)
{
	size_t n = 0;
	char *out = c->store + c->store_used;
	size_t room = CMD_STORE_SIZE - c->store_used, used = 0;

	for (;;) {
		char quote = 0;
		bool any = false, stop = false;
		size_t start = used;

		while (*s && is_space(*s))
			s++;
		if (!*s || *s == '#')
			break;
		for (; *s; s++) {
			char ch = *s;
			if (!quote && is_space(ch))
				break;
			if (ch == '\'' || ch == '"') {
				if (!quote) {
					quote = ch;
					any = true;
					continue;
				}
				if (quote == ch) {
					quote = 0;
					continue;
				}
			}
			if (ch == '\\' && quote != '\'' && s[1]) {
				s++;
				switch (*s) {
				case '_':
					if (!quote) {
						s++;
						goto token_end;
					}
					ch = ' ';
					break;
				case 'c':
					stop = true;
					goto token_end;
				case 't':
					ch = '\t';
					break;
				case 'n':
					ch = '\n';
					break;
				default:
					ch = *s;
					break;
				}
			} else if (ch == '\\' && quote == '\'' && (s[1] == '\\' || s[1] == '\'')) {
				ch = *++s;
			}
			if (used + 1 >= room)
				return -E2BIG;
			out[used++] = ch;
			any = true;
		}
	token_end:
		if (quote)
			return -EINVAL;
		if (any || used > start) {
			if (n >= tok_max || used + 1 >= room)
				return -E2BIG;
			out[used++] = '\0';
			ret_tok[n++] = out + start;
		}
		if (stop)
			break;
	}
	c->store_used += used;
	return (int)n;
}

/* ---------------------------------------------------------------------- */
/* Wrappers: programs that run another program after their own options */

enum wrapper_kind {
	WRAPPER_PLAIN,
	WRAPPER_ENV,        /* NAME=value assignments, -S splitting, a lone "-" */
	WRAPPER_POSITIONAL, /* one operand before the command: taskset's mask, timeout's duration */
	WRAPPER_PRIORITY,   /* chrt: a numeric priority before the command */
};

struct wrapper {
	const char *name;
	enum wrapper_kind kind;
	const char *short_with_arg;        /* short options that take a value */
	const char *const *long_with_arg;  /* long options that take a value */
	const char *short_without_command; /* options after which no command follows */
	const char *const *long_without_command;
};

static const char *const env_long[] = {"unset", "chdir", "split-string", NULL};
static const char *const nice_long[] = {"adjustment", NULL};
static const char *const ionice_long[] = {"class", "classdata", "pid", "pgid", "uid", NULL};
static const char *const ionice_nocmd[] = {"pid", "pgid", "uid", NULL};
static const char *const time_long[] = {"format", "output", NULL};
static const char *const stdbuf_long[] = {"input", "output", "error", NULL};
static const char *const taskset_nocmd[] = {"pid", NULL};
static const char *const numactl_long[] = {"interleave",
                                           "preferred",
                                           "preferred-many",
                                           "cpubind",
                                           "cpunodebind",
                                           "physcpubind",
                                           "membind",
                                           "shm",
                                           "file",
                                           "offset",
                                           "length",
                                           "shmmode",
                                           "shmid",
                                           "weighted-interleave",
                                           NULL};
static const char *const numactl_nocmd[] = {"show", "hardware", NULL};
static const char *const chrt_long[] = {"sched-runtime", "sched-period", "sched-deadline", NULL};
static const char *const chrt_nocmd[] = {"pid", "max", NULL};
static const char *const timeout_long[] = {"kill-after", "signal", NULL};

static const struct wrapper wrappers[] = {
        {"env", WRAPPER_ENV, "uCS", env_long, "", NULL},
        {"nice", WRAPPER_PLAIN, "n", nice_long, "", NULL},
        {"ionice", WRAPPER_PLAIN, "cnpPu", ionice_long, "pPu", ionice_nocmd},
        {"time", WRAPPER_PLAIN, "fo", time_long, "", NULL},
        {"stdbuf", WRAPPER_PLAIN, "ioe", stdbuf_long, "", NULL},
        {"taskset", WRAPPER_POSITIONAL, "", NULL, "p", taskset_nocmd},
        {"numactl", WRAPPER_PLAIN, "ipcNCmSfoLMIPw", numactl_long, "sH", numactl_nocmd},
        {"chrt", WRAPPER_PRIORITY, "TPD", chrt_long, "pm", chrt_nocmd},
        {"nohup", WRAPPER_PLAIN, "", NULL, "", NULL},
        {"timeout", WRAPPER_POSITIONAL, "ks", timeout_long, "", NULL},
        {"setsid", WRAPPER_PLAIN, "", NULL, "", NULL},
};

static const struct wrapper *find_wrapper(const char *base)
{
	for (size_t i = 0; i < MG_ARRAY_SIZE(wrappers); i++)
		if (streq(base, wrappers[i].name))
			return &wrappers[i];
	return NULL;
}

/* getopt_long accepts any unambiguous prefix of a long option. */
static bool long_option_in(const char *name, size_t len, const char *const *list)
{
	if (len == 0)
		return false;
	for (; list && *list; list++)
		if (strncmp(*list, name, len) == 0)
			return true;
	return false;
}

/* An env operand NAME=value (GNU env takes anything with '=' before the
 * command as an assignment). */
static bool is_assignment(const char *t)
{
	return t[0] != '=' && strchr(t, '=') != NULL;
}

/* Walks a wrapper's options. On return *ret_next is the index of its
 * command; for env -S, *ret_split is the string to split and *ret_next the
 * index after it. Returns 0, or -ENOENT when no command follows. Pure. */
static int skip_wrapper(struct cmdline *c, const struct wrapper *w, size_t *ret_next, const char **ret_split)
{
	size_t i = 1;

	*ret_split = NULL;
	while (i < c->n) {
		const char *t = c->tok[i];

		if (streq(t, "--")) {
			i++;
			break;
		}
		if (w->kind == WRAPPER_ENV && streq(t, "-")) { /* env's old spelling of -i */
			i++;
			continue;
		}
		if (t[0] != '-' || t[1] == '\0')
			break;
		if (t[1] == '-') {
			const char *name = t + 2, *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);

			if (long_option_in(name, len, w->long_without_command))
				return -ENOENT;
			if (w->kind == WRAPPER_ENV &&
			    long_option_in(name, len, (const char *const[]){"split-string", NULL})) {
				if (eq) {
					*ret_split = eq + 1;
					*ret_next = i + 1;
				} else {
					if (i + 1 >= c->n)
						return -ENOENT;
					*ret_split = c->tok[i + 1];
					*ret_next = i + 2;
				}
				return 0;
			}
			i += (!eq && long_option_in(name, len, w->long_with_arg)) ? 2 : 1;
			continue;
		}
		/* A cluster of short options: -iu NAME, -c3, -oL ... */
		bool took_next = false;
		for (const char *o = t + 1; *o; o++) {
			if (strchr(w->short_without_command, *o))
				return -ENOENT;
			if (!strchr(w->short_with_arg, *o))
				continue;
			const char *value = o[1] ? o + 1 : (i + 1 < c->n ? c->tok[i + 1] : NULL);
			if (!value)
				return -ENOENT;
			took_next = !o[1];
			if (w->kind == WRAPPER_ENV && *o == 'S') {
				*ret_split = value;
				*ret_next = i + (took_next ? 2 : 1);
				return 0;
			}
			break;
		}
		i += took_next ? 2 : 1;
	}

	if (w->kind == WRAPPER_ENV)
		for (; i < c->n && is_assignment(c->tok[i]); i++)
			if (c->n_assign < CMD_ASSIGN_MAX)
				c->assign[c->n_assign++] = c->tok[i];
	if (w->kind == WRAPPER_POSITIONAL && i < c->n)
		i++;
	if (w->kind == WRAPPER_PRIORITY && i < c->n && all_digits(c->tok[i]))
		i++;
	if (i >= c->n || c->tok[i][0] == '\0')
		return -ENOENT;
	*ret_next = i;
	return 0;
}

/* Strips leading wrappers (and an exec-style "--") until tok[0] is the
 * program that really runs. Returns 0, -ENOENT (no command), -ELOOP (too
 * many levels) or -E2BIG (an env -S string we cannot hold). Pure. */
static int cmdline_unwrap(struct cmdline *c)
{
	for (;;) {
		const struct wrapper *w;
		const char *split;
		size_t next;
		int r;

		if (c->n > 0 && streq(c->tok[0], "--")) {
			cmdline_replace_head(c, 1, NULL, 0);
			continue;
		}
		if (c->n == 0 || c->tok[0][0] == '\0')
			return -ENOENT;
		w = find_wrapper(base_name(c->tok[0]));
		if (!w)
			return 0;
		if (++c->hops > CMD_HOPS_MAX)
			return -ELOOP;
		r = skip_wrapper(c, w, &next, &split);
		if (r < 0)
			return r;
		if (split) {
			/* env -S "a b" rest → env a b rest: env goes on parsing the pieces. */
			const char *ins[CMD_TOKENS_MAX];
			ins[0] = c->tok[0];
			r = split_string(c, split, ins + 1, CMD_TOKENS_MAX - 1);
			if (r < 0)
				return r;
			cmdline_replace_head(c, next, ins, (size_t)r + 1);
			continue;
		}
		cmdline_replace_head(c, next, NULL, 0);
	}
}

/* ---------------------------------------------------------------------- */
/* "#!" lines */

struct span {
	const char *p;
	size_t len;
};

/* Splits a #! line the way the kernel does (fs/binfmt_script.c): blanks,
 * the interpreter up to a blank, blanks, then the rest of the line as ONE
 * optional argument with trailing blanks dropped. One difference: a '\r'
 * before the newline is dropped too, so a CRLF script names its real
 * interpreter (the kernel would fail to find "pypy3\r"). Returns 0, or
 * -ENOEXEC when buf is not a usable #! line. Pure. */
static int shebang_parse(const char *buf, size_t len, struct span *ret_interp, struct span *ret_arg)
{
	size_t i = 2, end, raw_end;
	bool complete;

	if (len < 2 || buf[0] != '#' || buf[1] != '!')
		return -ENOEXEC;
	for (end = 2; end < len && buf[end] != '\n' && buf[end] != '\0'; end++)
		;
	/* The line ended, or the file did, within what the kernel reads. */
	complete = end < len || len < SHEBANG_MAX;
	raw_end = end;
	while (end > i && (is_blank(buf[end - 1]) || buf[end - 1] == '\r'))
		end--;
	while (i < end && is_blank(buf[i]))
		i++;
	ret_interp->p = buf + i;
	while (i < end && !is_blank(buf[i]))
		i++;
	ret_interp->len = (size_t)(buf + i - ret_interp->p);
	if (ret_interp->len == 0)
		return -ENOEXEC;
	if (!complete && i == raw_end)
		return -ENOEXEC; /* the kernel refuses an interpreter name cut short */
	while (i < end && is_blank(buf[i]))
		i++;
	ret_arg->p = buf + i;
	ret_arg->len = end - i;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* ELF: is this a Go binary? */

/* The 14-byte magic that opens the Go build info blob (debug/buildinfo). */
static const char go_buildinfo_magic[] = "\xff Go buildinf:";
#define GO_BUILDINFO_MAGIC_LEN 14
/* debug/buildinfo looks this far into the data segment, at this alignment. */
#define GO_BUILDINFO_SEARCH (UINT64_C(64) * 1024)
#define GO_BUILDINFO_ALIGN 16

#define ELF_SHN_XINDEX 0xffffu
#define ELF_SHT_NOBITS 8u
#define ELF_PT_LOAD 1u
#define ELF_PF_X 1u
#define ELF_PF_W 2u
/* Bounds on what a well-formed executable has; anything past is junk. */
#define ELF_SECTIONS_MAX 4096u
#define ELF_SEGMENTS_MAX 1024u
#define ELF_SHSTRTAB_MAX (UINT64_C(256) * 1024)

struct elf_info {
	bool is64, big_endian;
	uint64_t shoff, phoff;
	uint16_t shentsize, phentsize;
	uint32_t shnum, phnum, shstrndx;
};

static uint64_t elf_get(const struct elf_info *e, const uint8_t *p, unsigned size)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < size; i++) {
		unsigned shift = 8 * (e->big_endian ? size - 1 - i : i);
		v |= (uint64_t)p[i] << shift;
	}
	return v;
}

/* Decodes the ELF file header (the first 52 or 64 bytes). Pure. */
static int elf_parse_header(const uint8_t *b, size_t len, struct elf_info *ret)
{
	if (len < 52 || memcmp(b,
	                       "\x7f"
	                       "ELF",
	                       4) != 0)
		return -ENOEXEC;
	if ((b[4] != 1 && b[4] != 2) || (b[5] != 1 && b[5] != 2))
		return -ENOEXEC;
	ret->is64 = b[4] == 2;
	ret->big_endian = b[5] == 2;
	if (ret->is64) {
		if (len < 64)
			return -ENOEXEC;
		ret->phoff = elf_get(ret, b + 32, 8);
		ret->shoff = elf_get(ret, b + 40, 8);
		ret->phentsize = (uint16_t)elf_get(ret, b + 54, 2);
		ret->phnum = (uint32_t)elf_get(ret, b + 56, 2);
		ret->shentsize = (uint16_t)elf_get(ret, b + 58, 2);
		ret->shnum = (uint32_t)elf_get(ret, b + 60, 2);
		ret->shstrndx = (uint32_t)elf_get(ret, b + 62, 2);
	} else {
		ret->phoff = elf_get(ret, b + 28, 4);
		ret->shoff = elf_get(ret, b + 32, 4);
		ret->phentsize = (uint16_t)elf_get(ret, b + 42, 2);
		ret->phnum = (uint32_t)elf_get(ret, b + 44, 2);
		ret->shentsize = (uint16_t)elf_get(ret, b + 46, 2);
		ret->shnum = (uint32_t)elf_get(ret, b + 48, 2);
		ret->shstrndx = (uint32_t)elf_get(ret, b + 50, 2);
	}
	return 0;
}

struct elf_section {
	uint32_t name, type, link;
	uint64_t offset, size;
};

static void elf_parse_section(const struct elf_info *e, const uint8_t *b, struct elf_section *ret)
{
	ret->name = (uint32_t)elf_get(e, b, 4);
	ret->type = (uint32_t)elf_get(e, b + 4, 4);
	if (e->is64) {
		ret->offset = elf_get(e, b + 24, 8);
		ret->size = elf_get(e, b + 32, 8);
		ret->link = (uint32_t)elf_get(e, b + 40, 4);
	} else {
		ret->offset = elf_get(e, b + 16, 4);
		ret->size = elf_get(e, b + 20, 4);
		ret->link = (uint32_t)elf_get(e, b + 24, 4);
	}
}

/* Finds the magic at GO_BUILDINFO_ALIGN alignment, as debug/buildinfo does. */
static bool find_go_magic(const uint8_t *b, size_t len)
{
	for (size_t off = 0; off + GO_BUILDINFO_MAGIC_LEN <= len; off += GO_BUILDINFO_ALIGN)
		if (memcmp(b + off, go_buildinfo_magic, GO_BUILDINFO_MAGIC_LEN) == 0)
			return true;
	return false;
}

/* pread of exactly len bytes inside a file of file_size; -EIO otherwise. */
static int read_exact_at(int fd, uint64_t file_size, uint64_t off, void *buf, size_t len)
{
	size_t done = 0;

	if (off > file_size || len > file_size - off || off > (uint64_t)INT64_MAX)
		return -EIO;
	while (done < len) {
		ssize_t n = pread(fd, (uint8_t *)buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

/* The file offset of the ".go.buildinfo" section, via the section table: a
 * handful of small reads wherever it lies (in a 10 MiB go binary it is
 * 9.9 MiB in, past any fixed-size prefix scan). Returns 1 (found), 0 (no
 * such section), -errno (no usable section table). */
static int elf_buildinfo_section(int fd, uint64_t file_size, const struct elf_info *e, uint64_t *ret_offset)
{
	size_t entsize = e->is64 ? 64 : 40;
	uint32_t shnum = e->shnum, shstrndx = e->shstrndx;
	uint8_t sh[64];
	struct elf_section sec, strtab;
	_cleanup_free_ char *names = NULL;
	_cleanup_free_ uint8_t *table = NULL;
	int r;

	if (e->shoff == 0 || e->shentsize != entsize)
		return -ENOEXEC;
	if (shnum == 0 || shstrndx == ELF_SHN_XINDEX) {
		/* Extended numbering: the real values live in section 0. */
		r = read_exact_at(fd, file_size, e->shoff, sh, entsize);
		if (r < 0)
			return r;
		elf_parse_section(e, sh, &sec);
		if (shnum == 0)
			shnum = sec.size > ELF_SECTIONS_MAX ? ELF_SECTIONS_MAX + 1 : (uint32_t)sec.size;
		if (shstrndx == ELF_SHN_XINDEX)
			shstrndx = sec.link;
	}
	if (shnum == 0 || shnum > ELF_SECTIONS_MAX || shstrndx >= shnum)
		return -ENOEXEC;
	table = malloc(shnum * entsize);
	if (!table)
		return -ENOMEM;
	r = read_exact_at(fd, file_size, e->shoff, table, shnum * entsize);
	if (r < 0)
		return r;
	elf_parse_section(e, table + (size_t)shstrndx * entsize, &strtab);
	if (strtab.type == ELF_SHT_NOBITS || strtab.size == 0 || strtab.size > ELF_SHSTRTAB_MAX)
		return -ENOEXEC;
	names = malloc(strtab.size + 1);
	if (!names)
		return -ENOMEM;
	r = read_exact_at(fd, file_size, strtab.offset, names, strtab.size);
	if (r < 0)
		return r;
	names[strtab.size] = '\0';

	for (uint32_t i = 0; i < shnum; i++) {
		elf_parse_section(e, table + (size_t)i * entsize, &sec);
		if (sec.name < strtab.size && streq(names + sec.name, ".go.buildinfo") &&
		    sec.type != ELF_SHT_NOBITS) {
			*ret_offset = sec.offset;
			return 1;
		}
	}
	return 0;
}

/* The first writable, non-executable PT_LOAD: where the Go linker puts the
 * build info when a binary has no section table (sstrip). Returns 1 and its
 * file offset and size, or 0. */
static int elf_data_segment(int fd, uint64_t file_size, const struct elf_info *e, uint64_t *ret_offset,
                            uint64_t *ret_size)
{
	size_t entsize = e->is64 ? 56 : 32;
	uint8_t ph[56];

	if (e->phoff == 0 || e->phentsize != entsize || e->phnum == 0 || e->phnum > ELF_SEGMENTS_MAX)
		return 0;
	for (uint32_t i = 0; i < e->phnum; i++) {
		uint64_t type, flags;

		if (read_exact_at(fd, file_size, e->phoff + (uint64_t)i * entsize, ph, entsize) < 0)
			return 0;
		type = elf_get(e, ph, 4);
		flags = elf_get(e, ph + (e->is64 ? 4 : 24), 4);
		if (type != ELF_PT_LOAD || (flags & (ELF_PF_X | ELF_PF_W)) != ELF_PF_W)
			continue;
		*ret_offset = elf_get(e, ph + (e->is64 ? 8 : 4), e->is64 ? 8 : 4);
		*ret_size = elf_get(e, ph + (e->is64 ? 32 : 16), e->is64 ? 8 : 4);
		return 1;
	}
	return 0;
}

/* Go's own reader (debug/buildinfo) takes the .go.buildinfo section, else
 * the first writable data segment, and looks for the magic at 16-byte steps
 * in its first 64 KiB. We do the same, with bounded reads. */
static bool elf_is_go(int fd, uint64_t file_size, const uint8_t *head, size_t head_len)
{
	_cleanup_free_ uint8_t *data = NULL;
	struct elf_info e;
	uint64_t offset = 0, size = GO_BUILDINFO_SEARCH;
	size_t len;

	if (elf_parse_header(head, head_len, &e) < 0)
		return false;
	if (elf_buildinfo_section(fd, file_size, &e, &offset) <= 0 &&
	    elf_data_segment(fd, file_size, &e, &offset, &size) <= 0)
		return false;
	if (offset >= file_size)
		return false;
	len = (size_t)(size < GO_BUILDINFO_SEARCH ? size : GO_BUILDINFO_SEARCH);
	if (len > file_size - offset)
		len = (size_t)(file_size - offset);
	data = malloc(len ? len : 1);
	if (!data || read_exact_at(fd, file_size, offset, data, len) < 0)
		return false;
	return find_go_magic(data, len);
}

/* ---------------------------------------------------------------------- */
/* File system: PATH search and a program's first bytes */

/* Where execvp would find name: as given when it has a '/', else the first
 * executable regular file in path_env (an empty entry is the cwd). */
static int resolve_program(const char *name, const char *path_env, char *buf, size_t size)
{
	size_t name_len = strlen(name);

	if (strchr(name, '/')) {
		if (name_len >= size)
			return -ENAMETOOLONG;
		memcpy(buf, name, name_len + 1);
		return 0;
	}
	if (!path_env)
		return -ENOENT;
	for (const char *p = path_env;;) {
		const char *colon = strchrnul(p, ':');
		size_t dir_len = (size_t)(colon - p);
		struct stat st;
		int n = dir_len ? snprintf(buf, size, "%.*s/%s", (int)dir_len, p, name)
		                : snprintf(buf, size, "%s", name);

		if (n > 0 && (size_t)n < size && stat(buf, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(buf, X_OK) == 0)
			return 0;
		if (!*colon)
			return -ENOENT;
		p = colon + 1;
	}
}

/* Opens a regular file without blocking (a FIFO named as a program must not
 * hang the launcher) and reads its first bytes. Returns the fd, or -errno. */
static int open_program(const char *path, uint8_t *head, size_t size, size_t *ret_len, uint64_t *ret_size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EACCES;
	do
		n = pread(fd, head, size, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	*ret_len = (size_t)n;
	*ret_size = (uint64_t)st.st_size;
	return TAKE_FD(fd);
}

/* ---------------------------------------------------------------------- */
/* Detection */

static __thread char why_buf[256];

static void set_why_static(const char **ret_why, const char *why)
{
	if (ret_why)
		*ret_why = why;
}

/* Formats the --explain phrase into a per-thread buffer (valid until the
 * next detection in this thread); names with control characters are made
 * printable so they cannot mess up a terminal or a log line. */
__attribute__((format(printf, 2, 3))) static void set_why(const char **ret_why, const char *fmt, ...)
{
	va_list ap;

	if (!ret_why)
		return;
	va_start(ap, fmt);
	vsnprintf(why_buf, sizeof(why_buf), fmt, ap);
	va_end(ap);
	for (char *p = why_buf; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	*ret_why = why_buf;
}

/* Replaces a script at tok[0] by its #! interpreter: "interp [arg] script
 * args...", as the kernel runs it. Returns 0, or -errno. */
static int apply_shebang(struct cmdline *c, const char *path, const char *head, size_t head_len)
{
	struct span interp, arg;
	const char *ins[3];
	size_t n_ins = 0;
	char *s;
	int r;

	r = shebang_parse(head, head_len, &interp, &arg);
	if (r < 0)
		return r;
	if (memchr(interp.p, '/', interp.len)) {
		s = cmdline_strndup(c, interp.p, interp.len);
	} else {
		/* The kernel opens a bare #! name relative to the cwd, never via PATH. */
		char rel[SHEBANG_MAX + 3];
		int n = snprintf(rel, sizeof(rel), "./%.*s", (int)interp.len, interp.p);
		s = n > 0 ? cmdline_strndup(c, rel, (size_t)n) : NULL;
	}
	if (!s)
		return -E2BIG;
	ins[n_ins++] = s;
	if (arg.len > 0) {
		s = cmdline_strndup(c, arg.p, arg.len);
		if (!s)
			return -E2BIG;
		ins[n_ins++] = s;
	}
	s = cmdline_strndup(c, path, strlen(path));
	if (!s)
		return -E2BIG;
	ins[n_ins++] = s;
	cmdline_replace_head(c, 1, ins, n_ins);
	return 0;
}

enum mg_runtime mg_runtime_detect(char *const argv[], const char *path_env, const char **ret_why)
{
	struct cmdline c;
	const char *script = NULL; /* the script whose #! line led here */

	cmdline_init(&c, argv);
	for (;;) {
		char path[PATH_MAX], head[SHEBANG_MAX];
		const char *name, *base;
		enum mg_runtime rt;
		size_t head_len = 0;
		uint64_t file_size = 0;
		int r;

		r = cmdline_unwrap(&c);
		if (r == -ELOOP) {
			set_why_static(ret_why, "too many levels of wrappers or #! lines");
			return MG_RUNTIME_GENERIC;
		}
		if (r < 0) {
			set_why_static(ret_why, "no command to run");
			return MG_RUNTIME_GENERIC;
		}
		name = c.tok[0];
		base = base_name(name);
		rt = runtime_from_program_name(base);
		if (rt != MG_RUNTIME_GENERIC) {
			if (script)
				set_why(ret_why, "#! line of %s", script);
			else
				set_why(ret_why, "program name %s", base);
			return rt;
		}

		/* An unknown name: look at the file itself. */
		if (++c.hops > CMD_HOPS_MAX) {
			set_why_static(ret_why, "too many levels of wrappers or #! lines");
			return MG_RUNTIME_GENERIC;
		}
		if (resolve_program(name, path_env, path, sizeof(path)) < 0) {
			set_why(ret_why, "%s not found, no runtime known by that name", base);
			return MG_RUNTIME_GENERIC;
		}
		{
			/* A symlink with a neutral name to a runtime (alternatives). */
			_cleanup_free_ char *target = realpath(path, NULL);
			if (target) {
				rt = runtime_from_program_name(base_name(target));
				if (rt != MG_RUNTIME_GENERIC) {
					set_why(ret_why, "program name %s (link target of %s)",
					        base_name(target), name);
					return rt;
				}
			}
		}
		_cleanup_close_ int fd =
		        open_program(path, (uint8_t *)head, sizeof(head), &head_len, &file_size);
		if (fd < 0) {
			set_why(ret_why, "cannot read %s", path);
			return MG_RUNTIME_GENERIC;
		}
		if (head_len >= 2 && head[0] == '#' && head[1] == '!') {
			if (apply_shebang(&c, path, head, head_len) < 0) {
				set_why(ret_why, "unusable #! line in %s", path);
				return MG_RUNTIME_GENERIC;
			}
			script = name; /* argv or our store: outlives the rewrite */
			continue;
		}
		if (elf_is_go(fd, file_size, (const uint8_t *)head, head_len)) {
			set_why(ret_why, "Go build info in %s", path);
			return MG_RUNTIME_GO;
		}
		set_why(ret_why, "no runtime known for %s", base);
		return MG_RUNTIME_GENERIC;
	}
}

/* ---------------------------------------------------------------------- */
/* Heap caps */

struct heap_rule {
	uint64_t reserve;     /* fixed non-heap RSS: interpreter, JIT, young gen ... */
	unsigned headroom;    /* share/headroom more is kept for what grows with the heap */
	uint64_t floor_bytes; /* never below this: less would not start the runtime */
};

/* See docs/runtimes.md for the measurements behind each line. */
static const struct heap_rule heap_rules[MG_RUNTIME__COUNT] = {
        [MG_RUNTIME_PYPY] = {80 * MIB, 16, 16 * MIB},  [MG_RUNTIME_JVM] = {48 * MIB, 4, 16 * MIB},
        [MG_RUNTIME_GO] = {16 * MIB, 10, 16 * MIB},    [MG_RUNTIME_NODE] = {96 * MIB, 4, 16 * MIB},
        [MG_RUNTIME_DOTNET] = {32 * MIB, 4, 20 * MIB}, [MG_RUNTIME_R] = {64 * MIB, 8, 16 * MIB},
};

/* Shares from here up mean "no real limit" (no node has a PiB of memory). */
#define SHARE_NO_LIMIT (UINT64_C(1) << 50)

uint64_t mg_heap_cap(enum mg_runtime rt, uint64_t share_bytes)
{
	const struct heap_rule *rule;
	uint64_t usable, cap, floor_cap;

	if ((unsigned)rt >= MG_RUNTIME__COUNT)
		return 0;
	rule = &heap_rules[rt];
	if (rule->headroom == 0 || share_bytes == 0 || share_bytes >= SHARE_NO_LIMIT)
		return 0;
	usable = share_bytes - share_bytes / rule->headroom;
	cap = usable > rule->reserve ? usable - rule->reserve : 0;
	/* A tiny share: a quarter of it beats a heap of nothing. */
	floor_cap = share_bytes / 4 > rule->floor_bytes ? share_bytes / 4 : rule->floor_bytes;
	if (cap < floor_cap)
		cap = floor_cap;
	if (cap > share_bytes)
		cap = share_bytes;
	return cap / MIB * MIB;
}

/* ---------------------------------------------------------------------- */
/* The user's own settings */

struct user_env {
	char *const *envp;
	const struct cmdline *cmd; /* env wrapper assignments; may be NULL */
};

static const char *assignment_value(const char *entry, const char *name, bool ignore_case)
{
	size_t len = strlen(name);

	if ((ignore_case ? strncasecmp(entry, name, len) : strncmp(entry, name, len)) != 0)
		return NULL;
	return entry[len] == '=' ? entry + len + 1 : NULL;
}

/* The value the task will see for name, or NULL: an env wrapper in the
 * command wins over the inherited environment. *ret_from_wrapper tells which. */
static const char *user_env_get(const struct user_env *u, const char *name, bool *ret_from_wrapper)
{
	const char *v;

	if (ret_from_wrapper)
		*ret_from_wrapper = false;
	for (size_t i = u->cmd ? u->cmd->n_assign : 0; i > 0; i--) {
		v = assignment_value(u->cmd->assign[i - 1], name, false);
		if (v) {
			if (ret_from_wrapper)
				*ret_from_wrapper = true;
			return v;
		}
	}
	for (size_t i = 0; u->envp && u->envp[i]; i++) {
		v = assignment_value(u->envp[i], name, false);
		if (v)
			return v;
	}
	return NULL;
}

/* Whether any variable whose name starts with prefix (any case) is set. */
static bool user_env_has_prefix(const struct user_env *u, const char *prefix)
{
	size_t len = strlen(prefix);

	for (size_t i = 0; u->cmd && i < u->cmd->n_assign; i++)
		if (strncasecmp(u->cmd->assign[i], prefix, len) == 0)
			return true;
	for (size_t i = 0; u->envp && u->envp[i]; i++)
		if (strncasecmp(u->envp[i], prefix, len) == 0)
			return true;
	return false;
}

/* Calls fn on each blank-separated word of s until it returns true. */
static bool any_word(const char *s, bool (*fn)(const char *word, size_t len, void *data), void *data)
{
	while (s && *s) {
		size_t len;
		while (*s && is_space(*s))
			s++;
		for (len = 0; s[len] && !is_space(s[len]); len++)
			;
		if (len && fn(s, len, data))
			return true;
		s += len;
	}
	return false;
}

static bool word_has_prefix(const char *w, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && memcmp(w, prefix, n) == 0;
}

/* JVM sizes like -Xmx: digits with an optional k/m/g/t suffix. Pure. */
static bool parse_jvm_size(const char *s, size_t len, uint64_t *ret)
{
	uint64_t v = 0, factor = 1;

	if (len > 0) {
		switch (s[len - 1]) {
		case 'k':
		case 'K':
			factor = UINT64_C(1) << 10;
			len--;
			break;
		case 'm':
		case 'M':
			factor = UINT64_C(1) << 20;
			len--;
			break;
		case 'g':
		case 'G':
			factor = UINT64_C(1) << 30;
			len--;
			break;
		case 't':
		case 'T':
			factor = UINT64_C(1) << 40;
			len--;
			break;
		default:
			break;
		}
	}
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (!is_digit(s[i]) || __builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(s[i] - '0'), &v))
			return false;
	}
	return !__builtin_mul_overflow(v, factor, ret);
}

struct jvm_scan {
	uint64_t share, cap;
	bool conflict; /* the user sized the heap, or asked for more initial heap than our cap */
};

static bool jvm_word(const char *w, size_t len, void *data)
{
	static const char *const max_flags[] = {
	        "-Xmx",        "-XX:MaxHeapSize=",      "-XX:MaxRAMPercentage=", "-XX:MaxRAMFraction=",
	        "-XX:MaxRAM=", "-XX:MinRAMPercentage=", "-XX:MinRAMFraction="};
	struct jvm_scan *s = data;
	uint64_t initial;

	for (size_t i = 0; i < MG_ARRAY_SIZE(max_flags); i++)
		if (word_has_prefix(w, len, max_flags[i]))
			return s->conflict = true;
	/* -Xms above our -Xmx stops the JVM at start ("Initial heap size set to
	 * a larger value than the maximum heap size"): then the user's sizing wins. */
	if (word_has_prefix(w, len, "-Xms") && parse_jvm_size(w + 4, len - 4, &initial) && initial > s->cap)
		return s->conflict = true;
	if (word_has_prefix(w, len, "-XX:InitialHeapSize=") && parse_jvm_size(w + 20, len - 20, &initial) &&
	    initial > s->cap)
		return s->conflict = true;
	if (word_has_prefix(w, len, "-XX:InitialRAMPercentage=")) {
		char num[32];
		size_t n = len - 25 < sizeof(num) - 1 ? len - 25 : sizeof(num) - 1;
		memcpy(num, w + 25, n);
		num[n] = '\0';
		if (strtod(num, NULL) / 100.0 * (double)s->share > (double)s->cap)
			return s->conflict = true;
	}
	return false;
}

/* Java launcher options that take the next word as their value. */
static bool jvm_option_takes_value(const char *t)
{
	static const char *const opts[] = {"-cp",           "-classpath",
	                                   "--class-path",  "-p",
	                                   "--module-path", "--upgrade-module-path",
	                                   "--add-modules", "--limit-modules",
	                                   "--add-reads",   "--add-exports",
	                                   "--add-opens",   "--patch-module",
	                                   "--source",      "--enable-native-access"};
	for (size_t i = 0; i < MG_ARRAY_SIZE(opts); i++)
		if (streq(t, opts[i]))
			return true;
	return false;
}

/* Node options that take the next word as their value. */
static bool node_option_takes_value(const char *t)
{
	static const char *const opts[] = {"-r",
	                                   "--require",
	                                   "-e",
	                                   "--eval",
	                                   "-p",
	                                   "--print",
	                                   "--import",
	                                   "--loader",
	                                   "--experimental-loader",
	                                   "-C",
	                                   "--conditions",
	                                   "--title",
	                                   "--watch-path",
	                                   "--input-type",
	                                   "--redirect-warnings",
	                                   "--env-file",
	                                   "--disable-warning"};
	for (size_t i = 0; i < MG_ARRAY_SIZE(opts); i++)
		if (streq(t, opts[i]))
			return true;
	return false;
}

/* V8 spells flags with '-' or '_' interchangeably. */
static bool node_word(const char *w, size_t len, void *data)
{
	static const char *const flags[] = {"--max-old-space-size", "--max-heap-size"};
	char norm[64];
	size_t n = len < sizeof(norm) - 1 ? len : sizeof(norm) - 1;

	(void)data;
	for (size_t i = 0; i < n; i++)
		norm[i] = (char)(w[i] == '_' ? '-' : w[i]);
	norm[n] = '\0';
	for (size_t i = 0; i < MG_ARRAY_SIZE(flags); i++)
		if (word_has_prefix(norm, n, flags[i]))
			return true;
	return false;
}

/* Runs fn over the runtime's own options in the command (those before the
 * main class, jar, module or script), only when the program is the
 * runtime's launcher itself: after a script's name they are the script's. */
static bool scan_runtime_args(const struct cmdline *c, enum mg_runtime rt,
                              bool (*fn)(const char *word, size_t len, void *data), void *data)
{
	if (c->n == 0 || runtime_from_program_name(base_name(c->tok[0])) != rt)
		return false;
	for (size_t i = 1; i < c->n; i++) {
		const char *t = c->tok[i];

		if (rt == MG_RUNTIME_JVM && t[0] == '@')
			continue; /* an argument file: its options, if any, win over ours anyway */
		if (t[0] != '-' || streq(t, "--") || streq(t, "-"))
			return false;
		if (fn(t, strlen(t), data))
			return true;
		if (rt == MG_RUNTIME_JVM) {
			if (streq(t, "-jar") || streq(t, "-m") || streq(t, "--module") ||
			    strncmp(t, "--module=", 9) == 0)
				return false;
			if (jvm_option_takes_value(t))
				i++;
		} else if (node_option_takes_value(t)) {
			i++;
		}
	}
	return false;
}

/* ---------------------------------------------------------------------- */
/* Settings */

__attribute__((format(printf, 4, 5))) static void add_setting(struct mg_env_setting *ret, int *n,
                                                              const char *name, const char *fmt, ...)
{
	struct mg_env_setting *s;
	va_list ap;
	int len;

	if (*n >= MG_HEAP_SETTINGS_MAX || strlen(name) >= sizeof(s->name))
		return;
	s = &ret[*n];
	va_start(ap, fmt);
	len = vsnprintf(s->value, sizeof(s->value), fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(s->value))
		return; /* never a cut-off value */
	snprintf(s->name, sizeof(s->name), "%s", name);
	(*n)++;
}

/* Appends word to a list-valued variable (JAVA_TOOL_OPTIONS, NODE_OPTIONS),
 * keeping the user's value in front; skipped when a wrapper in the command
 * replaces the variable anyway. */
static void append_setting(struct mg_env_setting *ret, int *n, const struct user_env *u, const char *name,
                           const char *word)
{
	bool from_wrapper;
	const char *old = user_env_get(u, name, &from_wrapper);

	if (from_wrapper)
		return;
	if (old && *old)
		add_setting(ret, n, name, "%s %s", old, word);
	else
		add_setting(ret, n, name, "%s", word);
}

static bool user_env_set(const struct user_env *u, const char *name)
{
	return user_env_get(u, name, NULL) != NULL;
}

int mg_heap_settings(enum mg_runtime rt, uint64_t share_bytes, char *const envp[], char *const argv[],
                     struct mg_env_setting ret[MG_HEAP_SETTINGS_MAX])
{
	uint64_t cap = mg_heap_cap(rt, share_bytes), cap_mib = cap / MIB;
	struct cmdline cmd;
	struct user_env u = {.envp = envp, .cmd = &cmd};
	char word[64];
	int n = 0;

	if (!ret || cap == 0)
		return 0;
	cmdline_init(&cmd, argv);
	if (cmdline_unwrap(&cmd) < 0)
		cmd.n = 0; /* keep the wrapper assignments seen so far, scan no options */

	switch (rt) {
	case MG_RUNTIME_PYPY:
		/* PyPy reads K/M/G with an optional B, binary; "1GiB" is silently ignored. */
		if (!user_env_set(&u, "PYPY_GC_MAX"))
			add_setting(ret, &n, "PYPY_GC_MAX", "%" PRIu64 "MB", cap_mib);
		break;
	case MG_RUNTIME_JVM: {
		static const char *const lists[] = {"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"};
		struct jvm_scan scan = {.share = share_bytes, .cap = cap};

		for (size_t i = 0; i < MG_ARRAY_SIZE(lists) && !scan.conflict; i++)
			any_word(user_env_get(&u, lists[i], NULL), jvm_word, &scan);
		if (!scan.conflict)
			scan_runtime_args(&cmd, rt, jvm_word, &scan);
		if (!scan.conflict) {
			snprintf(word, sizeof(word), "-Xmx%" PRIu64 "m", cap_mib);
			append_setting(ret, &n, &u, "JAVA_TOOL_OPTIONS", word);
		}
		/* JIT and GC threads each get a glibc arena of their own; 4 bounds the
		 * off-heap growth that many-core nodes otherwise see. */
		const char *tunables = user_env_get(&u, "GLIBC_TUNABLES", NULL);
		if (!user_env_set(&u, "MALLOC_ARENA_MAX") &&
		    !(tunables && strstr(tunables, "glibc.malloc.arena_max")))
			add_setting(ret, &n, "MALLOC_ARENA_MAX", "4");
		break;
	}
	case MG_RUNTIME_GO:
		/* Go wants an IEC unit: "1536MB" makes the runtime throw at start. */
		if (!user_env_set(&u, "GOMEMLIMIT"))
			add_setting(ret, &n, "GOMEMLIMIT", "%" PRIu64 "MiB", cap_mib);
		break;
	case MG_RUNTIME_NODE:
		if (!any_word(user_env_get(&u, "NODE_OPTIONS", NULL), node_word, NULL) &&
		    !scan_runtime_args(&cmd, rt, node_word, NULL)) {
			snprintf(word, sizeof(word), "--max-old-space-size=%" PRIu64, cap_mib);
			append_setting(ret, &n, &u, "NODE_OPTIONS", word);
		}
		break;
	case MG_RUNTIME_DOTNET:
		/* Any GCHeapHardLimit* (Percent, SOH/LOH/POH) means the user sized it. */
		if (!user_env_has_prefix(&u, "DOTNET_GCHeapHardLimit") &&
		    !user_env_has_prefix(&u, "COMPlus_GCHeapHardLimit"))
			add_setting(ret, &n, "DOTNET_GCHeapHardLimit", "0x%" PRIX64, cap);
		break;
	case MG_RUNTIME_R:
		/* R reads an integer with a K/M/G suffix; a decimal point is rejected. */
		if (!user_env_set(&u, "R_MAX_VSIZE"))
			add_setting(ret, &n, "R_MAX_VSIZE", "%" PRIu64 "M", cap_mib);
		break;
	default:
		break;
	}
	return n;
}
