/* Runtime detection: which language runtime a command runs, and the names of runtimes (see runtime.h). */
#include "runtime/runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/chars.h"
#include "runtime/cmdline.h"
#include "runtime/elf_go.h"
#include "memguard/util.h"

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
/* Program names */

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

enum mg_runtime mg_runtime_from_program_name(const char *base)
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

enum mg_runtime mg_runtime_detect(char *const argv[], const char *path_env, const char **ret_why)
{
	struct mg_cmdline c;
	const char *script = NULL; /* the script whose #! line led here */

	mg_cmdline_init(&c, argv);
	for (;;) {
		char path[PATH_MAX], head[MG_SHEBANG_MAX];
		const char *name, *base;
		enum mg_runtime rt;
		size_t head_len = 0;
		uint64_t file_size = 0;
		int r;

		r = mg_cmdline_unwrap(&c);
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
		rt = mg_runtime_from_program_name(base);
		if (rt != MG_RUNTIME_GENERIC) {
			if (script)
				set_why(ret_why, "#! line of %s", script);
			else
				set_why(ret_why, "program name %s", base);
			return rt;
		}

		/* An unknown name: look at the file itself. */
		if (++c.hops > MG_CMD_HOPS_MAX) {
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
				rt = mg_runtime_from_program_name(base_name(target));
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
			if (mg_cmdline_apply_shebang(&c, path, head, head_len) < 0) {
				set_why(ret_why, "unusable #! line in %s", path);
				return MG_RUNTIME_GENERIC;
			}
			script = name; /* argv or our store: outlives the rewrite */
			continue;
		}
		if (mg_elf_is_go(fd, file_size, (const uint8_t *)head, head_len)) {
			set_why(ret_why, "Go build info in %s", path);
			return MG_RUNTIME_GO;
		}
		set_why(ret_why, "no runtime known for %s", base);
		return MG_RUNTIME_GENERIC;
	}
}

/* ---------------------------------------------------------------------- */
/* Worker pools */

static const char *const pool_names[MG_POOL__COUNT] = {
        [MG_POOL_NONE] = "none",
        [MG_POOL_DASK] = "dask",
        [MG_POOL_CELERY] = "celery",
};

const char *mg_pool_name(enum mg_pool pool)
{
	if ((unsigned)pool >= MG_POOL__COUNT)
		return "invalid";
	return pool_names[pool];
}

/* Whether t is one of opts. */
static bool option_is(const char *t, const char *const *opts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (streq(t, opts[i]))
			return true;
	return false;
}

/* celery [global options] worker ...: the index of "worker", or 0. */
static size_t celery_worker_index(const struct mg_cmdline *c, size_t i)
{
	/* celery/bin/celery.py: the global options that take a value. */
	static const char *const with_value[] = {
	        "-A", "--app", "-b", "--broker", "--result-backend", "--loader", "--config", "--workdir"};

	for (; i < c->n; i++) {
		const char *t = c->tok[i];

		if (t[0] != '-')
			return streq(t, "worker") ? i : 0;
		if (option_is(t, with_value, MG_ARRAY_SIZE(with_value)))
			i++;
	}
	return 0;
}

/* python [options] -m MODULE: the index of MODULE, or 0. */
static size_t python_module_index(const struct mg_cmdline *c)
{
	for (size_t i = 1; i < c->n; i++) {
		const char *t = c->tok[i];

		if (t[0] != '-' || streq(t, "-") || streq(t, "--") || streq(t, "-c"))
			return 0; /* a script, stdin or -c: no module */
		if (streq(t, "-m"))
			return i + 1 < c->n ? i + 1 : 0;
		if (streq(t, "-W") || streq(t, "-X") || streq(t, "--check-hash-based-pycs"))
			i++;
	}
	return 0;
}

enum mg_pool mg_pool_locate(const struct mg_cmdline *c, size_t *ret_first)
{
	const char *base;
	size_t w;

	*ret_first = c->n;
	if (c->n == 0)
		return MG_POOL_NONE;
	base = base_name(c->tok[0]);
	if (streq(base, "dask-worker")) {
		*ret_first = 1;
		return MG_POOL_DASK;
	}
	if (streq(base, "dask")) {
		if (c->n < 2 || !streq(c->tok[1], "worker"))
			return MG_POOL_NONE;
		*ret_first = 2;
		return MG_POOL_DASK;
	}
	if (streq(base, "celery")) {
		w = celery_worker_index(c, 1);
		if (w == 0)
			return MG_POOL_NONE;
		*ret_first = w + 1;
		return MG_POOL_CELERY;
	}
	switch (mg_runtime_from_program_name(base)) {
	case MG_RUNTIME_CPYTHON:
	case MG_RUNTIME_PYPY:
		break;
	default:
		return MG_POOL_NONE;
	}
	w = python_module_index(c);
	if (w == 0)
		return MG_POOL_NONE;
	if (streq(c->tok[w], "distributed.cli.dask_worker")) {
		*ret_first = w + 1;
		return MG_POOL_DASK;
	}
	if (streq(c->tok[w], "celery")) {
		w = celery_worker_index(c, w + 1);
		if (w == 0)
			return MG_POOL_NONE;
		*ret_first = w + 1;
		return MG_POOL_CELERY;
	}
	return MG_POOL_NONE;
}

enum mg_pool mg_pool_detect(char *const argv[])
{
	struct mg_cmdline c;
	size_t first;

	mg_cmdline_init(&c, argv);
	if (mg_cmdline_unwrap(&c) < 0)
		return MG_POOL_NONE;
	return mg_pool_locate(&c, &first);
}
