/* worker: a well-behaved task that holds its memory and computes on it.
 *   worker MIB SECONDS [TAG]
 * Allocates MIB MiB, then for SECONDS keeps passing over all of it (a read and
 * a write per cache line), so its whole working set stays in use. Prints the
 * passes it made and exits 0. Never grows past MIB.
 * With BENCH_ATTEMPT_LOG set (bench/sweep.sh), each run of it is an attempt
 * of task TAG and appends to that file, each line with one write (O_APPEND):
 *   start TAG PID MS   as it starts, before it allocates
 *   end TAG PID MS     when it is done
 *   term TAG PID MS    on SIGTERM, which then ends it as it would have
 * (MS: CLOCK_REALTIME in milliseconds), so that whoever started it, an
 * attempt with a start and no end was killed, with SIGTERM or SIGKILL. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int attempt_log = -1;
static const char *tag = "-";

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* One line of the attempt log, with one write. Also called from the SIGTERM
 * handler: snprintf is not on POSIX's async-signal-safe list, but the main
 * loop it interrupts holds no lock of stdio's (it touches memory, or reads
 * the clock). */
static void stamp(const char *what)
{
	struct timespec t;
	char line[160];

	if (attempt_log < 0)
		return;
	clock_gettime(CLOCK_REALTIME, &t);
	int n = snprintf(line, sizeof(line), "%s %s %ld %lld.%03ld\n", what, tag, (long)getpid(),
	                 (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000, (t.tv_nsec / 1000) % 1000);
	if (n > 0 && (size_t)n < sizeof(line) && write(attempt_log, line, (size_t)n) < 0) {
		/* the attempt goes on without its line */
	}
}

static void on_term(int sig)
{
	stamp("term");
	signal(sig, SIG_DFL);
	raise(sig);
}

int main(int argc, char **argv)
{
	long mib;
	double seconds, end;
	unsigned long passes = 0, sum = 0;
	const char *log = getenv("BENCH_ATTEMPT_LOG");

	if ((argc != 3 && argc != 4) || (mib = atol(argv[1])) <= 0 || (seconds = atof(argv[2])) < 0) {
		fprintf(stderr, "usage: worker MIB SECONDS [TAG]\n");
		return 64;
	}
	if (argc == 4)
		tag = argv[3];
	if (log && *log) {
		attempt_log = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
		if (attempt_log < 0)
			perror("worker: BENCH_ATTEMPT_LOG");
		signal(SIGTERM, on_term);
		stamp("start");
	}
	size_t size = (size_t)mib << 20;
	unsigned char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("worker: mmap");
		return 2;
	}
	for (size_t off = 0; off < size; off += 4096)
		p[off] = 1;
	end = now() + seconds;
	while (now() < end) {
		for (size_t off = 0; off < size; off += 64) {
			sum += p[off];
			p[off] = (unsigned char)(sum + passes);
		}
		passes++;
	}
	printf("worker: %lu passes over %ld MiB\n", passes, mib);
	stamp("end");
	return 0;
}
