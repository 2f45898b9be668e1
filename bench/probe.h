/* What the bench's probes (heartbeat, sampler, stallprobe) share: a stop
 * flag that SIGTERM and SIGINT raise, so the probe leaves its loop and
 * writes its final record, and the clock in nanoseconds. */
#pragma once

#include <signal.h>
#include <time.h>

static volatile sig_atomic_t stop;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static inline void catch_stop_signals(void)
{
	struct sigaction sa = {.sa_handler = on_stop_signal};

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

static inline long long now_ns(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}
