/* Where memguardd puts an ordinary user's run: the pure decision. */
#include "place/place.h"

#include <errno.h>
#include <fnmatch.h>
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

bool mg_place_beside(const char *path, const char *globs)
{
	char glob[512];

	for (const char *p = globs + strspn(globs, " \t"); *p; p += strspn(p, " \t")) {
		size_t len = strcspn(p, " \t");
		if (len < sizeof(glob)) {
			memcpy(glob, p, len);
			glob[len] = '\0';
			if (fnmatch(glob, path, FNM_PATHNAME) == 0)
				return true;
		}
		p += len;
	}
	return false;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Whether the word is in the space-separated list. */
static bool listed(const char *list, const char *word, size_t len)
{
	for (const char *p = list + strspn(list, " \n"); *p; p += strspn(p, " \n")) {
		size_t n = strcspn(p, " \n");
		if (n == len && strncmp(p, word, len) == 0)
			return true;
		p += n;
	}
	return false;
}

bool mg_place_limit_file(const char *name, const char *controllers)
{
	size_t len = strcspn(name, ".");

	if (strcmp(name, "cgroup.max.descendants") == 0 || strcmp(name, "cgroup.max.depth") == 0)
		return true;
	if (!name[len] || !listed(controllers, name, len) || strcmp(name, "pids.max") == 0)
		return false;
	if (strncmp(name, "cpuset.", 7) == 0)
		return !ends_with(name, ".effective");
	return ends_with(name, ".max") || ends_with(name, ".high");
}

bool mg_place_limit_set(const char *name, const char *value)
{
	if (strncmp(name, "cpuset.", 7) == 0) {
		size_t len = strcspn(value, "\n");
		if (strcmp(name, "cpuset.cpus.partition") == 0)
			return !(len == 6 && strncmp(value, "member", 6) == 0);
		return len > 0;
	}
	/* cpu.max is "<quota> <period>": only the quota limits. */
	if (strcmp(name, "cpu.max") == 0)
		return strncmp(value, "max", 3) != 0 || (value[3] != ' ' && value[3] != '\n' && value[3]);
	/* One value, or lines of a device or resource name and its values
	 * (io.max "8:0 rbps=max wbps=max ...", rdma.max, misc.max "sev max"). */
	for (const char *line = value; *line; line += *line == '\n') {
		size_t words = 0;
		for (const char *w = line + strspn(line, " "); *w && *w != '\n'; w += strspn(w, " ")) {
			size_t len = strcspn(w, " \n");
			const char *eq = memchr(w, '=', len);
			const char *v = eq ? eq + 1 : w;
			size_t vlen = len - (size_t)(v - w);
			bool unlimited = vlen == 3 && strncmp(v, "max", 3) == 0;
			bool name_word = words == 0 && !eq && !unlimited && w[len] == ' ';
			if (!unlimited && !name_word)
				return true;
			words++;
			w += len;
		}
		line += strcspn(line, "\n");
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

/* Whether a run beside the caller's cgroup is refused, and why in ret->why:
 * only a job's own task cgroup, holding the caller's uid's processes alone,
 * is one memguardd writes a limit on and places beside. */
static bool refuse_beside(const struct mg_place_request *req, const struct mg_place_origin *chain, size_t n,
                          struct mg_place_verdict *ret)
{
	const struct mg_place_caller *who = &req->who;

	if (n < 2)
		snprintf(ret->why, sizeof(ret->why), "cgroup %s is in no job: no run is made beside %s",
		         n ? chain[0].path : "/", n ? "a top-level cgroup" : "the root cgroup");
	else if (!mg_place_beside(chain[0].path, req->beside ? req->beside : ""))
		snprintf(ret->why, sizeof(ret->why),
		         "cgroup %s is not a job's task cgroup (memguardd's [daemon] place_beside): a run "
		         "is made only beside one",
		         chain[0].path);
	else if (who->stranger < 0)
		snprintf(
		        ret->why, sizeof(ret->why),
		        "cgroup %s: whose are its processes could not be told, and a run is made only beside "
		        "a cgroup of the caller's uid's processes alone",
		        chain[0].path);
	else if (who->stranger > 0)
		snprintf(ret->why, sizeof(ret->why),
		         "cgroup %s holds pid %d of another uid: a run is made only beside a cgroup of the "
		         "caller's uid's processes alone",
		         chain[0].path, (int)who->stranger);
	else if (who->own_pids_max && who->runs > 0)
		snprintf(ret->why, sizeof(ret->why),
		         "cgroup %s sets pids.max itself, and the run beside it has that budget already",
		         chain[0].path);
	else if (who->watches + 2 > who->max_watches)
		snprintf(ret->why, sizeof(ret->why),
		         "this user's runs and cgroups hold %u of memguardd's inotify watches (the limit is "
		         "%u)",
		         who->watches, who->max_watches);
	else
		return false;
	return true;
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
	if (refuse_beside(req, chain, n, ret))
		return ret->kind;
	ret->kind = MG_PLACE_RUN;
	ret->parent = 1;
	if (ret->limit_from >= 0)
		snprintf(ret->why, sizeof(ret->why), "memory.max %s of cgroup %s",
		         mg_size_format(ret->limit, s), chain[ret->limit_from].path);
	else
		snprintf(ret->why, sizeof(ret->why), "no limit on cgroup %s or its ancestors", chain[0].path);
	return ret->kind;
}
