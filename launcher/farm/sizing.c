/* The sizing advice (sizing.h). */
#include "farm/sizing.h"

#include <errno.h>
#include <stdlib.h>

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The nearest-rank percentile of sorted values. */
static uint64_t percentile(const uint64_t *v, size_t n, unsigned pct)
{
	size_t rank = (n * pct + 99) / 100;

	return v[rank ? rank - 1 : 0];
}

uint64_t mg_sizing_share(uint64_t peak, uint64_t budget)
{
	const uint64_t mib = 1u << 20;
	uint64_t want = peak / 100 * (100 + MG_SIZING_HEADROOM_PERCENT);

	want = (want + mib - 1) / mib * mib;
	if (want < mib)
		want = mib;
	if (budget && want > budget)
		want = budget;
	return want;
}

int mg_sizing_advise(uint64_t *peaks, size_t n, uint64_t budget, unsigned max_n, struct mg_sizing *ret)
{
	if (n == 0)
		return -ENODATA;
	qsort(peaks, n, sizeof(*peaks), cmp_u64);
	*ret = (struct mg_sizing){.n = n,
	                          .median = percentile(peaks, n, 50),
	                          .p95 = percentile(peaks, n, 95),
	                          .max = peaks[n - 1]};
	ret->suggest_share = mg_sizing_share(ret->max, budget);
	uint64_t fit = budget && ret->suggest_share ? budget / ret->suggest_share : 0;
	ret->suggest_fit = fit == 0 ? 1 : fit > UINT32_MAX ? UINT32_MAX : (unsigned)fit;
	ret->suggest_n = max_n && ret->suggest_fit > max_n ? max_n : ret->suggest_fit;
	return 0;
}
