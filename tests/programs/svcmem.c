/* svcmem: a node service's memory, for the service guard's tests and bench.
 *   svcmem leak KIB_PER_S [OPTIONS]     grows by KIB_PER_S for ever
 *   svcmem steady MIB [OPTIONS]         holds MIB
 *   svcmem sawtooth BASE PEAK PERIOD    grows from BASE to PEAK MiB over PERIOD s, drops back, again
 * OPTIONS:
 *   --start MIB      what leak holds at first (default 16)
 *   --after SEC      leak holds --start this long before it leaks (default 0)
 *   --work MS        every MS ms it does a request's work, which needs 1 MiB for a moment, as a
 *                    server needs memory to send a job (default 1000; 0: never)
 *   --socket PATH    answers each connection after that work: "ok\n", or the error ("Cannot
 *                    allocate memory\n")
 *   --ignore-term    SIGTERM is said and ignored: only SIGKILL ends it
 * What it holds is anonymous memory of one mapping, made resident with
 * MADV_POPULATE_WRITE (5.14+; else by touching it) and given back with
 * MADV_DONTNEED, all through system calls: no page fault of its own
 * allocates. When memory cannot be had (at a memory.max where it may not
 * be OOM-killed), it says so on stderr ("Cannot allocate memory", at most
 * once a second) and goes on, as the batch server that "sat around
 * moaning" did. SIGTERM stops it cleanly: it says so, and
 * exits 0. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define MiB (1ull << 20)
#define TICK_MS 100
#define GROW_STEP (64ull << 10)
/* The mapping: never made resident whole (MAP_NORESERVE). */
#define ARENA (64ull << 30)

static volatile sig_atomic_t stop, ignored;
static bool ignore_term;

static void on_term(int sig)
{
	(void)sig;
	if (ignore_term)
		ignored = 1;
	else
		stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Says what failed, at most once a second for each *last (one per kind). */
static void moan(double *last, const char *what, int err)
{
	double t = now_s();

	if (t - *last < 1)
		return;
	*last = t;
	fprintf(stderr, "svcmem: %s: %s\n", what, strerror(err));
}

static char *arena;
static size_t held, page;
static int populate = 1; /* MADV_POPULATE_WRITE works */

/* Holds target bytes (page aligned); returns what it holds. */
static size_t hold(size_t target)
{
	target -= target % page;
	if (target < held) {
		madvise(arena + target, held - target, MADV_DONTNEED);
		held = target;
	}
	/* Told to stop (or a SIGTERM to say it ignores): each step may wait up to 2 s at a memory.high. */
	while (held < target && !stop && !ignored) {
		/* 64 KiB at a time: at a memory.high the kernel makes a call wait up to 2 s for each 64
		 * pages over it, and a signal is seen only between calls. */
		size_t step = target - held < GROW_STEP ? target - held : GROW_STEP;
		if (populate && madvise(arena + held, step, MADV_POPULATE_WRITE) < 0) {
			if (errno == EINVAL || errno == ENOSYS) {
				populate = 0;
				continue;
			}
			static double last;
			char what[64];
			snprintf(what, sizeof(what), "grow to %zu MiB", (held + step) >> 20);
			moan(&last, what, errno);
			break;
		}
		if (!populate)
			for (size_t i = 0; i < step; i += page)
				arena[held + i] = 1;
		held += step;
	}
	return held;
}

/* A request's work: it needs MiB of memory for a moment (made resident,
 * then given back), and answers fd, when there is one, "ok" or the error.
 * In the process itself, not a forked child: at a memory.max where the
 * kernel may kill no one, a forked child's (and its parent's) next
 * copy-on-write fault waits for memory for ever. */
static char *scratch;

static int work(int fd)
{
	int err = madvise(scratch, MiB, MADV_POPULATE_WRITE) < 0 ? errno : 0;

	/* Before 5.14 (no MADV_POPULATE_WRITE): touched. */
	if (err == EINVAL || err == ENOSYS) {
		memset(scratch, 1, MiB);
		err = 0;
	} else if (err) {
		static double last;
		moan(&last, "serve a request", err);
	}
	madvise(scratch, MiB, MADV_DONTNEED);
	if (fd >= 0) {
		char msg[128];
		int len = snprintf(msg, sizeof(msg), "%s\n", err ? strerror(err) : "ok");
		(void)!write(fd, msg, (size_t)len);
	}
	return -err;
}

static int listen_on(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0 || strlen(path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, path);
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0)
		return -1;
	return fd;
}

static void usage(void)
{
	fputs("usage: svcmem leak KIB_PER_S | steady MIB | sawtooth BASE_MIB PEAK_MIB PERIOD_S\n"
	      "              [--start MIB] [--after SEC] [--work MS] [--socket PATH]\n",
	      stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	double rate = 0, start_mib = 16, after = 0, base = 0, peak = 0, period = 1, work_ms = 1000;
	const char *socket_path = NULL, *mode;
	int i = 2;

	if (argc < 3)
		usage();
	mode = argv[1];
	if (strcmp(mode, "leak") == 0) {
		rate = atof(argv[i++]);
	} else if (strcmp(mode, "steady") == 0) {
		start_mib = atof(argv[i++]);
	} else if (strcmp(mode, "sawtooth") == 0 && argc >= 5) {
		base = atof(argv[i++]);
		peak = atof(argv[i++]);
		period = atof(argv[i++]);
	} else {
		usage();
	}
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--ignore-term") == 0) {
			ignore_term = true;
			continue;
		}
		if (i + 1 >= argc)
			usage();
		if (strcmp(argv[i], "--start") == 0)
			start_mib = atof(argv[++i]);
		else if (strcmp(argv[i], "--after") == 0)
			after = atof(argv[++i]);
		else if (strcmp(argv[i], "--work") == 0)
			work_ms = atof(argv[++i]);
		else if (strcmp(argv[i], "--socket") == 0)
			socket_path = argv[++i];
		else
			usage();
	}
	if (period <= 0)
		usage();
	setvbuf(stderr, NULL, _IOLBF, 0);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	page = (size_t)sysconf(_SC_PAGESIZE);
	arena = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (arena == MAP_FAILED) {
		perror("svcmem: mmap");
		return 1;
	}
	/* Small pages: a huge page is charged 512 pages at once, and at a memory.high one step would
	 * then wait many seconds, deaf to SIGTERM meanwhile. */
	(void)madvise(arena, ARENA, MADV_NOHUGEPAGE);
	scratch = mmap(NULL, MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (scratch == MAP_FAILED) {
		perror("svcmem: mmap");
		return 1;
	}
	int lfd = socket_path ? listen_on(socket_path) : -1;
	if (socket_path && lfd < 0) {
		fprintf(stderr, "svcmem: listen on %s: %s\n", socket_path, strerror(errno));
		return 1;
	}
	double t0 = now_s(), last_work = t0, last_said = 0;
	bool leaking = false;
	fprintf(stderr, "svcmem %s: pid %d%s%s\n", mode, (int)getpid(), socket_path ? ", answering on " : "",
	        socket_path ?: "");
	while (!stop) {
		double t = now_s() - t0, mib;
		if (ignored) {
			ignored = 0;
			fprintf(stderr, "svcmem: SIGTERM: ignored\n");
		}
		if (strcmp(mode, "leak") == 0) {
			mib = start_mib + (t > after ? (t - after) * rate / 1024 : 0);
			if (t > after && !leaking) {
				leaking = true;
				fprintf(stderr, "svcmem: leak begins: %.0f KiB/s from %zu MiB\n", rate,
				        held >> 20);
			}
		} else if (strcmp(mode, "steady") == 0) {
			mib = start_mib;
		} else {
			double phase = t / period - (double)(long)(t / period);
			mib = base + (peak - base) * phase;
		}
		hold((size_t)(mib * MiB));
		if (t - last_said >= 10) {
			last_said = t;
			fprintf(stderr, "svcmem: holding %zu MiB\n", held >> 20);
		}
		if (work_ms > 0 && (now_s() - last_work) * 1000 >= work_ms) {
			last_work = now_s();
			work(-1);
		}
		struct pollfd p = {.fd = lfd, .events = POLLIN};
		if (poll(&p, lfd >= 0, TICK_MS) > 0) {
			int c;
			while ((c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
				work(c);
				close(c);
			}
		}
	}
	fprintf(stderr, "svcmem: SIGTERM: stopping cleanly, holding %zu MiB\n", held >> 20);
	if (socket_path)
		unlink(socket_path);
	return 0;
}
