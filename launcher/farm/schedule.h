/* The task farm's decisions, pure: whom to start next and with what share
 * (admission by budget), and whether a failed attempt is run again with a
 * larger share. Tested as tables, without processes or cgroups. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A task waiting to start. */
struct mg_sched_task {
	unsigned attempt; /* 1: its first attempt; more: a retry */
	uint64_t share;   /* what it needs */
};

/* What the farm looks like at one moment. */
struct mg_sched_input {
	uint64_t budget;                     /* what the tasks may use together */
	uint64_t in_use;                     /* the shares of the tasks running now */
	unsigned free_slots;                 /* tasks at once (-n) less those running */
	const struct mg_sched_task *pending; /* in the task file's order */
	size_t npending;
};

/* Whom to start: the first first attempt whose share fits in the free
 * budget, else the first retry that fits. So retries wait for room at the
 * end of the sweep instead of holding back the tasks behind them, and a
 * task starts only when its share fits: the budget is never overcommitted.
 * The one exception keeps a run from stalling: with nothing running, a task
 * asking for more than the budget starts with the whole budget.
 * Returns 1 with ret_index (into pending) and ret_share, 0 when nothing may
 * start now (no slot, no room, or nothing pending). */
int mg_sched_next(const struct mg_sched_input *in, size_t *ret_index, uint64_t *ret_share);

/* One node's room: a pool of slots and budget (run/supervisor.h). */
struct mg_sched_pool {
	uint64_t budget;     /* what its tasks may use together */
	uint64_t in_use;     /* the shares running there */
	unsigned free_slots; /* tasks at once less those running, and what its free CPUs allow */
	uint64_t share;      /* a first attempt's share there */
};
#define MG_SCHED_POOLS_MAX 4096

/* Whom to start, and on which node: mg_sched_next on each pool in turn,
 * the one with the most free slots first (ties: the lower index), a first
 * attempt asking its pool's share (its own share is 0 in pending). The stall
 * rule then applies to the idle pool with the largest budget only. Returns 1
 * with ret_pool, ret_index and ret_share, 0 when nothing may start now.
 * Pure. */
int mg_sched_next_pool(const struct mg_sched_pool *pools, size_t npools, const struct mg_sched_task *pending,
                       size_t npending, size_t *ret_pool, size_t *ret_index, uint64_t *ret_share);

/* How an attempt ended, as far as retrying goes. */
struct mg_retry_input {
	bool for_memory;  /* killed at its share, by memguardd or the watchdog, or failed near a limit */
	unsigned retries; /* --retries: how many retries a task may have */
	unsigned retried; /* how many it has had */
	uint64_t share;   /* the attempt's share */
	uint64_t peak;    /* its peak, when peak_known */
	bool peak_known;
	uint64_t budget;    /* what the tasks may use together */
	uint64_t page_size; /* shares are whole pages */
};

/* The share of the retry: the larger of 1.5 × the peak and 2 × the old
 * share, rounded up to a page, at most the budget. 0 when there is to be no
 * retry: not for memory, retries used up, or no larger share to give (the
 * old share was the budget already), so a task that grows without end
 * stops. Pure. */
uint64_t mg_retry_share(const struct mg_retry_input *in);
