/* sampler: follows the memory of one benchmark cell's tasks, whatever started them.
 *   sampler TAG NTASKS SHARE_KIB OUT.json [INTERVAL_MS [TIMELINE]]
 * A process belongs to task I when its environment holds BENCH_CELL=TAG and
 * MEMGUARD_TASK=I (memguard sets MEMGUARD_TASK; the other variants set both
 * themselves), so forked children count with their task. Every INTERVAL_MS
 * (default 100; longer when a scan takes longer) it scans /proc and sums each
 * task's anonymous resident memory (statm resident - shared) over its live,
 * non-zombie processes. Per task it records, as CLOCK_REALTIME milliseconds:
 *   first  the first sample with a live process
 *   onset  the first sample at which the task held more than 80% of SHARE_KIB
 *          (SHARE_KIB is (MemTotal - 5%) / N; memguard's own share is smaller,
 *          since it counts only what is available, so 90% would miss its kills)
 *   gone   the first sample, after first, with no live process (memory freed)
 *   ends   every such sample, up to MAX_ENDS: memguard's retry starts a task
 *          again, so gone is the end of its last attempt and ends[0] of its first
 * and the most it held. For the node: the lowest MemAvailable, and the first
 * sample at which MemAvailable < MemTotal / 10 (pressure onset, earlyoom's
 * default line; mem_available_low_ms, 0 when never). Writes JSON to OUT.json
 * every second, and after one last sample on SIGTERM, from a thread of its own
 * (bgwrite.h), so a slow share does not leave gaps between samples. With
 * TIMELINE (best on a local tmpfs), also a line per sample there: the time,
 * MemAvailable, MemFree, the file LRUs, SReclaimable, the free pages of the
 * per-CPU lists (/proc/zoneinfo: MemFree leaves them out), SUnreclaim,
 * then each task's memory, all in KiB, so that a kill can be laid beside who was taking what. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bgwrite.h"
#include "probe.h"

#define SLOTS 65536 /* pid cache, open addressing */
#define PF_KTHREAD 0x00200000u

struct slot {
	int pid;
	unsigned long long start; /* starttime: a reused pid is another process */
	char comm[20];            /* exec changes it: classify again */
	int task;                 /* -1: not ours; >= 0: task index */
	unsigned tick;
};

/* The attempts whose ends a task keeps: memguard makes three at most by default. */
#define MAX_ENDS 8

struct task {
	long long first, onset, gone, peak_at;
	long long ends[MAX_ENDS];
	int nends;
	long max_kib, max_procs;
	long kib, procs; /* this sample */
};

static struct slot *cache, *spare;
static unsigned tick;

static long long now_ms(clockid_t clock)
{
	return now_ns(clock) / 1000000;
}

static ssize_t read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, total = 0;

	if (fd < 0)
		return -1;
	while ((size_t)total < size - 1 && (n = read(fd, buf + total, size - 1 - (size_t)total)) > 0)
		total += n;
	close(fd);
	buf[total] = '\0';
	return total;
}

static struct slot *lookup(struct slot *table, int pid)
{
	unsigned h = ((unsigned)pid * 2654435761u) % SLOTS;

	for (unsigned i = 0; i < SLOTS; i++) {
		struct slot *s = &table[(h + i) % SLOTS];
		if (s->pid == pid || s->pid == 0)
			return s;
	}
	return NULL;
}

/* Drops the entries of processes not seen in this tick. */
static void compact(void)
{
	memset(spare, 0, SLOTS * sizeof(*spare));
	for (unsigned i = 0; i < SLOTS; i++) {
		if (cache[i].pid && cache[i].tick == tick) {
			struct slot *s = lookup(spare, cache[i].pid);
			if (s)
				*s = cache[i];
		}
	}
	struct slot *t = cache;
	cache = spare;
	spare = t;
}

/* The task index of pid from its environment, -1 when it is not a task of
 * ours, -2 when its environment cannot be read yet: during an execve the new
 * comm shows before the new environment does, so such a process is looked at
 * again on the next sample. */
static int classify(int pid, const char *tag_entry)
{
	static char env[1 << 16];
	char path[64];
	ssize_t n;
	int task = -1, tagged = 0;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	n = read_file(path, env, sizeof(env));
	if (n <= 0)
		return -2;
	for (ssize_t off = 0; n > 0 && off < n; off += (ssize_t)strlen(env + off) + 1) {
		const char *e = env + off;
		if (strcmp(e, tag_entry) == 0)
			tagged = 1;
		else if (strncmp(e, "MEMGUARD_TASK=", 14) == 0 && isdigit((unsigned char)e[14]))
			task = atoi(e + 14);
	}
	return tagged ? task : -1;
}

static void dump(struct bgwrite *w, const struct task *t, int ntasks, long long share_kib, long long start,
                 long long avail_min_kib, long long avail_low_ms, long long worst_scan_ms, unsigned samples,
                 bool final)
{
	FILE *f = bgwrite_begin(w);

	if (f) {
		fprintf(f,
		        "{\"start_ms\":%lld,\"share_kib\":%lld,\"samples\":%u,\"worst_scan_ms\":%lld,"
		        "\"mem_available_min_kib\":%lld,\"mem_available_low_ms\":%lld,\"final\":%s,\"tasks\":"
		        "[",
		        start, share_kib, samples, worst_scan_ms, avail_min_kib, avail_low_ms,
		        final ? "true" : "false");
		for (int i = 0; i < ntasks; i++) {
			fprintf(f, "%s[%lld,%lld,%lld,%ld,%ld,[", i ? "," : "", t[i].first, t[i].onset,
			        t[i].gone, t[i].max_kib, t[i].max_procs);
			for (int e = 0; e < t[i].nends; e++)
				fprintf(f, "%s%lld", e ? "," : "", t[i].ends[e]);
			fputs("]]", f);
		}
		fputs("]}\n", f);
	}
	bgwrite_commit(w, f, final);
}

struct node_mem {
	long long total, avail, free, file, slab, pcp, unreclaimable; /* KiB; -1 when absent */
};

static long long kib_of(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);

	return p ? atoll(p + strlen(key)) : -1;
}

/* The free pages the per-CPU lists hold: the "count:" lines of zoneinfo. */
static long long pcp_kib(void)
{
	static char buf[1 << 20]; /* a few KiB per CPU and zone */
	long long pages = 0;

	if (read_file("/proc/zoneinfo", buf, sizeof(buf)) <= 0)
		return -1;
	for (const char *p = buf; (p = strstr(p, "count:")); p += 6)
		pages += atoll(p + 6);
	return pages * (sysconf(_SC_PAGESIZE) / 1024);
}

/* The node's memory from one read of /proc/meminfo: -1 when unreadable. */
static int read_node_mem(struct node_mem *m)
{
	char buf[4096];
	long long active, inactive;

	if (read_file("/proc/meminfo", buf, sizeof(buf)) <= 0)
		return -1;
	m->total = kib_of(buf, "MemTotal:");
	m->avail = kib_of(buf, "MemAvailable:");
	m->free = kib_of(buf, "MemFree:");
	active = kib_of(buf, "Active(file):");
	inactive = kib_of(buf, "Inactive(file):");
	m->file = active < 0 || inactive < 0 ? -1 : active + inactive;
	m->slab = kib_of(buf, "SReclaimable:");
	m->pcp = pcp_kib();
	m->unreclaimable = kib_of(buf, "SUnreclaim:");
	return m->total < 0 || m->avail < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	char tag_entry[256], path[64], buf[1024];
	long page_kib = sysconf(_SC_PAGESIZE) / 1024;
	long long interval, share_kib, start, last_dump = 0, worst_scan = 0, avail_min = -1, low_at = 0;
	static struct bgwrite out;
	unsigned samples = 0;
	int ntasks;

	if (argc < 5) {
		fprintf(stderr, "usage: sampler TAG NTASKS SHARE_KIB OUT.json [INTERVAL_MS [TIMELINE]]\n");
		return 64;
	}
	snprintf(tag_entry, sizeof(tag_entry), "BENCH_CELL=%s", argv[1]);
	ntasks = atoi(argv[2]);
	share_kib = atoll(argv[3]);
	interval = argc > 5 ? atoll(argv[5]) : 100;
	FILE *timeline = argc > 6 ? fopen(argv[6], "we") : NULL;
	if (argc > 6 && !timeline) {
		fprintf(stderr, "sampler: cannot write %s: %s\n", argv[6], strerror(errno));
		return 73;
	}
	struct task *t = calloc((size_t)(ntasks > 0 ? ntasks : 1), sizeof(*t));
	cache = calloc(SLOTS, sizeof(*cache));
	spare = calloc(SLOTS, sizeof(*spare));
	if (ntasks <= 0 || !t || !cache || !spare)
		return 64;
	catch_stop_signals();
	start = now_ms(CLOCK_REALTIME);
	bgwrite_start(&out, argv[4]);

	for (;;) {
		int last = stop; /* after SIGTERM: one more sample, so the end is seen */
		long long t0 = now_ms(CLOCK_MONOTONIC), now = now_ms(CLOCK_REALTIME);
		/* Read next to now, not after the scan, which stalls under pressure. */
		struct node_mem mem = {-1, -1, -1, -1, -1, -1, -1};
		bool mem_ok = read_node_mem(&mem) == 0;
		long long total = mem_ok ? mem.total : 0, avail = mem_ok ? mem.avail : -1;
		DIR *proc = opendir("/proc");
		struct dirent *de;

		tick++;
		for (int i = 0; i < ntasks; i++)
			t[i].kib = t[i].procs = 0;
		while (proc && (de = readdir(proc))) {
			if (!isdigit((unsigned char)de->d_name[0]))
				continue;
			int pid = atoi(de->d_name);
			snprintf(path, sizeof(path), "/proc/%d/stat", pid);
			if (read_file(path, buf, sizeof(buf)) <= 0)
				continue;
			char *lp = strchr(buf, '('), *rp = strrchr(buf, ')');
			if (!lp || !rp)
				continue;
			char comm[20] = "", state = 0;
			unsigned flags = 0;
			unsigned long long st = 0;
			snprintf(comm, sizeof(comm), "%.*s", (int)(rp - lp - 1), lp + 1);
			/* After ")": state ppid pgrp session tty_nr tpgid flags ... starttime (field 22). */
			if (sscanf(rp + 2,
			           "%c %*d %*d %*d %*d %*d %u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
			           "%*d %llu",
			           &state, &flags, &st) != 3)
				continue;
			struct slot *s = lookup(cache, pid);
			if (!s)
				continue;
			if (s->pid != pid || s->start != st || strcmp(s->comm, comm) != 0 || s->task == -2) {
				s->pid = pid;
				s->start = st;
				snprintf(s->comm, sizeof(s->comm), "%s", comm);
				s->task = (flags & PF_KTHREAD) ? -1 : classify(pid, tag_entry);
			}
			s->tick = tick;
			if (s->task < 0 || s->task >= ntasks || state == 'Z' || state == 'X')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/statm", pid);
			long size = 0, resident = 0, shared = 0;
			if (read_file(path, buf, sizeof(buf)) <= 0 ||
			    sscanf(buf, "%ld %ld %ld", &size, &resident, &shared) != 3)
				continue;
			t[s->task].kib += (resident - shared) * page_kib;
			t[s->task].procs++;
		}
		if (proc)
			closedir(proc);
		if (tick % 64 == 0)
			compact();
		for (int i = 0; i < ntasks; i++) {
			struct task *k = &t[i];
			if (k->procs > 0) {
				if (!k->first)
					k->first = now;
				k->gone = 0;
				if (!k->onset && k->kib * 10 > share_kib * 8)
					k->onset = now;
				if (k->kib > k->max_kib)
					k->max_kib = k->kib, k->peak_at = now;
				if (k->procs > k->max_procs)
					k->max_procs = k->procs;
			} else if (k->first && !k->gone) {
				k->gone = now;
				if (k->nends < MAX_ENDS)
					k->ends[k->nends++] = now;
			}
		}
		if (avail >= 0 && (avail_min < 0 || avail < avail_min))
			avail_min = avail;
		if (!low_at && avail >= 0 && avail * 10 < total)
			low_at = now;
		if (timeline && mem_ok) {
			fprintf(timeline, "%lld %lld %lld %lld %lld %lld %lld", now, mem.avail, mem.free,
			        mem.file, mem.slab, mem.pcp, mem.unreclaimable);
			for (int i = 0; i < ntasks; i++)
				fprintf(timeline, " %ld", t[i].kib);
			fputc('\n', timeline);
		}
		samples++;
		long long took = now_ms(CLOCK_MONOTONIC) - t0;
		if (took > worst_scan)
			worst_scan = took;
		if (now - last_dump >= 1000) {
			dump(&out, t, ntasks, share_kib, start, avail_min, low_at, worst_scan, samples,
			     false);
			last_dump = now;
		}
		if (last)
			break;
		/* A slow scan (many processes) sleeps longer, so the sampler does not
		 * take a core; a stalled one (memory pressure) not much longer. */
		long long sleep_ms = interval - took, extra = took < 200 ? took : 200;
		if (sleep_ms < extra)
			sleep_ms = extra;
		struct timespec d = {sleep_ms / 1000, (sleep_ms % 1000) * 1000000};
		while (!stop && nanosleep(&d, &d) < 0 && errno == EINTR)
			;
	}
	dump(&out, t, ntasks, share_kib, start, avail_min, low_at, worst_scan, samples, true);
	if (timeline && fclose(timeline) != 0)
		fprintf(stderr, "sampler: cannot write %s: %s\n", argv[6], strerror(errno));
	return 0;
}
