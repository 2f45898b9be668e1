/* worker: a well-behaved task that holds its memory and computes on it.
 *   worker MIB SECONDS
 * Allocates MIB MiB, then for SECONDS keeps passing over all of it (a read and
 * a write per cache line), so its whole working set stays in use. Prints the
 * passes it made and exits 0. Never grows past MIB. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long mib;
	double seconds, end;
	unsigned long passes = 0, sum = 0;

	if (argc != 3 || (mib = atol(argv[1])) <= 0 || (seconds = atof(argv[2])) < 0) {
		fprintf(stderr, "usage: worker MIB SECONDS\n");
		return 64;
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
	return 0;
}
