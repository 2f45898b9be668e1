/* heartbeat: stands in for sshd or pbs_mom. Wakes every 100 ms for SECONDS
 * and prints the worst lateness of a wake-up in milliseconds.
 *   heartbeat SECONDS */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	const struct timespec period = {0, 100 * 1000000L};
	double seconds = argc > 1 ? atof(argv[1]) : 10, worst = 0;
	double start = now_ms(), expected = start;

	while (expected - start < seconds * 1e3) {
		nanosleep(&period, NULL);
		expected += 100;
		double late = now_ms() - expected;
		if (late > worst)
			worst = late;
		if (late > 0)
			expected = now_ms(); /* measure each wake-up on its own, not the drift */
	}
	printf("%.1f\n", worst);
	return 0;
}
