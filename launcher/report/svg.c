/* The sweep's memory as an SVG histogram (svg.h). */
#include "report/svg.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "memguard/units.h"

/* The drawing: the plot's box inside the picture. */
#define WIDTH 760
#define HEIGHT 380
#define LEFT 60
#define RIGHT 24
#define TOP 56
#define BOTTOM 56
#define PLOT_W (WIDTH - LEFT - RIGHT)
#define PLOT_H (HEIGHT - TOP - BOTTOM)

void mg_svg_bins(uint64_t max, uint64_t *ret_width, unsigned *ret_n)
{
	static const uint64_t steps[] = {1, 2, 5};
	uint64_t width = 0, n = 1;

	/* The smallest round width whose bins, as many as it takes for max to
	 * fall inside the last (not on its edge), are few enough. */
	for (uint64_t decade = 1u << 20; !width; decade *= 10)
		for (size_t i = 0; i < 3 && !width; i++) {
			n = max / (steps[i] * decade) + 1;
			if (n <= MG_SVG_BINS_MAX)
				width = steps[i] * decade;
		}
	*ret_width = width;
	*ret_n = (unsigned)n;
}

static double x_of(uint64_t bytes, uint64_t span)
{
	return LEFT + (double)PLOT_W * (double)bytes / (double)span;
}

/* A vertical line across the plot at bytes, with its label at the top. */
static void marker(FILE *out, const char *class, const char *color, const char *dash, uint64_t bytes,
                   uint64_t span, const char *label, int row)
{
	char size[MG_SIZE_STRLEN];
	double x = x_of(bytes, span);

	fprintf(out,
	        "<line class=\"%s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" "
	        "stroke-width=\"2\"%s%s%s/>\n",
	        class, x, TOP - 4, x, TOP + PLOT_H, color, dash ? " stroke-dasharray=\"" : "",
	        dash ? dash : "", dash ? "\"" : "");
	fprintf(out, "<text x=\"%.1f\" y=\"%d\" fill=\"%s\" text-anchor=\"%s\">%s %s</text>\n", x,
	        TOP - 8 - 13 * row, color, x > LEFT + PLOT_W * 0.7 ? "end" : "start", label,
	        mg_size_format(bytes, size));
}

int mg_svg_histogram(const struct mg_svg_input *in, FILE *out)
{
	uint64_t max = in->advice, width;
	size_t failed = 0, top = 1;
	unsigned nbins;
	char a[MG_SIZE_STRLEN], b[MG_SIZE_STRLEN];

	for (size_t i = 0; i < in->n; i++) {
		if (in->tasks[i].peak > max)
			max = in->tasks[i].peak;
		failed += in->tasks[i].failed;
	}
	/* The share when it is near the peaks; one far above them (the
	 * budget split among few tasks) would squeeze them into one bar. */
	bool share_shown = in->share && in->share / 2 <= max;
	if (share_shown && in->share > max)
		max = in->share;
	mg_svg_bins(max, &width, &nbins);
	size_t *all = calloc(nbins, sizeof(*all)), *bad = calloc(nbins, sizeof(*bad));
	if (!all || !bad) {
		free(all);
		free(bad);
		return -ENOMEM;
	}
	for (size_t i = 0; i < in->n; i++) {
		uint64_t bin = in->tasks[i].peak / width;
		if (bin >= nbins)
			bin = nbins - 1;
		all[bin]++;
		bad[bin] += in->tasks[i].failed;
		if (all[bin] > top)
			top = all[bin];
	}
	uint64_t span = width * nbins;

	fprintf(out,
	        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
	        "font-family=\"sans-serif\" font-size=\"12\">\n",
	        WIDTH, HEIGHT, WIDTH, HEIGHT);
	fprintf(out, "<title>memguard report: the peaks of %zu tasks, %zu failed</title>\n", in->n, failed);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", WIDTH, HEIGHT);
	fprintf(out,
	        "<text x=\"%d\" y=\"18\" font-size=\"14\" font-weight=\"bold\">The peaks of %zu task%s, %zu "
	        "failed (red)</text>\n",
	        LEFT, in->n, in->n == 1 ? "" : "s", failed);
	if (in->unknown)
		fprintf(out, "<text x=\"%d\" y=\"%d\" fill=\"#555\">%zu more without a known peak</text>\n",
		        LEFT, HEIGHT - 8, in->unknown);
	/* The bars: all the tasks of a bin, the failed ones over them in red. */
	fputs("<g class=\"bins\">\n", out);
	for (unsigned k = 0; k < nbins; k++) {
		double x = LEFT + (double)PLOT_W * k / nbins + 1, w = (double)PLOT_W / nbins - 2;
		double h = (double)PLOT_H * (double)all[k] / (double)top;
		double hf = (double)PLOT_H * (double)bad[k] / (double)top;
		fprintf(out,
		        "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		        "fill=\"#4c78a8\">"
		        "<title>%s to %s: %zu task%s, %zu failed</title></rect>\n",
		        x, TOP + PLOT_H - h, w, h, mg_size_format(width * k, a),
		        mg_size_format(width * (k + 1), b), all[k], all[k] == 1 ? "" : "s", bad[k]);
		if (bad[k])
			fprintf(out,
			        "<rect class=\"failed\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			        "fill=\"#e45756\"/>\n",
			        x, TOP + PLOT_H - hf, w, hf);
	}
	fputs("</g>\n", out);
	/* The axes: memory across, tasks up. */
	fprintf(out, "<g class=\"axes\" stroke=\"#333\">\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n",
	        LEFT, TOP + PLOT_H, LEFT + PLOT_W, TOP + PLOT_H);
	fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n</g>\n", LEFT, TOP, LEFT,
	        TOP + PLOT_H);
	unsigned every = nbins > 12 ? 4 : nbins > 6 ? 2 : 1;
	for (unsigned k = 0; k <= nbins; k += every)
		fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
		        LEFT + (double)PLOT_W * k / nbins, TOP + PLOT_H + 16, mg_size_format(width * k, a));
	fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">peak memory</text>\n", LEFT + PLOT_W / 2,
	        TOP + PLOT_H + 34);
	fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%zu</text>\n", LEFT - 6, TOP + 4, top);
	fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>\n", LEFT - 6, TOP + PLOT_H);
	fprintf(out,
	        "<text x=\"14\" y=\"%d\" transform=\"rotate(-90 14 %d)\" "
	        "text-anchor=\"middle\">tasks</text>\n",
	        TOP + PLOT_H / 2, TOP + PLOT_H / 2);
	if (share_shown)
		marker(out, "share", "#555", "6 4", in->share, span, "share", 0);
	else if (in->share)
		fprintf(out,
		        "<text class=\"share\" x=\"%d\" y=\"%d\" fill=\"#555\" text-anchor=\"end\">share %s, "
		        "far to the right &#8594;</text>\n",
		        LEFT + PLOT_W, TOP - 8, mg_size_format(in->share, a));
	if (in->advice)
		marker(out, "advice", "#2e7d32", NULL, in->advice, span, "advice: --mem-per-task",
		       in->share ? 1 : 0);
	fputs("</svg>\n", out);
	free(all);
	free(bad);
	return ferror(out) ? -EIO : (int)nbins;
}
