/* libFuzzer target: task commands (launcher/runtime/cmdline.h). The input split at
 * NULs is an argv for mg_cmdline_unwrap; its first bytes are also a script
 * head for mg_shebang_parse and mg_cmdline_apply_shebang. */
#include <errno.h>

#include "runtime/cmdline.h"
#include "fuzz.h"
#include "memguard/util.h"
#include "runtime/runtime.h"

/* Whether s is one of argv's strings or lies in c's store. */
static bool borrowed_or_stored(const struct mg_cmdline *c, const char *s, char *const argv[])
{
	if (s >= c->store && s < c->store + c->store_used)
		return true;
	for (size_t i = 0; argv[i]; i++)
		if (s == argv[i] || (s > argv[i] && s <= argv[i] + strlen(argv[i])))
			return true;
	return false;
}

static void check_cmdline(const struct mg_cmdline *c, char *const argv[], const char *text)
{
	check(c->n <= MG_CMD_TOKENS_MAX, "at most MG_CMD_TOKENS_MAX tokens", text);
	check(c->store_used <= MG_CMD_STORE_SIZE, "the store does not overflow", text);
	check(c->n_assign <= MG_CMD_ASSIGN_MAX, "at most MG_CMD_ASSIGN_MAX assignments", text);
	for (size_t i = 0; i < c->n; i++)
		check(c->tok[i] && borrowed_or_stored(c, c->tok[i], argv), "tokens are argv's or stored",
		      text);
	for (size_t i = 0; i < c->n_assign; i++)
		check(c->assign[i] && strchr(c->assign[i], '=') && borrowed_or_stored(c, c->assign[i], argv),
		      "assignments are NAME=value from argv or the store", text);
}

static void fuzz_unwrap(char *buf, size_t size)
{
	char *argv[MG_CMD_TOKENS_MAX + 2];
	size_t n = 0;
	struct mg_cmdline c;
	int r;

	/* buf holds size bytes and a NUL: each NUL ends one argument. */
	for (size_t at = 0; at < size && n < MG_ARRAY_SIZE(argv) - 1; at += strlen(buf + at) + 1)
		argv[n++] = buf + at;
	argv[n] = NULL;
	mg_cmdline_init(&c, argv);
	check_cmdline(&c, argv, buf);
	r = mg_cmdline_unwrap(&c);
	check(r == 0 || r == -ENOENT || r == -ELOOP || r == -E2BIG || r == -EINVAL,
	      "mg_cmdline_unwrap errors", buf);
	check_cmdline(&c, argv, buf);
	check(c.hops <= MG_CMD_HOPS_MAX + 1, "hops are bounded", buf);
	if (r == 0) {
		size_t n_before = c.n;
		const char *head = c.tok[0];

		check(c.n > 0 && c.tok[0][0] != '\0' && strcmp(c.tok[0], "--") != 0,
		      "an unwrapped command names a program", buf);
		/* Unwrapping is done once: the program found is no wrapper. */
		c.hops = 0;
		check(mg_cmdline_unwrap(&c) == 0 && c.n == n_before && c.tok[0] == head,
		      "unwrapping twice changes nothing", buf);
		const char *base = strrchr(head, '/');
		check((unsigned)mg_runtime_from_program_name(base ? base + 1 : head) < MG_RUNTIME__COUNT,
		      "a program name maps to a runtime", buf);
	}
}

static bool blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

static void fuzz_shebang(const char *buf, size_t size)
{
	size_t len = size < MG_SHEBANG_MAX ? size : MG_SHEBANG_MAX;
	struct mg_span interp, arg;
	char *argv[] = {(char *)"script", (char *)"a1", NULL};
	struct mg_cmdline c;
	int r = mg_shebang_parse(buf, len, &interp, &arg);

	check(r == 0 || r == -ENOEXEC, "mg_shebang_parse errors", buf);
	if (r == 0) {
		check(len >= 2 && buf[0] == '#' && buf[1] == '!', "a #! line starts with #!", buf);
		check(interp.p >= buf + 2 && interp.len > 0 && interp.p + interp.len <= buf + len,
		      "the interpreter lies in the line", buf);
		check(arg.p >= interp.p + interp.len && arg.p + arg.len <= buf + len,
		      "the argument follows it", buf);
		check(!memchr(interp.p, '\n', interp.len) && !memchr(interp.p, '\0', interp.len) &&
		              !memchr(arg.p, '\n', arg.len) && !memchr(arg.p, '\0', arg.len),
		      "one line, no NUL", buf);
		for (size_t i = 0; i < interp.len; i++)
			check(!blank(interp.p[i]), "the interpreter has no blank", buf);
		check(arg.len == 0 ||
		              (!blank(arg.p[0]) && !blank(arg.p[arg.len - 1]) && arg.p[arg.len - 1] != '\r'),
		      "the argument is trimmed", buf);
	}
	mg_cmdline_init(&c, argv);
	int a = mg_cmdline_apply_shebang(&c, "/jobs/script", buf, len);
	check(a == 0 || a == -ENOEXEC || a == -E2BIG, "mg_cmdline_apply_shebang errors", buf);
	check((a == -ENOEXEC) == (r == -ENOEXEC), "apply_shebang fails exactly when parsing does", buf);
	if (a == 0) {
		check(c.n == (arg.len ? 4u : 3u), "interp [arg] path a1", buf);
		check(strcmp(c.tok[c.n - 2], "/jobs/script") == 0 && strcmp(c.tok[c.n - 1], "a1") == 0,
		      "the script's path and arguments follow", buf);
		check(strlen(c.tok[0]) >= interp.len &&
		              memcmp(c.tok[0] + strlen(c.tok[0]) - interp.len, interp.p, interp.len) == 0,
		      "the interpreter comes first", buf);
		check_cmdline(&c, argv, buf);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_text(data, size);

	if (!buf)
		return 0;
	fuzz_shebang(buf, size);
	fuzz_unwrap(buf, size);
	free(buf);
	return 0;
}
