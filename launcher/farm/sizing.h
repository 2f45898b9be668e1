/* Sizing advice at the end of a sweep: the spread of the peaks of the
 * tasks that succeeded against their share, and the --mem-per-task and -n
 * the next run could use. Pure. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Headroom above the largest peak in the advice: a rerun's peaks move
 * with its input and the page cache, and one task killed at its share
 * costs more than the memory left idle. */
#define MG_SIZING_HEADROOM_PERCENT 20u

struct mg_sizing {
	size_t n; /* peaks it rests on */
	uint64_t median, p95, max;
	uint64_t suggest_share; /* max + headroom, rounded up to a MiB, at most the budget */
	unsigned suggest_fit;   /* tasks of suggest_share that fit in the budget */
	unsigned suggest_n;     /* as many, at most max_n */
};

/* From the peaks of the tasks that succeeded (peaks is sorted in place).
 * Percentiles by nearest rank. max_n bounds the -n it suggests (the CPUs:
 * more tasks at once than CPUs only share them; 0: no bound). -ENODATA when
 * n is 0. */
int mg_sizing_advise(uint64_t *peaks, size_t n, uint64_t budget, unsigned max_n, struct mg_sizing *ret);

/* The share whose headroom holds peak: peak + MG_SIZING_HEADROOM_PERCENT,
 * rounded up to a MiB, at most budget (0: none). Pure. */
uint64_t mg_sizing_share(uint64_t peak, uint64_t budget);
