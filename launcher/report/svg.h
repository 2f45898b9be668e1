/* A picture of a sweep's memory for `memguard report --svg FILE`: a
 * histogram of the tasks' peaks, the failed ones marked in each bar, the
 * share they ran with and the sizing advice drawn as lines across it. What
 * users of seff-array and reportseff ask for when they size the next
 * sweep. Written directly as SVG text; pure. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Bars of the histogram at most, for a wide range. */
#define MG_SVG_BINS_MAX 24

struct mg_svg_task {
	uint64_t peak;
	bool failed;
};

struct mg_svg_input {
	const struct mg_svg_task *tasks; /* those with a known peak */
	size_t n;
	size_t unknown;  /* tasks without a peak: said in the caption */
	uint64_t share;  /* the share of their first attempts, 0: not known */
	uint64_t advice; /* the --mem-per-task the advice gives, 0: none */
};

/* The bins for values up to max: a round width (1, 2 or 5 times a power of
 * ten bytes, at least 1 MiB) and how many of it, at most MG_SVG_BINS_MAX and
 * at least one. Pure. */
void mg_svg_bins(uint64_t max, uint64_t *ret_width, unsigned *ret_n);

/* The histogram as a whole SVG document on out: one <rect class="bar"> per
 * bin (its height the tasks whose peak falls in it), a <rect class="failed">
 * over it for the failed ones, a <line class="share"> and a <line
 * class="advice"> when known, axes and labels. Returns the number of bins,
 * or -EIO when writing failed. */
int mg_svg_histogram(const struct mg_svg_input *in, FILE *out);
