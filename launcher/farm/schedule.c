/* Admission by budget and the share of a retry (schedule.h). */
#include "farm/schedule.h"

static bool fits(const struct mg_sched_input *in, uint64_t share)
{
	return in->in_use <= in->budget && share <= in->budget - in->in_use;
}

/* The first first attempt whose share fits, else the first retry that
 * fits: two passes over one list. share0, when not 0, is pending[0]'s share
 * if it has none (a first attempt gets the share of the node it goes to). */
static int fitting(const struct mg_sched_input *in, uint64_t share0, size_t *ret_index, uint64_t *ret_share)
{
	if (in->free_slots == 0)
		return 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < in->npending; i++) {
			const struct mg_sched_task *t = &in->pending[i];
			uint64_t share = i == 0 && !t->share ? share0 : t->share;
			if ((t->attempt > 1) != (pass == 1) || !fits(in, share))
				continue;
			*ret_index = i;
			*ret_share = share;
			return 1;
		}
	return 0;
}

int mg_sched_next(const struct mg_sched_input *in, size_t *ret_index, uint64_t *ret_share)
{
	if (in->free_slots == 0 || in->npending == 0)
		return 0;
	if (fitting(in, 0, ret_index, ret_share))
		return 1;
	/* Nothing fits and nothing runs: only a share above the whole budget
	 * (a retry planned on a larger node, say) can be the cause. */
	if (in->in_use == 0 && in->budget > 0) {
		*ret_index = 0;
		*ret_share = in->budget;
		return 1;
	}
	return 0;
}

int mg_sched_next_pool(const struct mg_sched_pool *pools, size_t npools, const struct mg_sched_task *pending,
                       size_t npending, size_t *ret_pool, size_t *ret_index, uint64_t *ret_share)
{
	bool tried[MG_SCHED_POOLS_MAX] = {false};
	size_t idle = SIZE_MAX;

	if (npending == 0 || npools == 0 || npools > MG_SCHED_POOLS_MAX)
		return 0;
	/* The pool with the most free slots first, so that tasks spread. */
	for (size_t round = 0; round < npools; round++) {
		size_t best = SIZE_MAX;
		for (size_t p = 0; p < npools; p++)
			if (!tried[p] && pools[p].free_slots > 0 &&
			    (best == SIZE_MAX || pools[p].free_slots > pools[best].free_slots))
				best = p;
		if (best == SIZE_MAX)
			break;
		tried[best] = true;
		struct mg_sched_input in = {
		        .budget = pools[best].budget,
		        .in_use = pools[best].in_use,
		        .free_slots = pools[best].free_slots,
		        .pending = pending,
		        .npending = npending,
		};
		if (fitting(&in, pools[best].share, ret_index, ret_share)) {
			*ret_pool = best;
			return 1;
		}
		if (pools[best].in_use == 0 && pools[best].budget > 0 &&
		    (idle == SIZE_MAX || pools[best].budget > pools[idle].budget))
			idle = best;
	}
	/* Nothing fits anywhere: the stall rule, on the idle pool with the most. */
	if (idle == SIZE_MAX)
		return 0;
	*ret_pool = idle;
	*ret_index = 0;
	*ret_share = pools[idle].budget;
	return 1;
}

uint64_t mg_retry_share(const struct mg_retry_input *in)
{
	uint64_t page = in->page_size ? in->page_size : 4096, want;

	if (!in->for_memory || in->retried >= in->retries || in->share >= in->budget)
		return 0;
	want = in->share > UINT64_MAX / 2 ? UINT64_MAX : in->share * 2;
	if (in->peak_known && in->peak < UINT64_MAX / 3 && in->peak / 2 * 3 > want)
		want = in->peak / 2 * 3;
	if (want > in->budget)
		want = in->budget;
	else if (want % page && want / page < UINT64_MAX / page)
		want = (want / page + 1) * page;
	if (want > in->budget)
		want = in->budget;
	return want > in->share ? want : 0;
}
