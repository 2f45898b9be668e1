#include "act.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "memguard/cgroup.h"
#include "memguard/log.h"
#include "memguard/paths.h"
#include "memguard/units.h"
#include "memguard/util.h"

#ifndef SYS_process_mrelease
#define SYS_process_mrelease 448
#endif

#define MAX_PIDFDS 4096

struct pidfds {
	int fds[MAX_PIDFDS];
	size_t n;
};

static int open_pidfd(pid_t pid, void *userdata)
{
	struct pidfds *p = userdata;
	int fd;

	if (p->n == MAX_PIDFDS)
		return 1;
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd >= 0)
		p->fds[p->n++] = fd;
	return 0;
}

static int collect_subtree(int cgfd, const char *name, void *userdata)
{
	if (mg_cg_for_each_pid(cgfd, open_pidfd, userdata) > 0)
		return 1;
	return mg_cg_for_each_child(cgfd, collect_subtree, userdata);
}

static void json_escape(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
}

int mg_act_log_json(const char *path, const struct mg_kill_record *rec, int killed, uint64_t freed_usec)
{
	char dir[PATH_MAX];
	struct timespec now;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		(void)mkdir(dir, 0755);
	}
	f = fopen(path, "ae");
	if (!f)
		return -errno;
	clock_gettime(CLOCK_REALTIME, &now);
	fprintf(f, "{\"time\":%lld.%03ld,\"cgroup\":\"", (long long)now.tv_sec, now.tv_nsec / 1000000);
	json_escape(f, rec->path);
	fprintf(f,
	        "\",\"current_bytes\":%" PRIu64 ",\"share_bytes\":%" PRIu64 ",\"dry_run\":%s,\"killed\":%d,"
	        "\"decide_to_freed_ms\":%.1f,\"reason\":\"",
	        rec->current, rec->share, rec->dry_run ? "true" : "false", killed,
	        (double)freed_usec / 1000.0);
	json_escape(f, rec->why);
	fputs("\"}\n", f);
	return fclose(f) == 0 ? 0 : -errno;
}

int mg_act_kill(int mountfd, const struct mg_kill_record *rec, const char *kill_log)
{
	_cleanup_close_ int cgfd = mg_cg_open(mountfd, rec->path);
	_cleanup_free_ struct pidfds *pids = calloc(1, sizeof(*pids));
	char f_path[600], f_cur[64], f_share[64], f_dry[32];
	int killed = 0, r;

	if (cgfd == -ENOENT)
		return 0; /* gone by itself */
	if (cgfd < 0)
		return mg_log_errno(LOG_ERR, cgfd, "open cgroup %s: %m", rec->path);
	if (!pids)
		return -ENOMEM;

	snprintf(f_path, sizeof(f_path), "MEMGUARD_CGROUP=%s", rec->path);
	snprintf(f_cur, sizeof(f_cur), "MEMGUARD_CURRENT=%" PRIu64, rec->current);
	snprintf(f_share, sizeof(f_share), "MEMGUARD_SHARE=%" PRIu64, rec->share);
	snprintf(f_dry, sizeof(f_dry), "MEMGUARD_DRY_RUN=%d", rec->dry_run);
	const char *fields[] = {f_path, f_cur, f_share, f_dry, "MEMGUARD_ACTION=kill", NULL};
	mg_log_fields(LOG_WARNING, fields, "%skilling cgroup %s: %s",
	              rec->dry_run ? "dry run: would be " : "", rec->path, rec->why);
	if (rec->dry_run) {
		if (kill_log)
			(void)mg_act_log_json(kill_log, rec, 0, 0);
		return 0;
	}

	/* The launcher reads this before it removes the cgroup. */
	if (fsetxattr(cgfd, MG_XATTR_KILLED, rec->why, strlen(rec->why), 0) < 0)
		log_debug("set %s on %s: %s", MG_XATTR_KILLED, rec->path, strerror(errno));
	/* pidfds first: after the kill the pids may be reused. */
	(void)collect_subtree(cgfd, ".", pids);
	r = mg_cg_kill(cgfd);
	if (r < 0)
		mg_log_errno(LOG_ERR, r, "kill cgroup %s: %m", rec->path);
	for (size_t i = 0; i < pids->n; i++) {
		/* Best effort: EINVAL while the process is not yet dying, ENOSYS before 5.15. */
		if (syscall(SYS_process_mrelease, pids->fds[i], 0) == 0 || errno == EINVAL || errno == ESRCH)
			killed++;
		close(pids->fds[i]);
	}
	/* Without pidfds or process_mrelease, the fallback's own count is all we have. */
	if (r > killed)
		killed = r;
	uint64_t freed = mg_now_usec() - rec->decided_usec;
	log_info("cgroup %s: %d process%s killed, memory released %.1f ms after the decision", rec->path,
	         killed, killed == 1 ? "" : "es", (double)freed / 1000.0);
	if (kill_log && (r = mg_act_log_json(kill_log, rec, killed, freed)) < 0)
		mg_log_errno(LOG_WARNING, r, "append to kill log %s: %m", kill_log);
	return killed;
}

int mg_act_throttle(int mountfd, const char *path, uint64_t current, uint64_t share)
{
	_cleanup_close_ int cgfd = mg_cg_open(mountfd, path);
	uint64_t high = current - current / 10;
	char h[MG_SIZE_STRLEN], c[MG_SIZE_STRLEN];
	int r;

	if (cgfd < 0)
		return cgfd == -ENOENT ? 0 : cgfd;
	if (high < share)
		high = share;
	if ((r = mg_cg_write_size(cgfd, path, "memory.high", high)) < 0)
		return r;
	if (fsetxattr(cgfd, MG_XATTR_THROTTLED, "1", 1, 0) < 0)
		log_debug("set %s on %s: %s", MG_XATTR_THROTTLED, path, strerror(errno));
	log_warn("throttling cgroup %s: memory.high %s (memory.current %s)", path, mg_size_format(high, h),
	         mg_size_format(current, c));
	return 0;
}

int mg_act_unthrottle(int mountfd, const char *path)
{
	_cleanup_close_ int cgfd = mg_cg_open(mountfd, path);
	int r;

	if (cgfd < 0)
		return cgfd == -ENOENT ? 0 : cgfd;
	if ((r = mg_cg_write(cgfd, path, "memory.high", "max")) < 0)
		return r;
	(void)fremovexattr(cgfd, MG_XATTR_THROTTLED);
	log_info("cgroup %s: memory.high back to max", path);
	return 0;
}

int mg_act_is_throttled(int mountfd, const char *path)
{
	_cleanup_close_ int cgfd = mg_cg_open(mountfd, path);
	char v[8];

	if (cgfd < 0)
		return cgfd;
	if (fgetxattr(cgfd, MG_XATTR_THROTTLED, v, sizeof(v)) >= 0)
		return 1;
	return errno == ENODATA || errno == ENOTSUP ? 0 : -errno;
}
