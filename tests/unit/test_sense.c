/* memguardd's signal sources (daemon/guard/sense.c) with and without PSI, on fake
 * /proc trees: one interface, whether the kernel has PSI or not. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "fake_tree.h"
#include "guard/sense.h"

/* What a first read of /proc/pressure/memory says about PSI: absent with
 * psi=0 (ENOENT), switched off where the files exist (EOPNOTSUPP, some
 * kernels with CONFIG_PSI_DEFAULT_DISABLED), anything else an error. */
static void psi_state_table(void **state)
{
	static const struct {
		int read, want;
	} cases[] = {
	        {0, 1},       {-ENOENT, 0}, {-EOPNOTSUPP, 0}, {-EACCES, -EACCES}, {-EBADMSG, -EBADMSG},
	        {-EIO, -EIO},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(mg_sense_psi_state(cases[i].read), cases[i].want);
}

static int noop(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	return 0;
}

/* psi=0: no file. The same calls work: no pressure, nothing armed, a note. */
static void without_psi(void **state)
{
	struct fake_tree *t = *state;
	struct mg_sense s;
	struct mg_psi psi;
	sd_event *e = NULL;

	ft_write(t->fd, "meminfo", "MemTotal: 1 kB\n");
	assert_int_equal(mg_sense_open(&s, t->fd), 0);
	assert_false(s.psi);
	assert_int_equal(s.psi_error, -ENOENT);
	assert_int_equal(sd_event_new(&e), 0);
	assert_int_equal(mg_sense_arm(&s, e, 150000, 1000000, noop, NULL), 0);
	assert_int_equal(s.trigger_fd, -1);
	memset(&psi, 0xa5, sizeof(psi));
	assert_int_equal(mg_sense_pressure(&s, &psi), 0);
	assert_false(psi.some.present);
	assert_int_equal(psi.full.avg10, 0);
	assert_non_null(strstr(mg_sense_psi_note(&s), "psi=1"));
	mg_sense_close(&s);
	sd_event_unref(e);
}

/* With PSI: the averages are read, and no note. */
static void with_psi(void **state)
{
	struct fake_tree *t = *state;
	struct mg_sense s;
	struct mg_psi psi;

	ft_write(t->fd, "pressure/memory",
	         "some avg10=1.50 avg60=0.00 avg300=0.00 total=10\nfull avg10=0.25 avg60=0.00 avg300=0.00 "
	         "total=5\n");
	assert_int_equal(mg_sense_open(&s, t->fd), 0);
	assert_true(s.psi);
	assert_int_equal(mg_sense_pressure(&s, &psi), 0);
	assert_int_equal(psi.some.avg10, 150);
	assert_int_equal(psi.full.avg10, 25);
	assert_string_equal(mg_sense_psi_note(&s), "");
	/* A garbled file is an error, not "no PSI". */
	ft_write(t->fd, "pressure/memory", "garbage\n");
	assert_int_equal(mg_sense_open(&s, t->fd), -EBADMSG);
	mg_sense_close(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(psi_state_table),
	        cmocka_unit_test_setup_teardown(without_psi, ft_setup, ft_teardown),
	        cmocka_unit_test_setup_teardown(with_psi, ft_setup, ft_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
