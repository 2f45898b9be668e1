/* libFuzzer target: the placement protocol's lines, the daemon's side
 * (mg_place_parse_request, mg_place_job_id_valid) and the launcher's
 * (mg_place_parse_reply). */
#include <errno.h>

#include "run/askplace.h"
#include "fuzz.h"
#include "memguard/units.h"
#include "place/place.h"

static void fuzz_request(const char *text)
{
	char *line = strdup(text);
	const char *hint = (const char *)1;
	uint64_t budget = 1;
	int r;

	if (!line)
		return;
	r = mg_place_parse_request(line, &hint, &budget);
	check(r == 0 || r == -EINVAL, "mg_place_parse_request errors", text);
	if (r == 0) {
		check(strncmp(text, "place", 5) == 0, "a request starts with place", text);
		check(!hint || (mg_place_job_id_valid(hint) && hint > line && hint < line + strlen(text)),
		      "a hint is a valid id inside the line", text);
		check(!hint || (!strchr(hint, '/') && strcmp(hint, "..") != 0),
		      "a hint cannot leave the jobs directory", text);
		check(budget == 0 || strstr(text, "budget="), "a budget only where the line says one", text);
	} else {
		check(hint == NULL && budget == 0, "a refused request has no hint and no budget", text);
	}
	free(line);

	/* The first line as a job id. */
	char id[80];
	size_t len = strcspn(text, "\n");
	if (len < sizeof(id)) {
		memcpy(id, text, len);
		id[len] = '\0';
		if (mg_place_job_id_valid(id))
			check(len >= 1 && len <= 64 && id[0] != '.' && !strchr(id, '/') && !strchr(id, ' '),
			      "a valid job id is 1 to 64 safe characters", text);
	}
}

static void fuzz_reply(const char *text)
{
	struct mg_place_answer a;
	char why[128];
	int r;

	memset(why, 'Z', sizeof(why));
	r = mg_place_parse_reply(text, &a, why, sizeof(why));
	check(r == 0 || r == -EPERM || r == -EBADMSG, "mg_place_parse_reply errors", text);
	if (r == 0) {
		check(strncmp(text, "ok ", 3) == 0 || strncmp(text, " ", 1) == 0, "a good reply says ok",
		      text);
		check(memchr(a.cgroup, '\0', sizeof(a.cgroup)) &&
		              memchr(a.limit_from, '\0', sizeof(a.limit_from)),
		      "cgroups terminated", text);
		check(a.cgroup[0] != '\0' && a.cgroup[0] != '/' && !strstr(a.cgroup, ".."),
		      "the cgroup is below the mount", text);
		check(a.kind == MG_PLACE_ANSWER_JOB || a.kind == MG_PLACE_ANSWER_RUN, "a known kind", text);
		check(a.limit != 0, "a limit is never 0", text);
		check(a.kind == MG_PLACE_ANSWER_RUN || (a.limit == MG_SIZE_UNLIMITED && !a.limit_from[0]),
		      "a job answer has no limit", text);
		check(!strchr(a.cgroup, ' ') && !strchr(a.cgroup, '\n'), "the cgroup is one word", text);
	} else {
		/* "err " with no reason gives an empty why: only a bad reply is ours to explain. */
		check(memchr(why, '\0', sizeof(why)) != NULL, "why is terminated", text);
		check(r != -EBADMSG || why[0] != '\0', "a bad reply says why", text);
		check(r != -EPERM || strncmp(text, "err ", 4) == 0, "-EPERM only for err", text);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);

	if (!text)
		return 0;
	fuzz_request(text);
	fuzz_reply(text);
	free(text);
	return 0;
}
