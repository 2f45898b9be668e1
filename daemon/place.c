/* Where memguardd puts an ordinary user's run: the pure decision. */
#include "place.h"

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

int mg_place_parse_request(char *line, const char **ret_job_hint)
{
	line[strcspn(line, "\r\n")] = '\0';
	*ret_job_hint = NULL;
	if (strcmp(line, "place") == 0)
		return 0;
	if (strncmp(line, "place job=", strlen("place job=")) != 0)
		return -EINVAL;
	const char *id = line + strlen("place job=");
	if (!mg_place_job_id_valid(id))
		return -EINVAL;
	*ret_job_hint = id;
	return 0;
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

/* True when a is b or one of b's ancestors (paths below the mount). */
static bool path_within(const char *a, const char *b)
{
	size_t len = strlen(a);

	return len > 0 && strncmp(a, b, len) == 0 && (b[len] == '\0' || b[len] == '/');
}

/* True when root is, holds or lies within the limit root of one of the
 * caller's runs: the same limit, or one set on an ancestor after that run
 * was placed (or lifted from one since), still covers both. */
static bool limit_root_held(const struct mg_place_request *req, const char *root)
{
	for (unsigned i = 0; root && req->run_roots && i < req->runs_of_uid; i++)
		if (path_within(req->run_roots[i], root) || path_within(root, req->run_roots[i]))
			return true;
	return false;
}

bool mg_place_path_placed(const char *path)
{
	static const char *const parents[] = {MG_PLACE_RUNS_PARENT "/", MG_PLACE_JOBS_PARENT "/",
	                                      MG_PLACE_SLICE "/"};

	for (size_t i = 0; i < MG_ARRAY_SIZE(parents); i++)
		if (strncmp(path, parents[i], strlen(parents[i])) == 0)
			return true;
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

	*ret = (struct mg_place_verdict){.kind = MG_PLACE_REFUSE,
	                                 .limit = MG_SIZE_UNLIMITED,
	                                 .limit_from = -1,
	                                 .tether = -1,
	                                 .limit_root = -1};
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
	long job = choose_job(req, jobs, njobs);
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
	/* The smallest limit; of equal ones the outermost, which outlives job steps. */
	for (size_t i = 0; i < n; i++) {
		if (chain[i].limit == MG_SIZE_UNLIMITED)
			continue;
		ret->limit_root = (long)i;
		if (chain[i].limit > ret->limit)
			continue;
		ret->limit = chain[i].limit;
		ret->limit_from = (long)i;
	}
	if (limit_root_held(req, ret->limit_root >= 0 ? chain[ret->limit_root].path : NULL)) {
		snprintf(ret->why, sizeof(ret->why),
		         "another placed run of this user already takes the limit of cgroup %s, and a job's "
		         "limit covers one placed run at a time",
		         chain[ret->limit_root].path);
		return ret->kind;
	}
	ret->kind = MG_PLACE_RUN;
	/* In the root cgroup (no chain: a node without systemd) nothing to end with. */
	ret->tether = ret->limit_from >= 0 ? ret->limit_from : n > 0 ? 0 : -1;
	if (n == 0)
		snprintf(ret->why, sizeof(ret->why), "no limit: the caller is in the root cgroup");
	else if (ret->limit_from >= 0)
		snprintf(ret->why, sizeof(ret->why), "memory.max %s of cgroup %s",
		         mg_size_format(ret->limit, s), chain[ret->limit_from].path);
	else
		snprintf(ret->why, sizeof(ret->why), "no limit on cgroup %s or its ancestors", chain[0].path);
	return ret->kind;
}
