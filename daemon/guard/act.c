/* Carrying out a verdict: the fence, the kill, the reason, the kill log. */
#include "guard/act.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "memguard/cgroup.h"
#include "memguard/contract.h"
#include "memguard/json.h"
#include "memguard/log.h"
#include "memguard/procstat.h"
#include "memguard/units.h"
#include "memguard/util.h"

#ifndef SYS_process_mrelease
#define SYS_process_mrelease 448
#endif

#define MAX_PIDFDS 4096
/* Descriptors left free for the kill itself when pidfds ran out of them. */
#define KILL_FD_RESERVE 8
/* A saved memory.high below this is not one the launcher set. */
#define MG_MIN_HIGH_BYTES (1ull << 20)

struct pidfds {
	int fds[MAX_PIDFDS];
	size_t n;
	bool out_of_fds;
	unsigned depth; /* of the cgroup being walked, below the victim */
	size_t cgroups; /* walked so far */
	bool bounded;   /* the walk stopped at a bound */
};

static int open_pidfd(pid_t pid, void *userdata)
{
	struct pidfds *p = userdata;
	int fd;

	if (p->n == MAX_PIDFDS)
		return 1;
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd >= 0) {
		p->fds[p->n++] = fd;
	} else if (errno == EMFILE || errno == ENFILE) {
		p->out_of_fds = true;
		return 1;
	}
	return 0;
}

static void close_pidfds(struct pidfds *p, size_t keep)
{
	while (p->n > keep)
		close(p->fds[--p->n]);
}

bool mg_act_walk_within(unsigned depth, size_t cgroups)
{
	return depth <= MG_KILL_WALK_DEPTH && cgroups < MG_KILL_WALK_CGROUPS;
}

/* The pidfds are a best effort (process_mrelease, the count): cgroup.kill
 * kills the whole subtree however far the walk went, so at a bound it only
 * stops, past a level too deep or once too many cgroups were walked. */
static int collect_subtree(int cgfd, const char *name, void *userdata)
{
	struct pidfds *p = userdata;
	int r;

	(void)name;
	if (!mg_act_walk_within(p->depth, p->cgroups)) {
		p->bounded = true;
		return p->cgroups < MG_KILL_WALK_CGROUPS ? 0 : 1;
	}
	p->cgroups++;
	if (mg_cg_for_each_pid(cgfd, open_pidfd, userdata) > 0)
		return 1;
	p->depth++;
	r = mg_cg_for_each_child(cgfd, collect_subtree, userdata);
	p->depth--;
	return r;
}

int mg_act_log_json(const char *path, const struct mg_kill_record *rec, int killed, uint64_t freed_usec,
                    int error)
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
	mg_json_escape(f, rec->path);
	fprintf(f,
	        "\",\"current_bytes\":%" PRIu64 ",\"share_bytes\":%" PRIu64 ",\"dry_run\":%s,\"killed\":%d,"
	        "\"decide_to_freed_ms\":%.1f,\"reason\":\"",
	        rec->current, rec->share, rec->dry_run ? "true" : "false", killed,
	        (double)freed_usec / 1000.0);
	mg_json_escape(f, rec->why);
	if (error < 0) {
		fputs("\",\"error\":\"", f);
		mg_json_escape(f, strerror(-error));
	}
	fputs("\"}\n", f);
	return fclose(f) == 0 ? 0 : -errno;
}

int mg_act_kill(int mountfd, const struct mg_kill_record *rec, const char *kill_log)
{
	/* Static: 16 KiB that a kill under memory pressure must not have to allocate. */
	static struct pidfds pids;
	_cleanup_close_ int cgfd = mg_cg_open(mountfd, rec->path);
	char f_path[600], f_cur[64], f_share[64], f_dry[32];
	int killed, released = 0, exited = 0, r;

	if (cgfd == -ENOENT)
		return 0; /* gone by itself */
	if (cgfd < 0)
		return mg_log_errno(LOG_ERR, cgfd, "open cgroup %s: %m", rec->path);

	snprintf(f_path, sizeof(f_path), "MEMGUARD_CGROUP=%s", rec->path);
	snprintf(f_cur, sizeof(f_cur), "MEMGUARD_CURRENT=%" PRIu64, rec->current);
	snprintf(f_share, sizeof(f_share), "MEMGUARD_SHARE=%" PRIu64, rec->share);
	snprintf(f_dry, sizeof(f_dry), "MEMGUARD_DRY_RUN=%d", rec->dry_run);
	const char *fields[] = {f_path, f_cur, f_share, f_dry, "MEMGUARD_ACTION=kill", NULL};
	if (rec->dry_run) {
		mg_log_fields(LOG_WARNING, fields, "dry run: would be killing cgroup %s: %s", rec->path,
		              rec->why);
		if (kill_log)
			(void)mg_act_log_json(kill_log, rec, 0, 0, 0);
		return 0;
	}

	/* The launcher reads this before it removes the cgroup. */
	if ((r = mg_contract_set_killed(cgfd, rec->why)) < 0)
		log_debug("set %s on %s: %s", MG_XATTR_KILLED, rec->path, strerror(-r));
	/* pidfds first: after the kill the pids may be reused. */
	pids.n = pids.cgroups = pids.depth = 0;
	pids.out_of_fds = pids.bounded = false;
	(void)collect_subtree(cgfd, ".", &pids);
	if (pids.out_of_fds)
		close_pidfds(&pids, pids.n > KILL_FD_RESERVE ? pids.n - KILL_FD_RESERVE : 0);
	/* Through the pidfds first: a write to cgroup.kill waits for the
	 * kernel's cgroup lock, which a user making and removing cgroups in a
	 * loop holds most of the time (bench/storm.sh). cgroup.kill then takes
	 * what the walk did not reach, or forked meanwhile. */
	int signalled = 0;
	for (size_t i = 0; i < pids.n; i++)
		signalled += syscall(SYS_pidfd_send_signal, pids.fds[i], SIGKILL, NULL, 0) == 0;
	r = mg_cg_kill(cgfd);
	/* cgroup.kill signals every process; the fallback counts its own. */
	killed = r > (int)pids.n ? r : (int)pids.n;
	for (size_t i = 0; r >= 0 && i < pids.n; i++)
		/* Best effort: ENOSYS before 5.15; ESRCH when its memory went with its exit. */
		if (syscall(SYS_process_mrelease, pids.fds[i], 0) == 0)
			released++;
		else if (errno == ESRCH)
			exited++;
	close_pidfds(&pids, 0);
	uint64_t freed = mg_now_usec() - rec->decided_usec;
	/* Logged after the kill: a journal (or a log file) slowed by the shortage must not delay it. */
	mg_log_fields(LOG_WARNING, fields, "killing cgroup %s: %s", rec->path, rec->why);
	if (r < 0) {
		mg_log_errno(LOG_ERR, r, "kill cgroup %s: %m; %d process%s it holds killed through pidfds",
		             rec->path, signalled, signalled == 1 ? "" : "es");
		if (kill_log)
			(void)mg_act_log_json(kill_log, rec, signalled, freed, r);
		return r;
	}
	log_info("cgroup %s: %s%d process%s killed (%d reaped at once, %d exited before), %.1f ms after the "
	         "decision%s",
	         rec->path, pids.bounded ? "at least " : "", killed, killed == 1 ? "" : "es", released,
	         exited, (double)freed / 1000.0,
	         pids.bounded
	                 ? "; its tree is deeper or wider than memguardd walks, and cgroup.kill took the rest"
	                 : "");
	if (kill_log && (r = mg_act_log_json(kill_log, rec, killed, freed, 0)) < 0)
		mg_log_errno(LOG_WARNING, r, "append to kill log %s: %m", kill_log);
	return killed;
}

int mg_act_kill_process(int procfd, pid_t pid, uint64_t start_time, const char *comm,
                        const struct mg_kill_record *rec, const char *kill_log)
{
	char f_path[600], f_pid[32], f_cur[64];
	uint64_t started;
	int r;

	snprintf(f_path, sizeof(f_path), "MEMGUARD_CGROUP=%s", rec->path);
	snprintf(f_pid, sizeof(f_pid), "MEMGUARD_PID=%d", (int)pid);
	snprintf(f_cur, sizeof(f_cur), "MEMGUARD_CURRENT=%" PRIu64, rec->current);
	const char *fields[] = {f_path, f_pid, f_cur, "MEMGUARD_ACTION=kill", NULL};
	if (rec->dry_run) {
		mg_log_fields(LOG_WARNING, fields,
		              "dry run: would be killing process %d (%s) in %s, outside the guard: %s",
		              (int)pid, comm, rec->path, rec->why);
		if (kill_log)
			(void)mg_act_log_json(kill_log, rec, 0, 0, 0);
		return 0;
	}
	/* The pidfd first, then the start time: a pid reused meanwhile is not killed. */
	_cleanup_close_ int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return errno == ESRCH ? 0
		                      : mg_log_errno(LOG_ERR, -errno, "open a pidfd for %d: %m", (int)pid);
	if (mg_proc_start_time(procfd, pid, &started) < 0 || started != start_time)
		return 0;
	r = syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0) < 0 ? -errno : 0;
	if (r == -ESRCH)
		return 0;
	/* Best effort, as in mg_act_kill. */
	bool released = r == 0 && syscall(SYS_process_mrelease, fd, 0) == 0;
	uint64_t freed = mg_now_usec() - rec->decided_usec;
	/* Logged after the kill, as in mg_act_kill. */
	mg_log_fields(LOG_WARNING, fields, "killing process %d (%s) in %s, outside the guard: %s", (int)pid,
	              comm, rec->path, rec->why);
	if (r < 0) {
		mg_log_errno(LOG_ERR, r, "kill process %d in %s: %m", (int)pid, rec->path);
		if (kill_log)
			(void)mg_act_log_json(kill_log, rec, 0, freed, r);
		return r;
	}
	log_info("process %d in %s killed (%s at once), %.1f ms after the decision", (int)pid, rec->path,
	         released ? "reaped" : "not reaped", (double)freed / 1000.0);
	if (kill_log && (r = mg_act_log_json(kill_log, rec, 1, freed, 0)) < 0)
		mg_log_errno(LOG_WARNING, r, "append to kill log %s: %m", kill_log);
	return 1;
}

int mg_act_throttle(int mountfd, const char *path, uint64_t current, uint64_t share, uint64_t allowance)
{
	_cleanup_close_ int cgfd = mg_cg_open(mountfd, path);
	uint64_t high = current + allowance, before;
	char h[MG_SIZE_STRLEN], c[MG_SIZE_STRLEN], saved[32], err[PATH_MAX + 128];
	int r;

	if (cgfd < 0)
		return cgfd == -ENOENT ? 0 : cgfd;
	if ((r = mg_cg_read_u64(cgfd, "memory.high", &before)) < 0)
		return r;
	if (high < share)
		high = share;
	/* Nothing to lower: memory.high is already at or below the fence. */
	if (high >= before)
		return 0;
	/* The value to restore, in the tree so that a restarted daemon restores it too. */
	if (before == MG_SIZE_UNLIMITED)
		snprintf(saved, sizeof(saved), "max");
	else
		snprintf(saved, sizeof(saved), "%" PRIu64, before);
	if ((r = mg_contract_set_fence(cgfd, saved)) < 0)
		log_debug("set %s on %s: %s", MG_XATTR_FENCE, path, strerror(-r));
	if ((r = mg_cg_write_size(cgfd, path, "memory.high", high, err, sizeof(err))) < 0) {
		(void)mg_contract_clear_fence(cgfd);
		return mg_log_errno(LOG_WARNING, r, "%s", err);
	}
	log_warn("throttling cgroup %s: memory.high %s (memory.current %s)", path, mg_size_format(high, h),
	         mg_size_format(current, c));
	return 1;
}

/* The memory.high that mg_act_throttle saved, into buf and returned in
 * bytes; "max" (MG_SIZE_UNLIMITED) when it is missing or not a plausible
 * limit (an older memguardd wrote "1"). */
static uint64_t saved_high(int cgfd, char *buf, size_t size)
{
	uint64_t bytes;

	if (mg_contract_get_fence(cgfd, buf, size) > 0) {
		if (strcmp(buf, "max") == 0)
			return MG_SIZE_UNLIMITED;
		if (mg_parse_u64(buf, &bytes) == 0 && bytes >= MG_MIN_HIGH_BYTES)
			return bytes;
	}
	snprintf(buf, size, "max");
	return MG_SIZE_UNLIMITED;
}

/* Lifts the fence of cgfd (path): memory.high back to its saved value. */
static int restore_high(int cgfd, const char *path)
{
	char high[32], err[PATH_MAX + 128];
	int r;

	saved_high(cgfd, high, sizeof(high));
	if ((r = mg_cg_write(cgfd, path, "memory.high", high, err, sizeof(err))) < 0)
		return mg_log_errno(LOG_WARNING, r, "%s", err);
	if ((r = mg_contract_clear_fence(cgfd)) < 0)
		log_debug("remove %s from %s: %s", MG_XATTR_FENCE, path, strerror(-r));
	log_info("cgroup %s: memory.high back to %s", path, high);
	return 0;
}

int mg_act_unthrottle(int mountfd, const char *path)
{
	_cleanup_close_ int cgfd = mg_cg_open(mountfd, path);

	if (cgfd < 0)
		return cgfd == -ENOENT ? 0 : cgfd;
	return restore_high(cgfd, path);
}

int mg_act_widen(int mountfd, const char *path, uint64_t allowance, const char *why)
{
	_cleanup_close_ int cgfd = mg_cg_open(mountfd, path);
	char saved[32], h[MG_SIZE_STRLEN], c[MG_SIZE_STRLEN], err[PATH_MAX + 128];
	uint64_t fence, current, limit, high;
	int r;

	if (cgfd == -ENOENT)
		return 0;
	if (cgfd < 0)
		return mg_log_errno(LOG_WARNING, cgfd, "open cgroup %s: %m", path);
	if ((r = mg_cg_read_u64(cgfd, "memory.high", &fence)) < 0 ||
	    (r = mg_cg_read_u64(cgfd, "memory.current", &current)) < 0)
		return r == -ENODEV ? 0 /* removed meanwhile */
		                    : mg_log_errno(LOG_WARNING, r,
		                                   "read the memory.high and memory.current of %s: %m", path);
	/* From what it holds: memory.high is a throttle, not a wall, so it may hold more. */
	high = current > fence ? current : fence;
	high = allowance > UINT64_MAX - high ? UINT64_MAX : high + allowance;
	limit = saved_high(cgfd, saved, sizeof(saved));
	/* Never above the memory.high it had: there the fence is no more. */
	if (high >= limit)
		return (r = restore_high(cgfd, path)) < 0 ? r : 2;
	if (high <= fence)
		return 0;
	if ((r = mg_cg_write_size(cgfd, path, "memory.high", high, err, sizeof(err))) < 0)
		return mg_log_errno(LOG_WARNING, r, "%s", err);
	log_warn("widening the fence of cgroup %s: memory.high %s (memory.current %s): %s", path,
	         mg_size_format(high, h), mg_size_format(current, c), why);
	return 1;
}

int mg_act_is_throttled(int mountfd, const char *path)
{
	_cleanup_close_ int cgfd = mg_cg_open(mountfd, path);
	char v[32];
	int r;

	if (cgfd < 0)
		return cgfd;
	/* Only our own record counts: user.memguard.throttled is anyone's word. */
	r = mg_contract_get_fence(cgfd, v, sizeof(v));
	return r >= 0 ? 1 : r == -ENODATA ? 0 : r;
}
