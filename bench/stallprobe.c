/* stallprobe: where does a late process spend its lateness?
 *   stallprobe PID OUT.txt [PERIOD_MS]
 * Runs SCHED_FIFO and mlocked, wakes every PERIOD_MS (default 20) and reads
 * /proc/PID/stat (state), wchan, schedstat (ns on CPU, ns waiting for one).
 * A stretch of ticks in which PID stays off its usual sleep (state R, or a
 * wchan other than its first one) is an episode; episodes of 200 ms or more
 * are written to OUT.txt at SIGTERM with their state, wchan, kernel stack
 * (read at the episode's start and after a second), and how much of the time
 * it waited for a CPU. The probe's own worst lateness says whether the whole
 * guest stood still. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#define MAX_EP 256

struct episode {
	long long start_ms, end_ms;
	char state;
	char wchan[64];
	char stack[1024], stack_later[1024];
	unsigned long long wait_ns, run_ns;
	int later_taken;
};

static struct episode ep[MAX_EP];
static int nep;

static int slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return (int)n;
}

static char state_of(const char *stat)
{
	const char *p = strrchr(stat, ')');

	return p && p[1] == ' ' ? p[2] : '?';
}

int main(int argc, char **argv)
{
	char p_stat[64], p_wchan[64], p_sched[64], p_stack[64], buf[4096], home_wchan[64] = "";
	long period_ms = argc > 3 ? atol(argv[3]) : 20;
	struct sched_param sp = {.sched_priority = 10};
	long long period, next, max_late = 0, open_start = 0;
	unsigned long long run0 = 0, wait0 = 0;
	struct episode cur = {0};
	int in_ep = 0;
	FILE *out;

	if (argc < 3 || period_ms <= 0) {
		fprintf(stderr, "usage: stallprobe PID OUT.txt [PERIOD_MS]\n");
		return 64;
	}
	if (mlockall(MCL_CURRENT | MCL_FUTURE) < 0)
		perror("stallprobe: mlockall");
	if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
		perror("stallprobe: SCHED_FIFO");
	catch_stop_signals();
	snprintf(p_stat, sizeof(p_stat), "/proc/%s/stat", argv[1]);
	snprintf(p_wchan, sizeof(p_wchan), "/proc/%s/wchan", argv[1]);
	snprintf(p_sched, sizeof(p_sched), "/proc/%s/schedstat", argv[1]);
	snprintf(p_stack, sizeof(p_stack), "/proc/%s/stack", argv[1]);
	period = period_ms * 1000000LL;
	next = now_ns(CLOCK_MONOTONIC) + period;
	while (!stop) {
		struct timespec t = {.tv_sec = next / 1000000000LL, .tv_nsec = next % 1000000000LL};
		unsigned long long run = 0, wait = 0;
		char wchan[64] = "", state;
		long long late, real_ms;
		int off;

		if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
			continue;
		late = now_ns(CLOCK_MONOTONIC) - next;
		if (late > max_late)
			max_late = late;
		next += period;
		if (next < now_ns(CLOCK_MONOTONIC))
			next = now_ns(CLOCK_MONOTONIC) + period;
		if (slurp(p_stat, buf, sizeof(buf)) < 0)
			break;
		state = state_of(buf);
		if (slurp(p_wchan, wchan, sizeof(wchan)) < 0)
			wchan[0] = 0;
		if (slurp(p_sched, buf, sizeof(buf)) > 0)
			sscanf(buf, "%llu %llu", &run, &wait);
		if (!home_wchan[0] && state == 'S' && wchan[0])
			snprintf(home_wchan, sizeof(home_wchan), "%s", wchan);
		real_ms = now_ns(CLOCK_REALTIME) / 1000000LL;
		off = state == 'R' || state == 'D' || (home_wchan[0] && strcmp(wchan, home_wchan) != 0);
		if (off && !in_ep) {
			in_ep = 1;
			memset(&cur, 0, sizeof(cur));
			cur.start_ms = real_ms;
			cur.state = state;
			snprintf(cur.wchan, sizeof(cur.wchan), "%s", wchan);
			if (slurp(p_stack, cur.stack, sizeof(cur.stack)) < 0)
				cur.stack[0] = 0;
			run0 = run, wait0 = wait;
			open_start = now_ns(CLOCK_MONOTONIC);
		} else if (off && !cur.later_taken && now_ns(CLOCK_MONOTONIC) - open_start > 1000000000LL) {
			cur.later_taken = 1;
			if (slurp(p_stack, cur.stack_later, sizeof(cur.stack_later)) < 0)
				cur.stack_later[0] = 0;
			snprintf(cur.wchan + strlen(cur.wchan), sizeof(cur.wchan) - strlen(cur.wchan),
			         "/%c:%s", state, wchan);
		} else if (!off && in_ep) {
			in_ep = 0;
			cur.end_ms = real_ms;
			cur.run_ns = run - run0;
			cur.wait_ns = wait - wait0;
			if (cur.end_ms - cur.start_ms >= 200 && nep < MAX_EP)
				ep[nep++] = cur;
		}
	}
	if (in_ep && nep < MAX_EP) {
		cur.end_ms = now_ns(CLOCK_REALTIME) / 1000000LL;
		ep[nep++] = cur;
	}
	out = fopen(argv[2], "w");
	if (!out)
		return 1;
	fprintf(out, "probe_max_late_ms %.1f\nhome_wchan %s\nepisodes %d\n", (double)max_late / 1e6,
	        home_wchan, nep);
	for (int i = 0; i < nep; i++)
		fprintf(out,
		        "\nepisode %d start_ms %lld dur_ms %lld state %c wchan %s on_cpu_ms %.1f "
		        "runqueue_ms %.1f\n--- stack at start\n%s--- stack after 1 s\n%s",
		        i, ep[i].start_ms, ep[i].end_ms - ep[i].start_ms, ep[i].state, ep[i].wchan,
		        (double)ep[i].run_ns / 1e6, (double)ep[i].wait_ns / 1e6, ep[i].stack,
		        ep[i].stack_later);
	fclose(out);
	return 0;
}
