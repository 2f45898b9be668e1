/* memguard report --svg: the histogram's bins as a table, and the picture
 * itself read back as XML: valid SVG, one bar per bin holding its tasks,
 * the failed ones marked, the share and the advice drawn as lines. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_tree.h"
#include "memguard/util.h"
#include "report/svg.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

static void bins_table(void **state)
{
	static const struct {
		uint64_t max, width;
		unsigned n;
	} cases[] = {
	        {0, 1 * MiB, 1},
	        {512 * 1024, 1 * MiB, 1},
	        {1 * MiB, 1 * MiB, 2}, /* on an edge: inside the next bin */
	        {23 * MiB, 1 * MiB, 24},
	        {24 * MiB, 2 * MiB, 13},
	        {45 * MiB, 2 * MiB, 23},
	        {54 * MiB, 5 * MiB, 11},
	        {100 * MiB, 5 * MiB, 21},
	        {4 * GiB, 200 * MiB, 21},
	        {UINT64_MAX, 1000000000000ull * MiB, 18},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		uint64_t width;
		unsigned n;
		mg_svg_bins(cases[i].max, &width, &n);
		if (width != cases[i].width || n != cases[i].n)
			print_error("max %llu: width %llu, %u bins; want %llu, %u\n",
			            (unsigned long long)cases[i].max, (unsigned long long)width, n,
			            (unsigned long long)cases[i].width, cases[i].n);
		assert_int_equal(width, cases[i].width);
		assert_int_equal(n, cases[i].n);
		assert_true(n >= 1 && n <= MG_SVG_BINS_MAX);
		assert_true(cases[i].max / width < n);
	}
}

/* Prints, from the SVG read as XML: the root's tag, the bars (count, and
 * the tasks each says it holds), the failed marks, the lines. */
static const char checker_py[] =
        "import re, sys, xml.etree.ElementTree as ET\n"
        "ns = '{http://www.w3.org/2000/svg}'\n"
        "root = ET.parse(sys.argv[1]).getroot()\n"
        "print(root.tag == ns + 'svg', root.get('width'), root.get('height'))\n"
        "bars = [r for r in root.iter(ns + 'rect') if r.get('class') == 'bar']\n"
        "held = [int(re.search(r': (\\d+) tasks?,', r.find(ns + 'title').text).group(1)) for r in bars]\n"
        "failed = [r for r in root.iter(ns + 'rect') if r.get('class') == 'failed']\n"
        "lines = sorted(l.get('class') for l in root.iter(ns + 'line') if l.get('class'))\n"
        "heights = [float(r.get('height')) for r in bars]\n"
        "print(len(bars), sum(held), ' '.join(map(str, held)), len(failed), ' '.join(lines))\n"
        "print(max(heights) > 0, all(h >= 0 for h in heights))\n";

static char *draw(const struct mg_svg_input *in, int *ret_bins)
{
	struct fake_tree t;
	char path[4200];
	FILE *f;

	ft_new(&t);
	snprintf(path, sizeof(path), "%s/peaks.svg", t.path);
	f = fopen(path, "w");
	assert_non_null(f);
	*ret_bins = mg_svg_histogram(in, f);
	assert_int_equal(fclose(f), 0);
	char *out = ft_check_python(checker_py, path);
	ft_free(&t);
	return out;
}

static void histogram_read_back(void **state)
{
	struct mg_svg_task tasks[30];
	struct mg_svg_input in = {
	        .tasks = tasks, .n = 30, .unknown = 2, .share = 64 * MiB, .advice = 54 * MiB};
	int bins;

	ft_require_python();
	/* 1 .. 30 MiB and 45 MiB, two failed: 7 MiB and 45 MiB. */
	for (unsigned i = 0; i < 29; i++)
		tasks[i] = (struct mg_svg_task){.peak = (i + 1) * MiB, .failed = i == 6};
	tasks[29] = (struct mg_svg_task){.peak = 45 * MiB, .failed = true};
	char *out = draw(&in, &bins);
	print_message("%s", out);
	assert_int_equal(bins, 13); /* up to the 64 MiB share: 5 MiB bins */
	ft_assert_contains(out, "True 760 380\n");
	ft_assert_contains(out, "13 30 4 5 5 5 5 5 0 0 0 1 0 0 0 2 advice share\n");
	ft_assert_contains(out, "True True\n");
	free(out);

	/* A share far above the peaks is not drawn: its note says where it is. */
	in.share = 8 * GiB;
	out = draw(&in, &bins);
	assert_int_equal(bins, 11); /* up to the 54 MiB advice */
	ft_assert_contains(out, "11 30 ");
	ft_assert_contains(out, " advice\n");
	free(out);

	/* No task with a peak, no advice: one empty bar, still a picture. */
	in = (struct mg_svg_input){.unknown = 3};
	out = draw(&in, &bins);
	assert_int_equal(bins, 1);
	ft_assert_contains(out, "1 0 0 0 \n");
	ft_assert_contains(out, "False True\n");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(bins_table),
	        cmocka_unit_test(histogram_read_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
