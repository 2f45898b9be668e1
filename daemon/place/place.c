/* Where memguardd puts an ordinary user's run: the pure decision. */
#include "place/place.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "memguard/units.h"
#include "memguard/util.h"

bool mg_place_job_id_valid(const char *s)
{
	size_t len = strlen(s);

	if (len == 0 || len > 64 || s[0] == '.')
		return false;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-[]") == len;
}

int mg_place_parse_request(char *line, const char **ret_job_hint, uint64_t *ret_budget)
{
	char *word, *save = NULL;

	line[strcspn(line, "\r\n")] = '\0';
	*ret_job_hint = NULL;
	*ret_budget = 0;
	if (strncmp(line, "place", 5) != 0 || (line[5] != '\0' && line[5] != ' '))
		return -EINVAL;
	for (word = strtok_r(line + 5, " ", &save); word; word = strtok_r(NULL, " ", &save)) {
		if (strncmp(word, "job=", 4) == 0 && !*ret_job_hint && mg_place_job_id_valid(word + 4))
			*ret_job_hint = word + 4;
		else if (strncmp(word, "budget=", 7) == 0 && !*ret_budget &&
		         mg_parse_u64(word + 7, ret_budget) == 0 && *ret_budget > 0)
			continue;
		else
			goto bad;
	}
	return 0;
bad:
	*ret_job_hint = NULL;
	*ret_budget = 0;
	return -EINVAL;
}

uint64_t mg_place_caller_limit(uint64_t limit, uint64_t taken, uint64_t current)
{
	uint64_t least = (uint64_t)((unsigned __int128)limit * MG_PLACE_CALLER_PERCENT / 100);
	uint64_t held =
	        current > UINT64_MAX - MG_PLACE_CALLER_MIN ? UINT64_MAX : current + MG_PLACE_CALLER_MIN;

	if (limit == MG_SIZE_UNLIMITED || taken == 0)
		return MG_SIZE_UNLIMITED;
	if (least < MG_PLACE_CALLER_MIN)
		least = MG_PLACE_CALLER_MIN;
	if (least < held)
		least = held;
	return taken < limit && limit - taken > least ? limit - taken : least;
}

/* The caller's job cgroup, or -1: the hinted one if it is the caller's, else
 * the caller's only one when there is no hint. */
static long choose_job(const struct mg_place_request *req, const struct mg_place_job *jobs, size_t njobs)
{
	long found = -1;
	size_t owned = 0;

	for (size_t i = 0; i < njobs; i++) {
		if (jobs[i].owner != req->uid || !jobs[i].has_leaf)
			continue;
		if (req->job_hint && strcmp(req->job_hint, jobs[i].name) == 0)
			return (long)i;
		owned++;
		found = (long)i;
	}
	return !req->job_hint && owned == 1 ? found : -1;
}

bool mg_place_path_placed(const char *path)
{
	static const char *const parents[] = {MG_PLACE_RUNS_PARENT "/", MG_PLACE_JOBS_PARENT "/",
	                                      MG_PLACE_SLICE "/"};

	for (size_t i = 0; i < MG_ARRAY_SIZE(parents); i++)
		if (strncmp(path, parents[i], strlen(parents[i])) == 0)
			return true;
	for (const char *c = path; c; c = strchr(c, '/')) {
		c += *c == '/';
		if (strncmp(c, MG_PLACE_RUN_PREFIX, strlen(MG_PLACE_RUN_PREFIX)) == 0)
			return true;
	}
	return false;
}

long mg_place_chain_paths(const char *path, char (*paths)[MG_PLACE_PATH_MAX], size_t max)
{
	size_t n;

	if (strlen(path) >= MG_PLACE_PATH_MAX)
		return -ENAMETOOLONG;
	if (max == 0 || !*path)
		return 0;
	snprintf(paths[0], MG_PLACE_PATH_MAX, "%s", path);
	for (n = 1; n < max; n++) {
		const char *slash = strrchr(paths[n - 1], '/');
		if (!slash)
			break;
		size_t len = (size_t)(slash - paths[n - 1]);
		memcpy(paths[n], paths[n - 1], len);
		paths[n][len] = '\0';
	}
	return (long)n;
}

enum mg_place_kind mg_place_decide(const struct mg_place_request *req, const struct mg_place_origin *chain,
                                   size_t n, const struct mg_place_job *jobs, size_t njobs,
                                   struct mg_place_verdict *ret)
{
	char s[MG_SIZE_STRLEN];

	*ret = (struct mg_place_verdict){
	        .kind = MG_PLACE_REFUSE, .limit = MG_SIZE_UNLIMITED, .limit_from = -1, .parent = -1};
	if (n > 0 && mg_place_path_placed(chain[0].path)) {
		snprintf(ret->why, sizeof(ret->why),
		         "cgroup %s is a placed run or a job cgroup already: use it directly", chain[0].path);
		return ret->kind;
	}
	if (n > 0 && strchr(chain[n - 1].path, '/')) {
		snprintf(ret->why, sizeof(ret->why),
		         "cgroup %s is nested deeper than memguardd reads: a limit above it would go unseen",
		         chain[0].path);
		return ret->kind;
	}
	if (n > 0 && chain[0].own_limit && chain[0].own_limit[0]) {
		snprintf(ret->why, sizeof(ret->why),
		         "cgroup %s sets %s itself, and a run beside it would escape that limit",
		         chain[0].path, chain[0].own_limit);
		return ret->kind;
	}
	/* The smallest limit; of equal ones the outermost. */
	for (size_t i = 0; i < n; i++) {
		if (chain[i].limit == MG_SIZE_UNLIMITED || chain[i].limit > ret->limit)
			continue;
		ret->limit = chain[i].limit;
		ret->limit_from = (long)i;
	}
	long job = ret->limit_from < 0 ? choose_job(req, jobs, njobs) : -1;
	if (job >= 0) {
		ret->kind = MG_PLACE_JOB;
		ret->job = (size_t)job;
		snprintf(ret->why, sizeof(ret->why), "the job cgroup %s/%s prepared for this user",
		         MG_PLACE_JOBS_PARENT, jobs[job].name);
		return ret->kind;
	}
	if (req->runs_of_uid >= req->max_runs_per_uid) {
		snprintf(ret->why, sizeof(ret->why), "this user has %u placed runs already (the limit is %u)",
		         req->runs_of_uid, req->max_runs_per_uid);
		return ret->kind;
	}
	ret->kind = MG_PLACE_RUN;
	ret->parent = n >= 2 ? 1 : -1;
	if (n == 0)
		snprintf(ret->why, sizeof(ret->why), "no limit: the caller is in the root cgroup");
	else if (ret->limit_from >= 0)
		snprintf(ret->why, sizeof(ret->why), "memory.max %s of cgroup %s",
		         mg_size_format(ret->limit, s), chain[ret->limit_from].path);
	else
		snprintf(ret->why, sizeof(ret->why), "no limit on cgroup %s or its ancestors", chain[0].path);
	return ret->kind;
}
