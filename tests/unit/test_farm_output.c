/* The tasks' output with GNU parallel's inputs (farm/output.c): --tag's
 * lines, each task's output whole and in order (-k), a retry's output
 * instead of the failed attempt's, tasks skipped, --halt now, and
 * --line-buffer's whole lines from tasks writing at once. The "tasks" are
 * this test writing into the pipes' ends; what memguard prints goes to
 * memfds. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "farm/output.h"
#include "memguard/util.h"

/* What was written to a memfd so far, from its start. */
static char *contents(int fd)
{
	off_t len = lseek(fd, 0, SEEK_END);
	char *s = calloc(1, (size_t)len + 1);

	assert_non_null(s);
	assert_int_equal(pread(fd, s, (size_t)len, 0), len);
	return s;
}

static void assert_contents(int fd, const char *want)
{
	char *got = contents(fd);
	if (strcmp(got, want) != 0)
		print_error("printed [%s], want [%s]\n", got, want);
	assert_string_equal(got, want);
	free(got);
}

static void tagged_table(void **state)
{
	static const struct {
		const char *prefix, *data;
		bool start, end;
		const char *want;
	} cases[] = {
	        {NULL, "a\nb", true, false, "a\nb"},
	        {"t", "a\nb\n", true, true, "t\ta\nt\tb\n"},
	        {"t", "a\nb", true, false, "t\ta\nt\tb"},
	        {"t", "b\nc", false, false, "b\nt\tc"},
	        {"t", "", true, true, ""},
	        {"t", "\n", true, true, "t\t\n"},
	        {"x y", "\n\n", false, true, "\nx y\t\n"},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		int fd = memfd_create("out", MFD_CLOEXEC);
		bool start = cases[i].start;
		assert_int_equal(
		        mg_output_tagged(fd, cases[i].prefix, cases[i].data, strlen(cases[i].data), &start),
		        0);
		assert_contents(fd, cases[i].want);
		assert_int_equal(start, cases[i].end);
		close(fd);
	}

	/* Lines longer than the buffer, and many short ones. */
	size_t big = 200000;
	char *data = malloc(big + 1), *want = malloc(2 * big + 100);
	memset(data, 'z', big);
	data[big / 2] = '\n';
	data[big] = '\0';
	snprintf(want, 2 * big + 100, "T\t%.*s\nT\t%s", (int)(big / 2), data, data + big / 2 + 1);
	int fd = memfd_create("out", MFD_CLOEXEC);
	bool start = true;
	assert_int_equal(mg_output_tagged(fd, "T", data, big, &start), 0);
	assert_contents(fd, want);
	close(fd);
	free(data);
	free(want);
}

/* A run's output: o's stdout and stderr are memfds. */
static void setup(struct mg_output *o, enum mg_output_mode mode, bool keep_order, const char *const *tags,
                  size_t n)
{
	assert_int_equal(mg_output_init(o, mode, keep_order, tags, n), 0);
	o->fd[0] = memfd_create("stdout", MFD_CLOEXEC);
	o->fd[1] = memfd_create("stderr", MFD_CLOEXEC);
}

/* Task index starts and writes out and err, then its pipes close. */
static void run(struct mg_output *o, size_t index, const char *out, const char *err)
{
	int w[2] = {-1, -1};

	assert_int_equal(mg_output_start(o, index, &w[0], &w[1]), 0);
	assert_true(w[0] >= 0 && w[1] >= 0);
	assert_int_equal(write(w[0], out, strlen(out)), (ssize_t)strlen(out));
	assert_int_equal(write(w[1], err, strlen(err)), (ssize_t)strlen(err));
	close(w[0]);
	close(w[1]);
}

static void done(struct mg_output *o)
{
	int fds[2] = {o->fd[0], o->fd[1]};

	mg_output_done(o);
	close(fds[0]);
	close(fds[1]);
}

static void grouped_as_they_end(void **state)
{
	struct mg_output o;

	setup(&o, MG_OUTPUT_GROUP, false, NULL, 3);
	run(&o, 0, "a1\na2\n", "ae\n");
	run(&o, 1, "b1\n", "");
	run(&o, 2, "c1\nc2", "ce");
	mg_output_end(&o, 2, true);
	mg_output_end(&o, 0, true);
	assert_contents(o.fd[0], "c1\nc2a1\na2\n");
	mg_output_end(&o, 1, true);
	assert_contents(o.fd[0], "c1\nc2a1\na2\nb1\n");
	assert_contents(o.fd[1], "ceae\n");
	done(&o);
}

static void keep_order(void **state)
{
	static const char *const tags[] = {"x", "y y", "z", "w"};
	struct mg_output o;

	setup(&o, MG_OUTPUT_GROUP, true, tags, 4);
	mg_output_skip(&o, 2); /* a resume has it done */
	run(&o, 3, "3\n", "");
	run(&o, 1, "1\n", "e1\n");
	mg_output_end(&o, 3, true);
	mg_output_end(&o, 1, true);
	assert_contents(o.fd[0], ""); /* all wait for task 0 */
	/* Task 0's first attempt fails for memory: its retry's output counts. */
	run(&o, 0, "first attempt\n", "");
	mg_output_end(&o, 0, false);
	assert_contents(o.fd[0], "");
	run(&o, 0, "0\n", "");
	mg_output_end(&o, 0, true);
	assert_contents(o.fd[0], "x\t0\ny y\t1\nw\t3\n");
	assert_contents(o.fd[1], "y y\te1\n");
	assert_int_equal(o.next, 4);
	done(&o);
}

static void keep_order_past_the_end(void **state)
{
	struct mg_output o;

	/* Task 0 never ends (the run was stopped): the rest comes at the end. */
	setup(&o, MG_OUTPUT_GROUP, true, NULL, 3);
	run(&o, 2, "2\n", "");
	run(&o, 1, "1\n", "");
	mg_output_end(&o, 2, true);
	mg_output_end(&o, 1, true);
	assert_contents(o.fd[0], "");
	int fd = dup(o.fd[0]), err = dup(o.fd[1]);
	mg_output_done(&o);
	assert_contents(fd, "1\n2\n");
	close(fd);
	close(err);
	close(o.fd[0]);
	close(o.fd[1]);
}

static void halt_now_drops_the_rest(void **state)
{
	struct mg_output o;

	setup(&o, MG_OUTPUT_GROUP, true, NULL, 3);
	run(&o, 0, "0\n", "");
	run(&o, 1, "1\n", "");
	run(&o, 2, "2\n", "");
	mg_output_end(&o, 0, true);
	mg_output_end(&o, 2, true);
	mg_output_halt(&o);
	mg_output_end(&o, 1, true);
	int fd = dup(o.fd[0]), err = dup(o.fd[1]);
	mg_output_done(&o);
	assert_contents(fd, "0\n");
	close(fd);
	close(err);
	close(o.fd[0]);
	close(o.fd[1]);
}

static void line_buffer_keeps_lines_whole(void **state)
{
	static const char *const tags[] = {"a", "b"};
	struct mg_output o;
	sd_event *e;
	int a[2] = {-1, -1}, b[2] = {-1, -1};

	assert_int_equal(sd_event_new(&e), 0);
	setup(&o, MG_OUTPUT_LINE, false, tags, 2);
	mg_output_attach(&o, e);
	assert_int_equal(mg_output_start(&o, 0, &a[0], &a[1]), 0);
	assert_int_equal(mg_output_start(&o, 1, &b[0], &b[1]), 0);
	assert_int_equal(write(a[0], "a1\na", 4), 4);
	while (sd_event_run(e, 0) > 0)
		;
	assert_int_equal(write(b[0], "b1\nb", 4), 4);
	while (sd_event_run(e, 0) > 0)
		;
	assert_int_equal(write(a[0], "2\n", 2), 2);
	while (sd_event_run(e, 0) > 0)
		;
	/* Whole lines as they came; the halves waited for their ends. */
	assert_contents(o.fd[0], "a\ta1\nb\tb1\na\ta2\n");
	for (int i = 0; i < 2; i++)
		close(a[i]), close(b[i]);
	mg_output_end(&o, 1, true); /* its last line, without a newline */
	mg_output_end(&o, 0, true);
	assert_contents(o.fd[0], "a\ta1\nb\tb1\na\ta2\nb\tb");
	mg_output_attach(&o, NULL);
	done(&o);
	sd_event_unref(e);
}

static void pass_through(void **state)
{
	struct mg_output o;
	int out = 7, err = 8;

	/* --ungroup: the task gets the --results files, or memguard's own. */
	assert_int_equal(mg_output_init(&o, MG_OUTPUT_PASS, false, NULL, 2), 0);
	assert_int_equal(mg_output_start(&o, 0, &out, &err), 0);
	assert_int_equal(out, 7);
	assert_int_equal(err, 8);
	mg_output_end(&o, 0, true);
	mg_output_done(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(tagged_table),
	        cmocka_unit_test(grouped_as_they_end),
	        cmocka_unit_test(keep_order),
	        cmocka_unit_test(keep_order_past_the_end),
	        cmocka_unit_test(halt_now_drops_the_rest),
	        cmocka_unit_test(line_buffer_keeps_lines_whole),
	        cmocka_unit_test(pass_through),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
