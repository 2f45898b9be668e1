/* log.h on stderr: prefixes, %m, mg_log_errno's return, level filtering,
 * one line per message, and the JOURNAL_STREAM check of MG_LOG_AUTO. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake_tree.h"
#include "memguard/log.h"

static int setup_stderr_logging(void **state)
{
	unsetenv("JOURNAL_STREAM");
	mg_log_setup("mgtest", MG_LOG_STDERR, LOG_INFO);
	return 0;
}

static void log_errno_returns_negative_and_prints_m(void **state)
{
	struct ft_capture c;
	char *out;
	int r1, r2, r3;

	ft_capture_begin(&c);
	r1 = mg_log_errno(LOG_ERR, -ENOENT, "open %s: %m", "memory.max");
	r2 = mg_log_errno(LOG_WARNING, EACCES, "write: %m");
	r3 = mg_log_errno(LOG_ERR, -EBUSY, "rmdir: %m");
	out = ft_capture_end(&c);

	assert_int_equal(r1, -ENOENT);
	assert_int_equal(r2, -EACCES); /* a positive errno comes back negative too */
	assert_int_equal(r3, -EBUSY);
	ft_assert_contains(out, "mgtest: error: open memory.max: No such file or directory\n");
	ft_assert_contains(out, "mgtest: warning: write: Permission denied\n");
	ft_assert_contains(out, "mgtest: error: rmdir: Device or resource busy\n");
	free(out);
}

static void log_errno_filtered_still_returns(void **state)
{
	struct ft_capture c;
	char *out;
	int r;

	mg_log_set_level(LOG_ERR);
	ft_capture_begin(&c);
	r = mg_log_errno(LOG_DEBUG, ENOMEM, "dropped: %m");
	out = ft_capture_end(&c);
	mg_log_set_level(LOG_INFO);

	assert_int_equal(r, -ENOMEM);
	assert_string_equal(out, "");
	free(out);
}

static void level_filtering(void **state)
{
	struct ft_capture c;
	char *out;

	mg_log_set_level(LOG_INFO);
	assert_int_equal(mg_log_get_level(), LOG_INFO);
	ft_capture_begin(&c);
	log_debug("debug line %d", 1);
	log_info("info line %d", 2);
	log_notice("notice line");
	log_warn("warn line");
	log_err("err line");
	out = ft_capture_end(&c);

	ft_assert_not_contains(out, "debug line");
	assert_string_equal(out, "mgtest: info line 2\n"
	                         "mgtest: notice line\n"
	                         "mgtest: warning: warn line\n"
	                         "mgtest: error: err line\n");
	free(out);

	mg_log_set_level(LOG_DEBUG);
	ft_capture_begin(&c);
	log_debug("debug line %d", 3);
	out = ft_capture_end(&c);
	mg_log_set_level(LOG_INFO);
	assert_string_equal(out, "mgtest: debug: debug line 3\n");
	free(out);

	mg_log_set_level(LOG_WARNING);
	ft_capture_begin(&c);
	log_info("quiet");
	log_notice("quiet");
	log_warn("loud");
	out = ft_capture_end(&c);
	mg_log_set_level(LOG_INFO);
	assert_string_equal(out, "mgtest: warning: loud\n");
	free(out);
}

static void log_preserves_errno(void **state)
{
	struct ft_capture c;
	int after_info, after_debug;
	char *out;

	ft_capture_begin(&c);
	errno = EAGAIN;
	log_info("with errno: %m");
	after_info = errno;
	log_debug("filtered");
	after_debug = errno;
	out = ft_capture_end(&c);
	assert_int_equal(after_info, EAGAIN);
	assert_int_equal(after_debug, EAGAIN);
	ft_assert_contains(out, "with errno: Resource temporarily unavailable");
	free(out);
}

static void log_fields_prints_message_only(void **state)
{
	static const char *const fields[] = {"MEMGUARD_TASK=job", "MEMGUARD_SHARE=123", NULL};
	struct ft_capture c;
	char *out;

	ft_capture_begin(&c);
	mg_log_fields(LOG_NOTICE, fields, "task %s started", "job");
	mg_log_fields(LOG_NOTICE, NULL, "no fields");
	out = ft_capture_end(&c);
	assert_string_equal(out, "mgtest: task job started\nmgtest: no fields\n");
	free(out);
}

static void long_message_is_truncated(void **state)
{
	struct ft_capture c;
	char *big = malloc(10000);
	char *out;

	assert_non_null(big);
	memset(big, 'q', 9999);
	big[9999] = '\0';
	ft_capture_begin(&c);
	log_info("%s", big);
	out = ft_capture_end(&c);
	free(big);
	/* One line, cut to the 2047-byte message buffer, not lost. */
	ft_assert_contains(out, "mgtest: qqqq");
	assert_true(strlen(out) == strlen("mgtest: ") + 2047 + 1);
	assert_true(out[strlen(out) - 1] == '\n');
	free(out);
}

static void quoted_control_characters_keep_one_line(void **state)
{
	struct ft_capture c;
	char *out;

	ft_capture_begin(&c);
	log_err("invalid task count \"%s\"", "1\n2\r3\0334\x7f"
	                                     "5\t6");
	out = ft_capture_end(&c);
	assert_string_equal(out, "mgtest: error: invalid task count \"1?2?3?4?5\t6\"\n");
	free(out);
}

static void auto_target_checks_journal_stream(void **state)
{
	struct stat st;
	char value[64];

	assert_int_equal(fstat(STDERR_FILENO, &st), 0);

	unsetenv("JOURNAL_STREAM");
	mg_log_setup("mgtest", MG_LOG_AUTO, LOG_INFO);
	assert_false(mg_log_is_journal());

	setenv("JOURNAL_STREAM", "garbage", 1);
	mg_log_setup("mgtest", MG_LOG_AUTO, LOG_INFO);
	assert_false(mg_log_is_journal());

	snprintf(value, sizeof(value), "%llu:%llu", (unsigned long long)st.st_dev,
	         (unsigned long long)st.st_ino + 1);
	setenv("JOURNAL_STREAM", value, 1);
	mg_log_setup("mgtest", MG_LOG_AUTO, LOG_INFO);
	assert_false(mg_log_is_journal()); /* names another stream */

	snprintf(value, sizeof(value), "%llu:%llu", (unsigned long long)st.st_dev,
	         (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", value, 1);
	mg_log_setup("mgtest", MG_LOG_AUTO, LOG_INFO);
	assert_true(mg_log_is_journal()); /* names our stderr */

	/* An explicit target wins over the environment. */
	mg_log_setup("mgtest", MG_LOG_STDERR, LOG_INFO);
	assert_false(mg_log_is_journal());
	unsetenv("JOURNAL_STREAM");
	mg_log_setup("mgtest", MG_LOG_JOURNAL, LOG_NOTICE);
	assert_true(mg_log_is_journal());
	assert_int_equal(mg_log_get_level(), LOG_NOTICE);

	/* Back to stderr for the other tests; nothing was logged to the journal. */
	mg_log_setup("mgtest", MG_LOG_STDERR, LOG_INFO);
	assert_false(mg_log_is_journal());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup(log_errno_returns_negative_and_prints_m, setup_stderr_logging),
	        cmocka_unit_test_setup(log_errno_filtered_still_returns, setup_stderr_logging),
	        cmocka_unit_test_setup(level_filtering, setup_stderr_logging),
	        cmocka_unit_test_setup(log_preserves_errno, setup_stderr_logging),
	        cmocka_unit_test_setup(log_fields_prints_message_only, setup_stderr_logging),
	        cmocka_unit_test_setup(long_message_is_truncated, setup_stderr_logging),
	        cmocka_unit_test_setup(quoted_control_characters_keep_one_line, setup_stderr_logging),
	        cmocka_unit_test_setup(auto_target_checks_journal_stream, setup_stderr_logging),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
