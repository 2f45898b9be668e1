/* memhog: a task for the integration tests and benchmarks.
 *   memhog [-f FORKS] [-H HOLD_MS] [-s STEP_MIB] [-d DELAY_MS] [-i] MIB|inf
 * Touches MIB MiB (in steps, with a delay between steps), holds it, exits 0.
 * "inf" grows until killed. With -f, FORKS children do the same and the
 * parent waits for them, exiting 1 if any failed. -i ignores SIGTERM. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int hog(long mib, long step_mib, long delay_ms, long hold_ms)
{
	const size_t step = (size_t)step_mib << 20;

	for (long done = 0; mib < 0 || done < mib; done += step_mib) {
		char *p = mmap(NULL, step, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			fprintf(stderr, "memhog: mmap after %ld MiB: %s\n", done, strerror(errno));
			return 2;
		}
		for (size_t off = 0; off < step; off += 4096)
			p[off] = 1;
		if (delay_ms)
			sleep_ms(delay_ms);
	}
	sleep_ms(hold_ms);
	return 0;
}

int main(int argc, char **argv)
{
	long forks = 0, hold_ms = 0, step = 4, delay_ms = 0, mib;
	int c;

	while ((c = getopt(argc, argv, "f:H:s:d:i")) != -1) {
		switch (c) {
		case 'f':
			forks = atol(optarg);
			break;
		case 'H':
			hold_ms = atol(optarg);
			break;
		case 's':
			step = atol(optarg);
			break;
		case 'd':
			delay_ms = atol(optarg);
			break;
		case 'i':
			signal(SIGTERM, SIG_IGN);
			break;
		default:
			return 64;
		}
	}
	if (optind != argc - 1 || step <= 0) {
		fprintf(stderr,
		        "usage: memhog [-f FORKS] [-H HOLD_MS] [-s STEP_MIB] [-d DELAY_MS] [-i] MIB|inf\n");
		return 64;
	}
	mib = strcmp(argv[optind], "inf") == 0 ? -1 : atol(argv[optind]);
	if (forks == 0)
		return hog(mib, step, delay_ms, hold_ms);
	for (long i = 0; i < forks; i++) {
		pid_t pid = fork();
		if (pid < 0)
			return 3;
		if (pid == 0)
			_exit(hog(mib, step, delay_ms, hold_ms));
	}
	int status, failed = 0;
	while (wait(&status) > 0)
		failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	return failed;
}
