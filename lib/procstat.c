/* Process table snapshots from /proc/<pid>/stat for the RSS watchdog. */
#include "memguard/procstat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memguard/util.h"

const char *mg_status_field(const char *text, const char *key)
{
	size_t len = strlen(key);
	const char *line = text;

	while (line && *line) {
		if (strncmp(line, key, len) == 0 && line[len] == ':') {
			const char *value = line + len + 1;
			while (*value == ' ' || *value == '\t')
				value++;
			return value;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return NULL;
}

int mg_proc_stat_parse(const char *text, struct mg_proc *ret)
{
	struct mg_proc p = {0};
	const char *open = strchr(text, '('), *close = strrchr(text, ')');
	long long pid, ppid, pgrp;
	unsigned long long rss, start;
	char state;

	if (!open || !close || close < open || sscanf(text, "%lld", &pid) != 1 || pid <= 0 || pid > INT32_MAX)
		return -EBADMSG;
	size_t clen = (size_t)(close - open - 1);
	if (clen >= sizeof(p.comm))
		clen = sizeof(p.comm) - 1;
	memcpy(p.comm, open + 1, clen);
	/* After comm: state ppid pgrp session tty_nr tpgid flags minflt cminflt
	 * majflt cmajflt utime stime cutime cstime priority nice num_threads
	 * itrealvalue starttime vsize rss */
	if (sscanf(close + 1,
	           " %c %lld %lld %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu %*u "
	           "%llu",
	           &state, &ppid, &pgrp, &start, &rss) != 5)
		return -EBADMSG;
	if (ppid < 0 || ppid > INT32_MAX || pgrp < 0 || pgrp > INT32_MAX)
		return -EBADMSG;
	p.pid = (pid_t)pid;
	p.ppid = (pid_t)ppid;
	p.pgrp = (pid_t)pgrp;
	p.state = state;
	p.rss_pages = rss;
	p.start_time = start;
	*ret = p;
	return 0;
}

static int by_pid(const void *a, const void *b);

int mg_proc_scan(int procfd, struct mg_proc **ret_procs)
{
	_cleanup_close_ int dupfd = openat(procfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_free_ struct mg_proc *procs = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *dir;

	if (dupfd < 0)
		return -errno;
	dir = fdopendir(dupfd);
	if (!dir)
		return -errno;
	dupfd = -1;
	while ((de = readdir(dir))) {
		char name[300], buf[1024];
		if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
		    de->d_name[strspn(de->d_name, "0123456789")])
			continue;
		snprintf(name, sizeof(name), "%s/stat", de->d_name);
		if (mg_read_small_at(procfd, name, buf, sizeof(buf)) <= 0)
			continue; /* gone already */
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			struct mg_proc *bigger = realloc(procs, ncap * sizeof(*procs));
			if (!bigger) {
				closedir(dir);
				return -ENOMEM;
			}
			procs = bigger;
			cap = ncap;
		}
		if (mg_proc_stat_parse(buf, &procs[n]) == 0)
			n++;
	}
	closedir(dir);
	if (n > 0)
		qsort(procs, n, sizeof(*procs), by_pid);
	*ret_procs = TAKE_PTR(procs);
	return (int)n;
}

static int by_pid(const void *a, const void *b)
{
	pid_t x = ((const struct mg_proc *)a)->pid, y = ((const struct mg_proc *)b)->pid;
	return (x > y) - (x < y);
}

static long find_index(const struct mg_proc *procs, size_t nprocs, pid_t pid)
{
	struct mg_proc key = {.pid = pid};

	if (nprocs == 0)
		return -1;
	const struct mg_proc *hit = bsearch(&key, procs, nprocs, sizeof(*procs), by_pid);

	return hit ? hit - procs : -1;
}

void mg_proc_tree_rss(const struct mg_proc *procs, size_t nprocs, const pid_t *roots, size_t nroots,
                      uint64_t *ret_pages)
{
	for (size_t r = 0; r < nroots; r++)
		ret_pages[r] = 0;
	for (size_t i = 0; i < nprocs; i++) {
		long r = mg_proc_root_of(procs, nprocs, roots, nroots, procs[i].pid);
		if (r >= 0)
			ret_pages[r] += procs[i].rss_pages;
	}
}

static int seen_by_pid(const void *a, const void *b)
{
	pid_t x = ((const struct mg_proc_seen *)a)->pid, y = ((const struct mg_proc_seen *)b)->pid;
	return (x > y) - (x < y);
}

void mg_proc_seen_sort(struct mg_proc_seen *seen, size_t nseen)
{
	if (nseen > 0)
		qsort(seen, nseen, sizeof(*seen), seen_by_pid);
}

const struct mg_proc_seen *mg_proc_seen_find(const struct mg_proc_seen *seen, size_t nseen, pid_t pid)
{
	struct mg_proc_seen key = {.pid = pid};

	return nseen ? bsearch(&key, seen, nseen, sizeof(*seen), seen_by_pid) : NULL;
}

static long task_of(const struct mg_proc *procs, size_t nprocs, const pid_t *roots, size_t nroots,
                    pid_t reaper, const struct mg_proc_seen *seen, size_t nseen, long sole, pid_t pid)
{
	/* The bound guards against a cycle in a torn snapshot. */
	for (size_t hops = 0; pid > 1 && hops < 4096; hops++) {
		for (size_t r = 0; r < nroots; r++)
			if (roots[r] == pid)
				return (long)r;
		long at = find_index(procs, nprocs, pid);
		if (at < 0)
			return -1;
		const struct mg_proc *p = &procs[at];
		const struct mg_proc_seen *hit = mg_proc_seen_find(seen, nseen, pid);
		/* The same pid with another start time is a new process. */
		if (hit && hit->start_time == p->start_time && hit->task < nroots)
			return (long)hit->task;
		if (reaper > 0 && p->ppid == reaper) {
			/* Orphaned out of a task before we saw it. */
			if (p->task_tag > 0 && p->task_tag - 1 < nroots)
				return (long)(p->task_tag - 1);
			return sole;
		}
		pid = p->ppid;
	}
	return -1;
}

long mg_proc_root_of(const struct mg_proc *procs, size_t nprocs, const pid_t *roots, size_t nroots, pid_t pid)
{
	/* By parent pid alone: nothing seen before, no orphans. */
	return task_of(procs, nprocs, roots, nroots, 0, NULL, 0, -1, pid);
}

void mg_proc_attribute(const struct mg_proc *procs, size_t nprocs, const pid_t *roots, size_t nroots,
                       pid_t reaper, const struct mg_proc_seen *seen, size_t nseen, long *ret_task)
{
	long sole = -1;

	for (size_t r = 0; r < nroots; r++) {
		if (roots[r] > 0 && sole == -1) {
			sole = (long)r;
		} else if (roots[r] > 0) {
			sole = -1;
			break;
		}
	}
	for (size_t i = 0; i < nprocs; i++)
		ret_task[i] = task_of(procs, nprocs, roots, nroots, reaper, seen, nseen, sole, procs[i].pid);
}

int mg_proc_environ_find(const char *block, size_t size, const char *name, const char **ret_value,
                         size_t *ret_len)
{
	const char *end = block + size;
	size_t nlen = strlen(name);

	for (const char *p = block; p < end;) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		size_t len = nul ? (size_t)(nul - p) : (size_t)(end - p);
		if (len > nlen && p[nlen] == '=' && memcmp(p, name, nlen) == 0) {
			*ret_value = p + nlen + 1;
			*ret_len = len - nlen - 1;
			return 0;
		}
		p += len + 1;
	}
	return -ENODATA;
}

bool mg_proc_environ_has(const char *block, size_t size, const char *name, const char *value)
{
	const char *v;
	size_t len;

	return mg_proc_environ_find(block, size, name, &v, &len) == 0 && len == strlen(value) &&
	       memcmp(v, value, len) == 0;
}

int mg_proc_environ_task(const char *block, size_t size, uint32_t *ret_task)
{
	const char *v;
	size_t len;
	char value[16];
	uint64_t n;

	if (mg_proc_environ_find(block, size, "MEMGUARD_TASK", &v, &len) < 0 || len >= sizeof(value) - 5)
		return -ENODATA;
	memcpy(value, v, len);
	value[len] = '\0';
	if (mg_parse_u64(value, &n) < 0 || n >= UINT32_MAX)
		return -ENODATA;
	*ret_task = (uint32_t)n;
	return 0;
}

int mg_proc_stat_start_time_parse(const char *text, uint64_t *ret)
{
	const char *p = strrchr(text, ')');

	if (!p)
		return -EBADMSG;
	/* ") S ppid ..." : field 3 follows the first space, starttime is field 22. */
	for (int field = 2; field < 22; field++)
		if (!(p = strchr(p + 1, ' ')))
			return -EBADMSG;
	char field[24];
	size_t len = strcspn(p + 1, " \n");
	if (len == 0 || len >= sizeof(field))
		return -EBADMSG;
	memcpy(field, p + 1, len);
	field[len] = '\0';
	return mg_parse_u64(field, ret) < 0 ? -EBADMSG : 0;
}

int mg_proc_start_time(int procfd, pid_t pid, uint64_t *ret)
{
	char name[32], buf[1024];
	ssize_t n;

	snprintf(name, sizeof(name), "%d/stat", (int)pid);
	if ((n = mg_read_small_at(procfd, name, buf, sizeof(buf))) < 0)
		return (int)n;
	return mg_proc_stat_start_time_parse(buf, ret);
}

int mg_proc_uids(int procfd, pid_t pid, uid_t *ret_real, uid_t *ret_effective)
{
	_cleanup_free_ char *text = NULL;
	char name[32];
	unsigned real, eff;
	ssize_t n;

	snprintf(name, sizeof(name), "%d/status", (int)pid);
	if ((n = mg_read_file_at(procfd, name, &text)) < 0)
		return (int)n;
	const char *uid = mg_status_field(text, "Uid");
	if (!uid || sscanf(uid, "%u %u", &real, &eff) != 2)
		return -EBADMSG;
	*ret_real = real;
	*ret_effective = eff;
	return 0;
}

ssize_t mg_proc_read_environ(int procfd, pid_t pid, char **ret_block)
{
	char name[32];

	snprintf(name, sizeof(name), "%d/environ", (int)pid);
	return mg_read_file_at(procfd, name, ret_block);
}

int mg_proc_read_task_tag(int procfd, pid_t pid, uint32_t *ret_tag)
{
	_cleanup_free_ char *block = NULL;
	uint32_t task;
	ssize_t n;

	if ((n = mg_proc_read_environ(procfd, pid, &block)) < 0)
		return (int)n;
	int r = mg_proc_environ_task(block, (size_t)n, &task);
	if (r < 0)
		return r;
	*ret_tag = task + 1;
	return 0;
}
