/* libFuzzer harness for memguard's text parsers: every input, NUL-terminated,
 * goes to each parser in turn, and a few properties that must hold for any
 * input are checked (abort() marks a finding). Build and run: README.md. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memguard/cgroup.h"
#include "memguard/config.h"
#include "memguard/locate.h"
#include "memguard/meminfo.h"
#include "memguard/psi.h"
#include "memguard/units.h"
#include "memguard/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok, const char *what, const char *text)
{
	if (!ok) {
		fprintf(stderr, "property violated: %s (input \"%.200s\")\n", what, text);
		abort();
	}
}

static void fuzz_size(const char *text)
{
	static const uint64_t bases[] = {0, 1, 1000, 16ull << 30, UINT64_MAX};

	for (size_t i = 0; i < MG_ARRAY_SIZE(bases); i++) {
		uint64_t v = 0, back = 0;
		const char *why = NULL;
		char buf[MG_SIZE_STRLEN];
		int r = mg_size_parse(text, bases[i], &v, &why);

		if (r < 0) {
			check(r == -EINVAL || r == -ERANGE, "mg_size_parse error is -EINVAL or -ERANGE",
			      text);
			check(why != NULL, "mg_size_parse sets why on failure", text);
			continue;
		}
		/* What parses formats, and what formats parses back. */
		mg_size_format(v, buf);
		check(strlen(buf) < MG_SIZE_STRLEN, "mg_size_format fits", text);
		r = mg_size_parse(buf, 0, &back, &why);
		check(r == 0, "mg_size_format output parses", text);
		if (v == MG_SIZE_UNLIMITED)
			check(back == MG_SIZE_UNLIMITED, "max formats and parses as max", text);
	}
}

static void fuzz_duration(const char *text)
{
	uint64_t usec = 0;
	const char *why = NULL;
	int r = mg_duration_parse(text, &usec, &why);

	if (r < 0)
		check(why != NULL && (r == -EINVAL || r == -ERANGE), "mg_duration_parse error and why", text);
}

static void fuzz_psi(const char *text)
{
	struct mg_psi psi;

	if (mg_psi_parse(text, &psi) < 0)
		return;
	check(psi.some.present, "a parsed pressure file has a some line", text);
	check(psi.some.avg10 <= 10000 && psi.some.avg60 <= 10000 && psi.some.avg300 <= 10000,
	      "some averages at most 100.00", text);
	check(psi.full.avg10 <= 10000 && psi.full.avg60 <= 10000 && psi.full.avg300 <= 10000,
	      "full averages at most 100.00", text);
}

static void fuzz_meminfo(const char *text)
{
	struct mg_meminfo m;

	if (mg_meminfo_parse(text, &m) == 0)
		check(m.mem_total % 1024 == 0 && m.mem_available % 1024 == 0, "meminfo values are whole kB",
		      text);
}

static void fuzz_events(const char *text)
{
	struct mg_memory_events ev;

	(void)mg_memory_events_parse(text, &ev);
}

static void fuzz_proc_cgroup(const char *text)
{
	char *path = NULL;

	if (mg_proc_cgroup_parse(text, &path) == 0) {
		check(path && path[0] == '/', "a cgroup v2 path is absolute", text);
		check(!strchr(path, '\n'), "a cgroup v2 path is one line", text);
		free(path);
	}
}

static void fuzz_mountinfo(const char *text)
{
	struct mg_cgroup_mounts m;

	if (mg_mountinfo_parse_cgroups(text, &m) == 0) {
		/* \012 may make a newline; unescaping never makes a path longer. */
		check(!m.v2 || strlen(m.v2) <= strlen(text), "a mount point is no longer than its line",
		      text);
		check(!m.v1_memory || strlen(m.v1_memory) <= strlen(text),
		      "a mount point is no longer than its line", text);
		mg_cgroup_mounts_done(&m);
	}
}

static void fuzz_keyed(const char *text)
{
	/* The first line names a key to look up in the rest. */
	const char *nl = strchr(text, '\n');
	char key[64];
	uint64_t v;

	if (!nl || (size_t)(nl - text) >= sizeof(key))
		return;
	memcpy(key, text, (size_t)(nl - text));
	key[nl - text] = '\0';
	int r = mg_keyed_u64(nl + 1, key, &v);
	check(r == 0 || r == -ENOENT || r == -EBADMSG, "mg_keyed_u64 errors", text);
}

static void fuzz_config(const char *text)
{
	struct mg_config cfg, before;
	char err[256];
	int r;

	mg_config_defaults(&cfg);
	memcpy(&before, &cfg, sizeof(cfg));
	memset(err, 'Z', sizeof(err));
	r = mg_config_parse_string(&cfg, text, "fuzz.conf", err, sizeof(err));
	if (r < 0) {
		check(r == -EINVAL, "mg_config_parse_string fails with -EINVAL", text);
		check(memchr(err, '\0', sizeof(err)) != NULL, "error message terminated", text);
		check(strncmp(err, "fuzz.conf:", 10) == 0, "error message starts with origin:", text);
		check(memcmp(&cfg, &before, sizeof(cfg)) == 0, "a failed parse leaves the config unchanged",
		      text);
		return;
	}
	check(memchr(cfg.reserve, '\0', sizeof(cfg.reserve)) != NULL, "reserve terminated", text);
	check(memchr(cfg.parent, '\0', sizeof(cfg.parent)) != NULL, "parent terminated", text);
	check(cfg.parent[0] != '.' && !strchr(cfg.parent, '/'), "parent is a plain name", text);
	check(cfg.high_percent <= 100, "memory_high at most 100%", text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	fuzz_size(text);
	fuzz_duration(text);
	fuzz_psi(text);
	fuzz_meminfo(text);
	fuzz_events(text);
	fuzz_proc_cgroup(text);
	fuzz_mountinfo(text);
	fuzz_keyed(text);
	fuzz_config(text);

	free(text);
	return 0;
}
