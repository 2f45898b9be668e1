/* Admission by budget and the share of a retry (schedule.h). */
#include "farm/schedule.h"

static bool fits(const struct mg_sched_input *in, uint64_t share)
{
	return in->in_use <= in->budget && share <= in->budget - in->in_use;
}

int mg_sched_next(const struct mg_sched_input *in, size_t *ret_index, uint64_t *ret_share)
{
	if (in->free_slots == 0 || in->npending == 0)
		return 0;
	/* First attempts, then retries: two passes over one list. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < in->npending; i++) {
			const struct mg_sched_task *t = &in->pending[i];
			if ((t->attempt > 1) != (pass == 1) || !fits(in, t->share))
				continue;
			*ret_index = i;
			*ret_share = t->share;
			return 1;
		}
	/* Nothing fits and nothing runs: only a share above the whole budget
	 * (a retry planned on a larger node, say) can be the cause. */
	if (in->in_use == 0 && in->budget > 0) {
		*ret_index = 0;
		*ret_share = in->budget;
		return 1;
	}
	return 0;
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
