/* /proc/<pid>/stat snapshots: mg_proc_stat_parse, mg_proc_scan,
 * mg_proc_root_of and mg_proc_tree_rss. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_tree.h"
#include "memguard/procstat.h"
#include "memguard/util.h"

/* A stat line as the kernel writes it, every field after rss included. The
 * vsize of a JVM (40 GiB) and a large starttime do not fit 32 bits. */
static void stat_line(char *buf, size_t size, long pid, const char *comm, char state, long ppid, long pgrp,
                      unsigned long long rss)
{
	int n = snprintf(buf, size,
	                 "%ld (%s) %c %ld %ld %ld 0 -1 4194560 1843 0 12 0 2150 312 0 0 20 0 37 0 "
	                 "8589934597 42949672960 %llu 18446744073709551615 94251834773504 94251834777381 "
	                 "140724523370560 0 0 0 0 4096 17663 0 0 0 17 3 0 0 0 0 0 94251834790384 "
	                 "94251834791056 94251866050560 140724523376469 140724523376489 140724523376489 "
	                 "140724523380710 0\n",
	                 pid, comm, state, ppid, pgrp, pgrp, rss);
	assert_true(n > 0 && (size_t)n < size);
}

/* --- mg_proc_stat_parse --- */

static void parse_real_self_stat(void **state)
{
	char buf[1024], want_comm[16];
	struct mg_proc p;
	ssize_t n = mg_read_small_at(AT_FDCWD, "/proc/self/stat", buf, sizeof(buf));
	const char *slash;

	assert_true(n > 0);
	memset(&p, 0xaa, sizeof(p));
	assert_int_equal(mg_proc_stat_parse(buf, &p), 0);
	assert_int_equal(p.pid, getpid());
	assert_int_equal(p.ppid, getppid());
	assert_int_equal(p.pgrp, getpgrp());
	assert_int_equal(p.state, 'R'); /* reading its own stat, it runs */
	assert_true(p.rss_pages > 0);
	/* Not more than the whole of memory, in pages. */
	assert_true(p.rss_pages < (uint64_t)sysconf(_SC_PHYS_PAGES));
	/* comm is the program's name, cut to 15 bytes. */
	n = mg_read_small_at(AT_FDCWD, "/proc/self/comm", want_comm, sizeof(want_comm));
	assert_true(n > 0);
	want_comm[strcspn(want_comm, "\n")] = '\0';
	assert_string_equal(p.comm, want_comm);
	slash = strrchr(program_invocation_name, '/');
	assert_true(strncmp(p.comm, slash ? slash + 1 : program_invocation_name, 15) == 0);
}

struct comm_case {
	const char *comm, *want;
};

static void parse_hostile_comm(void **state)
{
	static const struct comm_case cases[] = {
	        {"cat", "cat"},
	        {"foo) Z ", "foo) Z "},
	        {"a b c", "a b c"},
	        {"(((", "((("},
	        {")))", ")))"},
	        {"", ""},
	        {") (", ") ("},
	        {"x) R 1 1 1", "x) R 1 1 1"},
	        {"a\nb", "a\nb"},
	        {"tab\there", "tab\there"},
	        {"pypy3", "pypy3"},
	        {"123456789012345", "123456789012345"},  /* the kernel's limit */
	        {"1234567890123456", "123456789012345"}, /* cut to fit */
	        {"x) S 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 2 99999999", "x) S 1 1 1 0 0 "},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		char line[1024];
		struct mg_proc p;
		int r;

		stat_line(line, sizeof(line), 4242, cases[i].comm, 'S', 4000, 4100, 12345);
		memset(&p, 0xaa, sizeof(p));
		r = mg_proc_stat_parse(line, &p);
		if (r != 0 || strcmp(p.comm, cases[i].want) != 0 || p.ppid != 4000 || p.rss_pages != 12345)
			print_error("comm \"%s\": %d, comm \"%s\" state %c ppid %d rss %" PRIu64 "\n",
			            cases[i].comm, r, r == 0 ? p.comm : "-", p.state, (int)p.ppid,
			            p.rss_pages);
		assert_int_equal(r, 0);
		assert_int_equal(p.pid, 4242);
		assert_string_equal(p.comm, cases[i].want);
		/* The fields come from after the last ')', never from comm. */
		assert_int_equal(p.state, 'S');
		assert_int_equal(p.ppid, 4000);
		assert_int_equal(p.pgrp, 4100);
		assert_true(p.rss_pages == 12345);
	}
}

struct fields_case {
	long pid, ppid, pgrp;
	char state;
	unsigned long long rss;
};

static void parse_fields(void **state)
{
	static const struct fields_case cases[] = {
	        {1, 0, 1, 'S', 3000},               /* init: ppid 0 */
	        {2, 0, 0, 'S', 0},                  /* kthreadd: no memory */
	        {4194304, 1, 4194304, 'R', 1},      /* the largest pid_max */
	        {77, 76, 77, 'Z', 0},               /* a zombie */
	        {78, 76, 77, 'D', 123456789012ull}, /* rss beyond 32 bits */
	        {79, 76, 77, 't', 5},
	        {80, 76, 77, 'I', 0},
	        {81, 76, 77, 'X', 0},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		char line[1024];
		struct mg_proc p;

		stat_line(line, sizeof(line), cases[i].pid, "proc", cases[i].state, cases[i].ppid,
		          cases[i].pgrp, cases[i].rss);
		assert_int_equal(mg_proc_stat_parse(line, &p), 0);
		assert_int_equal(p.pid, cases[i].pid);
		assert_int_equal(p.ppid, cases[i].ppid);
		assert_int_equal(p.pgrp, cases[i].pgrp);
		assert_int_equal(p.state, cases[i].state);
		assert_true(p.rss_pages == cases[i].rss);
		/* starttime, field 22, beyond 32 bits in stat_line(). */
		assert_true(p.start_time == 8589934597ull);
	}

	/* Exactly the fields up to rss, no newline, nothing after. */
	struct mg_proc p;
	assert_int_equal(mg_proc_stat_parse("9 (x) R 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 6 77", &p), 0);
	assert_int_equal(p.pid, 9);
	assert_true(p.rss_pages == 77);
	/* Negative priority and nice (a real-time task). */
	assert_int_equal(mg_proc_stat_parse("9 (x) R 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 -51 -20 1 0 5 6 78", &p),
	                 0);
	assert_true(p.rss_pages == 78);
}

static void parse_every_truncation_fails(void **state)
{
	char line[1024];
	const char *rss_at;
	size_t len;

	stat_line(line, sizeof(line), 4242, "a) b (c", 'S', 4000, 4100, 987654);
	rss_at = strstr(line, " 987654 ");
	assert_non_null(rss_at);
	len = (size_t)(rss_at - line) + 1; /* up to, not including, rss's first digit */
	for (size_t cut = 0; cut <= len; cut++) {
		char *prefix = strndup(line, cut);
		struct mg_proc p = {.pid = 99};
		int r;

		assert_non_null(prefix);
		r = mg_proc_stat_parse(prefix, &p);
		if (r != -EBADMSG)
			print_error("truncated to \"%s\": %d; want -EBADMSG\n", prefix, r);
		free(prefix);
		assert_int_equal(r, -EBADMSG);
		assert_int_equal(p.pid, 99); /* untouched */
	}
}

static void parse_garbage(void **state)
{
	static const char *const bad[] = {
	        "",
	        " ",
	        "\n",
	        "garbage",
	        "()",
	        ")(",
	        "123",
	        "123 (",
	        "123 )",
	        "123 (x",
	        "123 )x( S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 6 7",
	        "abc (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 6 7",
	        "0 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 6 7",
	        "-5 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 6 7",
	        "-1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 6 7",
	        "(x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 6 7",
	        "123 (x) S one 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 6 7",
	        "123 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 6 rss",
	        "123 (x) S 1 1 1 0 -1 0 0 0 0 0 0 zero 0 0 20 0 1 0 5 6 7",
	        "123 (x)",
	        "123 (x) ",
	        "123 (x) S",
	        "\x01\x02\x03\xff",
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(bad); i++) {
		struct mg_proc p = {.pid = 99};
		int r = mg_proc_stat_parse(bad[i], &p);

		if (r != -EBADMSG)
			print_error("\"%s\": %d (pid %d); want -EBADMSG\n", bad[i], r, (int)p.pid);
		assert_int_equal(r, -EBADMSG);
		assert_int_equal(p.pid, 99);
	}
}

/* --- mg_proc_scan --- */

static void write_stat(int dirfd, const char *dir, long pid, long ppid, unsigned long long rss)
{
	char path[64], line[1024];

	snprintf(path, sizeof(path), "%s/stat", dir);
	stat_line(line, sizeof(line), pid, "worker", 'S', ppid, pid, rss);
	ft_write(dirfd, path, line);
}

static void scan_fake_proc(void **state)
{
	static const long pids[] = {300, 42, 1000, 7, 1, 10, 2}; /* written out of order */
	static const long sorted[] = {1, 2, 7, 10, 42, 300, 1000};
	struct fake_tree t;
	struct mg_proc *procs = NULL;
	int n;

	ft_new(&t);
	for (size_t i = 0; i < MG_ARRAY_SIZE(pids); i++) {
		char dir[32];
		snprintf(dir, sizeof(dir), "%ld", pids[i]);
		write_stat(t.fd, dir, pids[i], pids[i] == 1 ? 0 : 1, (unsigned long long)pids[i] * 10);
	}
	/* Not processes: skipped. */
	write_stat(t.fd, "self", 99, 1, 5);
	write_stat(t.fd, "thread-self", 98, 1, 5);
	ft_mkdir(t.fd, "sys/vm");
	ft_write(t.fd, "meminfo", "MemTotal: 1 kB\n");
	ft_write(t.fd, "stat", "cpu 1 2 3\n");
	ft_mkdir(t.fd, "55");                 /* vanished: no stat */
	ft_write(t.fd, "66/stat", "garbage"); /* torn */
	ft_write(t.fd, "77/stat", "");        /* empty */
	ft_write(t.fd, "88", "a file, not a directory");

	n = mg_proc_scan(t.fd, &procs);
	assert_int_equal(n, (int)MG_ARRAY_SIZE(sorted));
	assert_non_null(procs);
	for (int i = 0; i < n; i++) {
		assert_int_equal(procs[i].pid, sorted[i]);
		assert_int_equal(procs[i].ppid, sorted[i] == 1 ? 0 : 1);
		assert_true(procs[i].rss_pages == (uint64_t)sorted[i] * 10);
		assert_string_equal(procs[i].comm, "worker");
	}
	free(procs);

	/* procfd is not moved or closed by the scan: a second scan agrees. */
	procs = NULL;
	assert_int_equal(mg_proc_scan(t.fd, &procs), n);
	assert_int_equal(procs[n - 1].pid, 1000);
	free(procs);
	assert_true(fcntl(t.fd, F_GETFD) >= 0);
	ft_free(&t);
}

static void scan_many_and_empty(void **state)
{
	struct fake_tree t;
	struct mg_proc *procs = NULL;
	int n;

	ft_new(&t);
	n = mg_proc_scan(t.fd, &procs);
	assert_int_equal(n, 0);
	free(procs);

	/* More than the first allocation holds, in reverse order. */
	for (long pid = 600; pid >= 2; pid--) {
		char dir[32];
		snprintf(dir, sizeof(dir), "%ld", pid);
		write_stat(t.fd, dir, pid, pid - 1, (unsigned long long)pid);
	}
	procs = NULL;
	n = mg_proc_scan(t.fd, &procs);
	assert_int_equal(n, 599);
	for (int i = 0; i < n; i++)
		assert_int_equal(procs[i].pid, 2 + i);
	free(procs);
	ft_free(&t);
}

static void scan_real_proc(void **state)
{
	int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct mg_proc *procs = NULL;
	bool found = false;
	int n;

	assert_true(fd >= 0);
	n = mg_proc_scan(fd, &procs);
	close(fd);
	assert_true(n > 0);
	for (int i = 0; i < n; i++) {
		assert_true(procs[i].pid > 0);
		if (i > 0)
			assert_true(procs[i].pid > procs[i - 1].pid);
		if (procs[i].pid == getpid()) {
			found = true;
			assert_int_equal(procs[i].ppid, getppid());
		}
	}
	assert_true(found);
	free(procs);
}

static void scan_bad_fd(void **state)
{
	struct mg_proc *procs = NULL;
	struct fake_tree t;
	int fd;

	assert_int_equal(mg_proc_scan(-1, &procs), -EBADF);
	ft_new(&t);
	ft_write(t.fd, "file", "x");
	fd = openat(t.fd, "file", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(mg_proc_scan(fd, &procs), -ENOTDIR);
	assert_null(procs);
	close(fd);
	ft_free(&t);
}

/* --- trees --- */

#define P(pid, ppid, rss)                                                                                    \
	{                                                                                                    \
		(pid), (ppid), (pid), 'S', (rss), "p", 0, 0                                                  \
	}

/* Sorted by pid. */
static const struct mg_proc snapshot[] = {
        P(1, 0, 100),      /* init */
        P(100, 1, 10),     /* root A */
        P(101, 100, 20),   /*   child */
        P(102, 101, 40),   /*     grandchild */
        P(103, 102, 80),   /*       great-grandchild */
        P(110, 101, 1000), /*     root D, inside A's tree */
        P(111, 110, 2000), /*       counts for D */
        P(112, 111, 4000), /*         counts for D */
        P(150, 1, 7),      /* outside any tree */
        P(151, 150, 9),    /*   outside too */
        P(200, 1, 300),    /* root B */
        P(250, 200, 600),  /*   child */
        P(500, 501, 11),   /* a ppid cycle, no root on it */
        P(501, 500, 13),   /*   the other half */
        P(600, 600, 17),   /* its own parent */
        P(700, 999, 19),   /* parent missing from the snapshot */
};
static const pid_t roots[] = {100, 200, 300 /* no processes */, 110};

struct root_case {
	pid_t pid;
	long want;
};

static void root_of_table(void **state)
{
	static const struct root_case cases[] = {
	        {1, -1},   {100, 0},  {101, 0},  {102, 0},  {103, 0}, {110, 3}, {111, 3},
	        {112, 3},  {150, -1}, {151, -1}, {200, 1},  {250, 1}, {300, 2}, {500, -1},
	        {501, -1}, {600, -1}, {700, -1}, {999, -1}, {0, -1},  {-5, -1}, {12345, -1},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		long got = mg_proc_root_of(snapshot, MG_ARRAY_SIZE(snapshot), roots, MG_ARRAY_SIZE(roots),
		                           cases[i].pid);
		if (got != cases[i].want)
			print_error("root of %d: %ld; want %ld\n", (int)cases[i].pid, got, cases[i].want);
		assert_int_equal(got, cases[i].want);
	}
	/* No roots, no processes. */
	assert_int_equal(mg_proc_root_of(snapshot, MG_ARRAY_SIZE(snapshot), roots, 0, 102), -1);
	assert_int_equal(mg_proc_root_of(snapshot, 0, roots, MG_ARRAY_SIZE(roots), 102), -1);
	assert_int_equal(mg_proc_root_of(snapshot, 0, roots, MG_ARRAY_SIZE(roots), 200), 1);
}

static void tree_rss_nearest_root(void **state)
{
	uint64_t pages[MG_ARRAY_SIZE(roots)];
	uint64_t total = 0, outside = 100 + 7 + 9 + 11 + 13 + 17 + 19;

	memset(pages, 0xff, sizeof(pages));
	mg_proc_tree_rss(snapshot, MG_ARRAY_SIZE(snapshot), roots, MG_ARRAY_SIZE(roots), pages);
	assert_true(pages[0] == 10 + 20 + 40 + 80);  /* A without D's subtree */
	assert_true(pages[1] == 300 + 600);          /* B */
	assert_true(pages[2] == 0);                  /* a root with no processes */
	assert_true(pages[3] == 1000 + 2000 + 4000); /* D, nested in A */

	/* Every process counted at most once: the sums and what is outside
	 * add up to the snapshot. */
	for (size_t i = 0; i < MG_ARRAY_SIZE(roots); i++)
		total += pages[i];
	for (size_t i = 0; i < MG_ARRAY_SIZE(snapshot); i++)
		total -= snapshot[i].rss_pages;
	assert_true(total + outside == 0);
}

static void tree_rss_root_order_does_not_matter(void **state)
{
	static const pid_t permuted[] = {110, 300, 200, 100};
	uint64_t pages[4];

	mg_proc_tree_rss(snapshot, MG_ARRAY_SIZE(snapshot), permuted, 4, pages);
	assert_true(pages[0] == 7000);
	assert_true(pages[1] == 0);
	assert_true(pages[2] == 900);
	assert_true(pages[3] == 150);

	/* Only the outer root: it gets everything below it, D included. */
	static const pid_t outer[] = {100};
	mg_proc_tree_rss(snapshot, MG_ARRAY_SIZE(snapshot), outer, 1, pages);
	assert_true(pages[0] == 150 + 7000);

	/* Only the inner root. */
	static const pid_t inner[] = {110};
	mg_proc_tree_rss(snapshot, MG_ARRAY_SIZE(snapshot), inner, 1, pages);
	assert_true(pages[0] == 7000);

	/* No processes at all: zeros. */
	memset(pages, 0xff, sizeof(pages));
	mg_proc_tree_rss(NULL, 0, permuted, 4, pages);
	for (size_t i = 0; i < 4; i++)
		assert_true(pages[i] == 0);
}

static void tree_rss_cycles_terminate(void **state)
{
	/* A torn snapshot: pids reused between reads make ppid loops. */
	static const struct mg_proc loops[] = {
	        P(800, 801, 1),  P(801, 800, 2),                  /* a loop through a root */
	        P(900, 902, 4),  P(901, 900, 8), P(902, 901, 16), /* a loop of three, no root */
	        P(950, 950, 32),                                  /* its own parent */
	};
	static const pid_t loop_roots[] = {801, 4242};
	uint64_t pages[2];

	assert_int_equal(mg_proc_root_of(loops, MG_ARRAY_SIZE(loops), loop_roots, 2, 800), 0);
	assert_int_equal(mg_proc_root_of(loops, MG_ARRAY_SIZE(loops), loop_roots, 2, 901), -1);
	assert_int_equal(mg_proc_root_of(loops, MG_ARRAY_SIZE(loops), loop_roots, 2, 950), -1);
	mg_proc_tree_rss(loops, MG_ARRAY_SIZE(loops), loop_roots, 2, pages);
	assert_true(pages[0] == 3);
	assert_true(pages[1] == 0);
}

static void tree_rss_deep_chain(void **state)
{
	enum { DEPTH = 3000 };
	struct mg_proc *chain = calloc(DEPTH, sizeof(*chain));
	const pid_t root[] = {10};
	uint64_t pages[1];

	assert_non_null(chain);
	/* 10 <- 11 <- 12 <- ... a task that forks itself 3000 deep. */
	for (int i = 0; i < DEPTH; i++)
		chain[i] = (struct mg_proc){
		        .pid = 10 + i, .ppid = i ? 10 + i - 1 : 1, .state = 'S', .rss_pages = 1};
	assert_int_equal(mg_proc_root_of(chain, DEPTH, root, 1, 10 + DEPTH - 1), 0);
	mg_proc_tree_rss(chain, DEPTH, root, 1, pages);
	free(chain);
	assert_true(pages[0] == DEPTH);
}

/* --- mg_proc_attribute: processes that left their task's tree --- */

#define Q(pid, ppid, start, tag)                                                                             \
	{                                                                                                    \
		(pid), (ppid), (pid), 'S', 1, "p", (start), (tag)                                            \
	}

enum { LAUNCHER = 50 };

/* Sorted by pid. The launcher (a subreaper) is 50; tasks 0 and 1 run as 100
 * and 200; everything with ppid 50 and no root is an orphan of some task. */
static const struct mg_proc escaped[] = {
        Q(1, 0, 1, 0),      Q(50, 1, 5, 0), /* the launcher */
        Q(100, 50, 10, 1),                  /* task 0 */
        Q(101, 100, 11, 1),                 /*   its child, by ppid */
        Q(200, 50, 20, 2),                  /* task 1 */
        Q(300, 50, 30, 0),                  /* orphan, seen in task 0's tree: no tag needed */
        Q(301, 300, 31, 0),                 /*   forked by it: follows it */
        Q(302, 301, 32, 2),                 /*     a tag below a seen ancestor does not matter */
        Q(310, 50, 41, 0),  /* orphan on a pid seen before, another start time: a new process */
        Q(320, 50, 42, 2),  /* orphan not seen, MEMGUARD_TASK=1 */
        Q(321, 320, 43, 0), /*   its child */
        Q(330, 50, 44, 9),  /* MEMGUARD_TASK=8: no such task */
        Q(340, 50, 45, 0),  /* not seen, no tag: unknown while two tasks run */
        Q(400, 1, 46, 1),   /* MEMGUARD_TASK=0 but not our orphan: another run's */
        Q(410, 400, 47, 0), /*   its child */
        Q(500, 1, 48, 0),   /* seen, re-parented elsewhere (a nested subreaper died) */
        Q(600, 601, 49, 0), /* a ppid cycle */
        Q(601, 600, 50, 0),
};
static const pid_t escaped_roots[] = {100, 200};

struct attribute_case {
	pid_t pid;
	long want;
};

static void attribute_orphans(void **state)
{
	struct mg_proc_seen seen[] = {
	        {500, 48, 1}, {300, 30, 0}, {310, 40, 1},
	        {101, 11, 0}, {999, 1, 0}, /* gone: a stale entry matches nothing */
	};
	static const struct attribute_case want[] = {
	        {1, -1},   {50, -1},  {100, 0},  {101, 0}, {200, 1},  {300, 0},
	        {301, 0},  {302, 0},  {310, -1}, {320, 1}, {321, 1},  {330, -1},
	        {340, -1}, {400, -1}, {410, -1}, {500, 1}, {600, -1}, {601, -1},
	};
	long got[MG_ARRAY_SIZE(escaped)];

	assert_int_equal(MG_ARRAY_SIZE(want), MG_ARRAY_SIZE(escaped));
	mg_proc_seen_sort(seen, MG_ARRAY_SIZE(seen));
	for (size_t i = 1; i < MG_ARRAY_SIZE(seen); i++)
		assert_true(seen[i - 1].pid < seen[i].pid);
	memset(got, 0x55, sizeof(got));
	mg_proc_attribute(escaped, MG_ARRAY_SIZE(escaped), escaped_roots, 2, LAUNCHER, seen,
	                  MG_ARRAY_SIZE(seen), got);
	for (size_t i = 0; i < MG_ARRAY_SIZE(escaped); i++) {
		assert_int_equal(escaped[i].pid, want[i].pid);
		if (got[i] != want[i].want)
			print_error("task of %d: %ld; want %ld\n", (int)want[i].pid, got[i], want[i].want);
		assert_int_equal(got[i], want[i].want);
	}
}

/* What today's ppid walk alone gives the same snapshot: every orphan lost. */
static void attribute_without_memory_is_root_of(void **state)
{
	long got[MG_ARRAY_SIZE(escaped)];

	/* No reaper, nothing seen: exactly mg_proc_root_of. */
	mg_proc_attribute(escaped, MG_ARRAY_SIZE(escaped), escaped_roots, 2, 0, NULL, 0, got);
	for (size_t i = 0; i < MG_ARRAY_SIZE(escaped); i++)
		assert_int_equal(got[i], mg_proc_root_of(escaped, MG_ARRAY_SIZE(escaped), escaped_roots, 2,
		                                         escaped[i].pid));
	assert_int_equal(got[5], -1); /* 300 */
}

static void attribute_sole_running_task(void **state)
{
	/* Task 1 is done (root 0): an orphan nobody can place is task 0's. */
	static const pid_t one[] = {100, 0};
	static const pid_t none[] = {0, 0};
	long got[MG_ARRAY_SIZE(escaped)];

	mg_proc_attribute(escaped, MG_ARRAY_SIZE(escaped), one, 2, LAUNCHER, NULL, 0, got);
	assert_int_equal(got[2], 0);   /* 100 */
	assert_int_equal(got[4], 1);   /* 200: no longer a root, an orphan tagged task 1 */
	assert_int_equal(got[9], 1);   /* 320: its tag still wins */
	assert_int_equal(got[11], 0);  /* 330: a bad tag, the only task */
	assert_int_equal(got[12], 0);  /* 340 */
	assert_int_equal(got[13], -1); /* 400: not ours */
	/* Nothing running: no sole task to charge. */
	mg_proc_attribute(escaped, MG_ARRAY_SIZE(escaped), none, 2, LAUNCHER, NULL, 0, got);
	assert_int_equal(got[12], -1);
	assert_int_equal(got[9], 1);
	/* No processes. */
	mg_proc_attribute(NULL, 0, one, 2, LAUNCHER, NULL, 0, got);
}

struct environ_case {
	const char *block;
	size_t size;
	int want_r;
	uint32_t want;
};

#define ENV(lit, r, task)                                                                                    \
	{                                                                                                    \
		lit, sizeof(lit) - 1, r, task                                                                \
	}

static void environ_task_table(void **state)
{
	static const struct environ_case cases[] = {
	        ENV("PATH=/bin\0MEMGUARD_TASK=3\0HOME=/\0", 0, 3),
	        ENV("MEMGUARD_TASK=0\0", 0, 0),
	        ENV("MEMGUARD_TASK=1023", 0, 1023),                   /* no final NUL: cut at the end */
	        ENV("A=1\0MEMGUARD_TASK=7\0MEMGUARD_TASK=8\0", 0, 7), /* the first, as getenv */
	        ENV("MEMGUARD_TASKS=4\0", -ENODATA, 0),
	        ENV("XMEMGUARD_TASK=4\0", -ENODATA, 0),
	        ENV("MEMGUARD_TASK=\0", -ENODATA, 0),
	        ENV("MEMGUARD_TASK=-1\0", -ENODATA, 0),
	        ENV("MEMGUARD_TASK= 1\0", -ENODATA, 0),
	        ENV("MEMGUARD_TASK=4294967295\0", -ENODATA, 0),
	        ENV("MEMGUARD_TASK=99999999999999999999\0", -ENODATA, 0),
	        ENV("MEMGUARD_NTASKS=2\0", -ENODATA, 0),
	        ENV("\0\0\0", -ENODATA, 0),
	        ENV("", -ENODATA, 0),
	        ENV("MEMGUARD_TASK", -ENODATA, 0),
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		uint32_t task = 4242;
		int r = mg_proc_environ_task(cases[i].block, cases[i].size, &task);
		if (r != cases[i].want_r)
			print_error("case %zu: %d\n", i, r);
		assert_int_equal(r, cases[i].want_r);
		assert_int_equal(task, r == 0 ? cases[i].want : 4242);
	}
}

struct has_case {
	const char *block;
	size_t size;
	bool want;
};

#define HAS(lit, want)                                                                                       \
	{                                                                                                    \
		lit, sizeof(lit) - 1, want                                                                   \
	}

/* Only the exact value counts: the watcher of a SIGKILLed launcher kills by
 * it, so a prefix, a longer value or another run's must not match. */
static void environ_has_table(void **state)
{
	static const struct has_case cases[] = {
	        HAS("PATH=/bin\0MEMGUARD_RUN=42-1000\0HOME=/\0", true),
	        HAS("MEMGUARD_RUN=42-1000", true),                      /* no final NUL */
	        HAS("MEMGUARD_RUN=42-1000\0MEMGUARD_RUN=7-1\0", true),  /* the first, as getenv */
	        HAS("MEMGUARD_RUN=7-1\0MEMGUARD_RUN=42-1000\0", false), /* not the one getenv sees */
	        HAS("MEMGUARD_RUN=42-10000\0", false),                  /* longer */
	        HAS("MEMGUARD_RUN=42-100\0", false),                    /* a prefix */
	        HAS("MEMGUARD_RUN=42-1000 \0", false),
	        HAS("MEMGUARD_RUN=\0", false),
	        HAS("MEMGUARD_RUNS=42-1000\0", false),
	        HAS("XMEMGUARD_RUN=42-1000\0", false),
	        HAS("A=MEMGUARD_RUN=42-1000\0", false),
	        HAS("MEMGUARD_RUN\0", false),
	        HAS("\0\0", false),
	        HAS("", false),
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		bool got = mg_proc_environ_has(cases[i].block, cases[i].size, "MEMGUARD_RUN", "42-1000");
		if (got != cases[i].want)
			print_error("case %zu: %d\n", i, got);
		assert_true(got == cases[i].want);
	}
}

static void status_field_table(void **state)
{
	static const char status[] = "Name:\tUid: 5 (a name that looks like a field)\n"
	                             "Umask:\t0022\n"
	                             "Uid:\t1000\t1001\t1000\t1000\n"
	                             "CapEff:\t0000000000000020\n"
	                             "VmPeak:\t   153600 kB\n"
	                             "Cpus_allowed:\tf";
	static const struct {
		const char *text, *key, *want; /* want: how the value starts, NULL for none */
	} cases[] = {
	        {status, "Uid", "1000\t1001\t1000\t1000\n"},
	        {status, "Name", "Uid: 5 (a name that looks like a field)\n"},
	        {status, "CapEff", "0000000000000020\n"},
	        {status, "VmPeak", "153600 kB\n"},
	        {status, "Cpus_allowed", "f"},   /* the last line, without a newline */
	        {status, "Cpus", NULL},          /* a prefix of a key is not the key */
	        {status, "U", NULL},             /* nor of Uid or Umask */
	        {status, "Gid", NULL},           /* absent */
	        {"Uid:1", "Uid", "1"},           /* the first line, no blank */
	        {"Uid:", "Uid", ""},             /* an empty value */
	        {"", "Uid", NULL},               /* empty text */
	        {"\n\nUid:\t7\n", "Uid", "7\n"}, /* after empty lines */
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const char *got = mg_status_field(cases[i].text, cases[i].key);
		if (!cases[i].want)
			assert_null(got);
		else {
			assert_non_null(got);
			assert_memory_equal(got, cases[i].want, strlen(cases[i].want));
		}
	}
}

static void environ_find_value(void **state)
{
	static const char block[] = "A=1\0B=\0C=x=y\0";
	const char *v = NULL;
	size_t len = 99;

	assert_int_equal(mg_proc_environ_find(block, sizeof(block) - 1, "C", &v, &len), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(v, "x=y", 3);
	assert_int_equal(mg_proc_environ_find(block, sizeof(block) - 1, "B", &v, &len), 0);
	assert_int_equal(len, 0);
	assert_int_equal(mg_proc_environ_find(block, sizeof(block) - 1, "D", &v, &len), -ENODATA);
}

static void read_task_tag_fake_proc(void **state)
{
	static const char env[] = "HOME=/\0MEMGUARD_TASK=5\0";
	struct fake_tree t;
	uint32_t tag = 0;

	ft_new(&t);
	ft_mkdir(t.fd, "77");
	ft_mkdir(t.fd, "78");
	ft_write_bytes(t.fd, "77/environ", env, sizeof(env) - 1);
	ft_write(t.fd, "78/environ", "HOME=/");
	assert_int_equal(mg_proc_read_task_tag(t.fd, 77, &tag), 0);
	assert_int_equal(tag, 6);
	assert_int_equal(mg_proc_read_task_tag(t.fd, 78, &tag), -ENODATA);
	assert_int_equal(mg_proc_read_task_tag(t.fd, 79, &tag), -ENOENT);
	ft_free(&t);
}

/* An empty scan hands back procs == NULL with a count of 0, and that pair is
 * a valid snapshot for the tree functions. Last in the list: under UBSan
 * (-fno-sanitize-recover) a failure here aborts the program. */
static void root_of_empty_scan_result(void **state)
{
	struct fake_tree t;
	struct mg_proc *procs = NULL;
	uint64_t pages[MG_ARRAY_SIZE(roots)];
	int n;

	ft_new(&t);
	n = mg_proc_scan(t.fd, &procs);
	ft_free(&t);
	assert_int_equal(n, 0);
	mg_proc_tree_rss(procs, (size_t)n, roots, MG_ARRAY_SIZE(roots), pages);
	assert_true(pages[0] == 0);
	/* 102 is not a root: the snapshot has to be searched, and is empty. */
	assert_int_equal(mg_proc_root_of(procs, (size_t)n, roots, MG_ARRAY_SIZE(roots), 102), -1);
	assert_int_equal(mg_proc_root_of(procs, (size_t)n, roots, MG_ARRAY_SIZE(roots), 200), 1);
	free(procs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(parse_real_self_stat),
	        cmocka_unit_test(parse_hostile_comm),
	        cmocka_unit_test(parse_fields),
	        cmocka_unit_test(parse_every_truncation_fails),
	        cmocka_unit_test(parse_garbage),
	        cmocka_unit_test(scan_fake_proc),
	        cmocka_unit_test(scan_many_and_empty),
	        cmocka_unit_test(scan_real_proc),
	        cmocka_unit_test(scan_bad_fd),
	        cmocka_unit_test(root_of_table),
	        cmocka_unit_test(tree_rss_nearest_root),
	        cmocka_unit_test(tree_rss_root_order_does_not_matter),
	        cmocka_unit_test(tree_rss_cycles_terminate),
	        cmocka_unit_test(tree_rss_deep_chain),
	        cmocka_unit_test(attribute_orphans),
	        cmocka_unit_test(attribute_without_memory_is_root_of),
	        cmocka_unit_test(attribute_sole_running_task),
	        cmocka_unit_test(environ_task_table),
	        cmocka_unit_test(environ_has_table),
	        cmocka_unit_test(environ_find_value),
	        cmocka_unit_test(status_field_table),
	        cmocka_unit_test(read_task_tag_fake_proc),
	        cmocka_unit_test(root_of_empty_scan_result),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
