/* heartbeat: the benchmark's stand-in for sshd and pbs_mom.
 *   heartbeat OUT.json [PERIOD_MS]
 * Wakes every PERIOD_MS (default 100) on an absolute schedule, reads
 * /proc/loadavg as a node daemon would, and records how late each wake-up was.
 * A wake-up that is late by more than a period skips the beats it missed, so
 * one long stall counts once. Writes a JSON summary to OUT.json every second
 * (so a kill leaves the last one behind) and when SIGTERM or SIGINT arrives,
 * from a thread of its own (bgwrite.h), so a slow share delays the file, not
 * the beat:
 *   {"period_ms":100,"wakes":N,"max_late_ms":X,"late_over_100ms":A,
 *    "late_over_1s":B,"late_over_10s":C,"missed":M,
 *    "worst":[[T_MS,LATE_MS],...],"final":true}
 * worst holds the WORST_KEPT wake-ups furthest behind, worst first, each with the
 * wall-clock time it came (ms since the epoch, the sampler's clock), so that
 * a late wake-up can be laid beside what the emulator and memory did then. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bgwrite.h"
#include "probe.h"

static long long ns(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
}

static struct timespec ts(long long n)
{
	return (struct timespec){.tv_sec = n / 1000000000LL, .tv_nsec = n % 1000000000LL};
}

#define WORST_KEPT 32

struct late_wake {
	long long at_ms, late_ns;
};

struct stats {
	long period_ms, wakes, over_100ms, over_1s, over_10s, missed;
	long long max_late_ns;
	struct late_wake worst[WORST_KEPT]; /* furthest behind first */
	int n_worst;
};

/* Keeps the WORST_KEPT wake-ups furthest behind, worst first. */
static void keep_if_worst(struct stats *s, long long at_ms, long long late_ns)
{
	int i;

	if (s->n_worst == WORST_KEPT && late_ns <= s->worst[WORST_KEPT - 1].late_ns)
		return;
	if (s->n_worst < WORST_KEPT)
		s->n_worst++;
	for (i = s->n_worst - 1; i > 0 && s->worst[i - 1].late_ns < late_ns; i--)
		s->worst[i] = s->worst[i - 1];
	s->worst[i] = (struct late_wake){at_ms, late_ns};
}

static void dump(struct bgwrite *w, const struct stats *s, bool final)
{
	FILE *f = bgwrite_begin(w);

	if (f) {
		fprintf(f,
		        "{\"period_ms\":%ld,\"wakes\":%ld,\"max_late_ms\":%.1f,\"late_over_100ms\":%ld,"
		        "\"late_over_1s\":%ld,\"late_over_10s\":%ld,\"missed\":%ld,\"worst\":[",
		        s->period_ms, s->wakes, (double)s->max_late_ns / 1e6, s->over_100ms, s->over_1s,
		        s->over_10s, s->missed);
		for (int i = 0; i < s->n_worst; i++)
			fprintf(f, "%s[%lld,%.1f]", i ? "," : "", s->worst[i].at_ms,
			        (double)s->worst[i].late_ns / 1e6);
		fprintf(f, "],\"final\":%s}\n", final ? "true" : "false");
	}
	bgwrite_commit(w, f, final);
}

static void touch_proc(void)
{
	char buf[128];
	int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf)) < 0)
			buf[0] = 0;
		close(fd);
	}
}

int main(int argc, char **argv)
{
	struct stats s = {.period_ms = argc > 2 ? atol(argv[2]) : 100};
	static struct bgwrite out;
	struct timespec now, next;
	long long period, last_dump;

	if (argc < 2 || s.period_ms <= 0) {
		fprintf(stderr, "usage: heartbeat OUT.json [PERIOD_MS]\n");
		return 64;
	}
	period = s.period_ms * 1000000LL;
	catch_stop_signals();
	clock_gettime(CLOCK_MONOTONIC, &now);
	last_dump = ns(&now);
	next = ts(ns(&now) + period);
	bgwrite_start(&out, argv[1]);
	dump(&out, &s, false);
	while (!stop) {
		int r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		if (r == EINTR)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long long late = ns(&now) - ns(&next);
		s.wakes++;
		if (late > s.max_late_ns)
			s.max_late_ns = late;
		if (late > 0) {
			struct timespec wall;
			clock_gettime(CLOCK_REALTIME, &wall);
			keep_if_worst(&s, ns(&wall) / 1000000LL, late);
		}
		s.over_100ms += late > 100000000LL;
		s.over_1s += late > 1000000000LL;
		s.over_10s += late > 10000000000LL;
		touch_proc();
		long long n = ns(&next) + period;
		if (n <= ns(&now)) {
			s.missed += (ns(&now) - n) / period + 1;
			n = ns(&now) + period;
		}
		next = ts(n);
		if (ns(&now) - last_dump >= 1000000000LL) {
			dump(&out, &s, false);
			last_dump = ns(&now);
		}
	}
	dump(&out, &s, true);
	return 0;
}
