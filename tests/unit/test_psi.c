/* Pressure stall information: parsing, reading, and trigger arguments. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include "fake_tree.h"
#include "memguard/psi.h"
#include "memguard/util.h"

static const char real_pressure[] = "some avg10=12.34 avg60=5.67 avg300=1.00 total=123456789\n"
                                    "full avg10=3.21 avg60=0.50 avg300=0.05 total=987654\n";

static void parse_real_text(void **state)
{
	struct mg_psi p;

	memset(&p, 0xaa, sizeof(p));
	assert_int_equal(mg_psi_parse(real_pressure, &p), 0);
	assert_true(p.some.present);
	assert_int_equal(p.some.avg10, 1234);
	assert_int_equal(p.some.avg60, 567);
	assert_int_equal(p.some.avg300, 100);
	assert_true(p.some.total_usec == 123456789);
	assert_true(p.full.present);
	assert_int_equal(p.full.avg10, 321);
	assert_int_equal(p.full.avg60, 50);
	assert_int_equal(p.full.avg300, 5);
	assert_true(p.full.total_usec == 987654);
}

static void parse_idle_and_extremes(void **state)
{
	struct mg_psi p;

	assert_int_equal(mg_psi_parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	                              "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
	                              &p),
	                 0);
	assert_true(p.some.present && p.full.present);
	assert_int_equal(p.some.avg10, 0);
	assert_true(p.full.total_usec == 0);

	/* 100.00 is the top; one decimal and no decimals are read too. */
	assert_int_equal(mg_psi_parse("some avg10=100.00 avg60=99.9 avg300=7 total=18446744073709551615", &p),
	                 0);
	assert_int_equal(p.some.avg10, 10000);
	assert_int_equal(p.some.avg60, 9990);
	assert_int_equal(p.some.avg300, 700);
	assert_true(p.some.total_usec == UINT64_MAX);
}

static void parse_without_full_line(void **state)
{
	struct mg_psi p;

	memset(&p, 0xaa, sizeof(p));
	/* /proc/pressure/cpu on older kernels, or any file without "full". */
	assert_int_equal(mg_psi_parse("some avg10=1.50 avg60=0.25 avg300=0.00 total=42\n", &p), 0);
	assert_true(p.some.present);
	assert_int_equal(p.some.avg10, 150);
	assert_int_equal(p.some.avg60, 25);
	assert_false(p.full.present);
	assert_int_equal(p.full.avg10, 0);
	assert_true(p.full.total_usec == 0);
}

static void parse_tolerates_unknown(void **state)
{
	struct mg_psi p;

	/* Unknown keys, in any position, and stray tokens. */
	assert_int_equal(
	        mg_psi_parse("some avg10=1.00 future=9 avg60=2.00 avg300=3.00 total=4 avg600=5.00 x\n", &p),
	        0);
	assert_int_equal(p.some.avg10, 100);
	assert_int_equal(p.some.avg60, 200);
	assert_int_equal(p.some.avg300, 300);
	assert_true(p.some.total_usec == 4);

	/* Unknown lines, blank lines, extra spaces. */
	assert_int_equal(mg_psi_parse("\n"
	                              "weird line here\n"
	                              "fullish avg10=x\n"
	                              "some  avg10=1.00   avg60=2.00 avg300=3.00 total=4  \n"
	                              "\n"
	                              "future avg10=1.00\n",
	                              &p),
	                 0);
	assert_true(p.some.present);
	assert_false(p.full.present);
	assert_true(p.some.total_usec == 4);

	/* "full" before "some" is fine. */
	assert_int_equal(mg_psi_parse("full avg10=0.01 avg60=0.00 avg300=0.00 total=1\n"
	                              "some avg10=0.02 avg60=0.00 avg300=0.00 total=2\n",
	                              &p),
	                 0);
	assert_int_equal(p.full.avg10, 1);
	assert_int_equal(p.some.avg10, 2);
}

static void parse_rejects(void **state)
{
	static const char *const bad[] = {
	        "",
	        "\n",
	        "some",
	        "some\n",
	        "some ",
	        "some avg10=",
	        "some avg10=0.00 avg60=0.0",
	        "some avg10=0.00 avg60=0.00 avg300=0.00",           /* no total */
	        "some avg60=0.00 avg300=0.00 total=0",              /* no avg10 */
	        "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", /* no some line */
	        "garbage\nmore garbage\n",
	        "Some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
	        " some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
	        /* Averages above 100%, or malformed. */
	        "some avg10=100.01 avg60=0.00 avg300=0.00 total=0",
	        "some avg10=101.00 avg60=0.00 avg300=0.00 total=0",
	        "some avg10=1000 avg60=0.00 avg300=0.00 total=0",
	        "some avg10=99999999999.00 avg60=0.00 avg300=0.00 total=0",
	        "some avg10=1.234 avg60=0.00 avg300=0.00 total=0",
	        "some avg10=.50 avg60=0.00 avg300=0.00 total=0",
	        "some avg10=1. avg60=0.00 avg300=0.00 total=0",
	        "some avg10=-1.00 avg60=0.00 avg300=0.00 total=0",
	        "some avg10=1,00 avg60=0.00 avg300=0.00 total=0",
	        "some avg10=abc avg60=0.00 avg300=0.00 total=0",
	        "some avg10=1.00x avg60=0.00 avg300=0.00 total=0",
	        /* Bad totals. */
	        "some avg10=0.00 avg60=0.00 avg300=0.00 total=abc",
	        "some avg10=0.00 avg60=0.00 avg300=0.00 total=",
	        "some avg10=0.00 avg60=0.00 avg300=0.00 total=-1",
	        "some avg10=0.00 avg60=0.00 avg300=0.00 total=12x",
	        "some avg10=0.00 avg60=0.00 avg300=0.00 total=18446744073709551616",
	        "some avg10=0.00 avg60=0.00 avg300=0.00 total=123456789012345678901234567890",
	        "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\r\n",
	        /* A good some line does not excuse a broken full line. */
	        "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00\n",
	        "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=200.00 avg60=0.00 avg300=0.00 "
	        "total=0\n",
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(bad); i++) {
		struct mg_psi p, before;

		memset(&p, 0x5a, sizeof(p));
		before = p;
		int r = mg_psi_parse(bad[i], &p);
		if (r != -EBADMSG)
			print_error("mg_psi_parse(\"%s\") = %d\n", bad[i], r);
		assert_int_equal(r, -EBADMSG);
		assert_memory_equal(&p, &before, sizeof(p)); /* untouched on failure */
	}
}

static void read_through_fake_dir(void **state)
{
	struct fake_tree *t = *state;
	struct mg_psi p;

	ft_write(t->fd, "memory.pressure", real_pressure);
	ft_write(t->fd, "pressure/memory",
	         "some avg10=0.10 avg60=0.20 avg300=0.30 total=7\n"
	         "full avg10=0.00 avg60=0.00 avg300=0.00 total=3\n");
	assert_int_equal(mg_psi_read(t->fd, "memory.pressure", &p), 0);
	assert_int_equal(p.some.avg10, 1234);
	assert_true(p.full.total_usec == 987654);
	assert_int_equal(mg_psi_read(t->fd, "pressure/memory", &p), 0);
	assert_int_equal(p.some.avg300, 30);
	assert_true(p.full.total_usec == 3);

	assert_int_equal(mg_psi_read(t->fd, "pressure/cpu", &p), -ENOENT);
	ft_write(t->fd, "broken", "some avg10=");
	assert_int_equal(mg_psi_read(t->fd, "broken", &p), -EBADMSG);
}

struct trigger_args {
	uint64_t stall, window;
};

static void trigger_open_validates_before_opening(void **state)
{
	static const struct trigger_args bad[] = {
	        {100000, 499999},                    /* window below 500 ms */
	        {100000, 0},                         /* no window */
	        {100000, 10000001},                  /* window above 10 s */
	        {100000, UINT64_MAX},  {0, 1000000}, /* no stall */
	        {1000001, 1000000},                  /* stall longer than the window */
	        {UINT64_MAX, 1000000},
	};
	struct fake_tree *t = *state;

	ft_write(t->fd, "memory.pressure", "");
	for (size_t i = 0; i < MG_ARRAY_SIZE(bad); i++) {
		/* -EINVAL, not -ENOENT / -EBADF: nothing is opened for bad arguments. */
		assert_int_equal(
		        mg_psi_trigger_open(t->fd, "missing", MG_PSI_SOME, bad[i].stall, bad[i].window),
		        -EINVAL);
		assert_int_equal(
		        mg_psi_trigger_open(-1, "memory.pressure", MG_PSI_FULL, bad[i].stall, bad[i].window),
		        -EINVAL);
		assert_int_equal(mg_psi_trigger_open(t->fd, "memory.pressure", MG_PSI_SOME, bad[i].stall,
		                                     bad[i].window),
		                 -EINVAL);
	}
	/* Nothing was written to the file by the rejected calls. */
	char *content = ft_read(t->fd, "memory.pressure", NULL);
	assert_string_equal(content, "");
	free(content);

	/* Good arguments get as far as the open. */
	assert_int_equal(mg_psi_trigger_open(t->fd, "missing", MG_PSI_SOME, 100000, 1000000), -ENOENT);
}

static void check_trigger_written(int dirfd, enum mg_psi_kind kind, uint64_t stall, uint64_t window,
                                  const char *expect)
{
	size_t len;
	char *content;
	int fd, flags;

	ft_write(dirfd, "memory.pressure", "");
	fd = mg_psi_trigger_open(dirfd, "memory.pressure", kind, stall, window);
	assert_true(fd >= 0);
	flags = fcntl(fd, F_GETFL);
	assert_true(flags >= 0);
	assert_int_equal(flags & O_ACCMODE, O_RDWR);
	assert_true(flags & O_NONBLOCK);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);

	/* The spec and its terminating NUL in one write, as the kernel wants. */
	content = ft_read(dirfd, "memory.pressure", &len);
	assert_int_equal(len, strlen(expect) + 1);
	assert_memory_equal(content, expect, strlen(expect) + 1);
	free(content);
}

/* A documented fact of this fake: a regular file accepts the trigger write
 * that a real pressure file would validate, so the open/write path succeeds
 * and returns an fd without touching the kernel's PSI. */
static void trigger_open_on_regular_file(void **state)
{
	struct fake_tree *t = *state;

	check_trigger_written(t->fd, MG_PSI_SOME, 150000, 1000000, "some 150000 1000000");
	check_trigger_written(t->fd, MG_PSI_FULL, 100000, 2000000, "full 100000 2000000");
	/* The boundaries are inclusive. */
	check_trigger_written(t->fd, MG_PSI_SOME, 500000, 500000, "some 500000 500000");
	check_trigger_written(t->fd, MG_PSI_SOME, 1, 10000000, "some 1 10000000");
	check_trigger_written(t->fd, MG_PSI_FULL, 10000000, 10000000, "full 10000000 10000000");
}

static void trigger_wait_timeouts(void **state)
{
	int p[2], efd;
	uint64_t start;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(mg_psi_trigger_wait(p[0], 0), 0);
	start = mg_now_usec();
	assert_int_equal(mg_psi_trigger_wait(p[0], 50), 0);
	assert_true(mg_now_usec() - start >= 40000);

	/* Readable data is not a trigger event: only POLLPRI is. */
	assert_int_equal(write(p[1], "x", 1), 1);
	assert_int_equal(mg_psi_trigger_wait(p[0], 0), 0);
	close(p[0]);
	close(p[1]);

	efd = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);
	assert_true(efd >= 0);
	assert_int_equal(mg_psi_trigger_wait(efd, 0), 0);
	close(efd);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	assert_true(efd >= 0);
	assert_int_equal(mg_psi_trigger_wait(efd, 0), 0);
	close(efd);
}

static void trigger_wait_errors(void **state)
{
	int p[2];

	/* POLLERR, as when the cgroup of a trigger goes away: the write end of a
	 * pipe whose reader is gone reports it. */
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	close(p[0]);
	assert_int_equal(mg_psi_trigger_wait(p[1], 0), -ENODEV);
	assert_int_equal(mg_psi_trigger_wait(p[1], 1000), -ENODEV); /* at once, not after the timeout */
	close(p[1]);

	/* POLLNVAL: an fd that is not open. */
	assert_int_equal(mg_psi_trigger_wait(p[1], 0), -ENODEV);
}

/* POLLPRI without the kernel's PSI: TCP urgent data on loopback. */
static void trigger_wait_fires_on_pollpri(void **state)
{
	struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(addr);
	int lfd, cfd, sfd;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(lfd, 1) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&addr, &alen) < 0) {
		if (lfd >= 0)
			close(lfd);
		fail_msg("no loopback TCP socket for the test: %s", strerror(errno));
	}
	cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(cfd >= 0);
	assert_int_equal(connect(cfd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	sfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	assert_true(sfd >= 0);

	assert_int_equal(mg_psi_trigger_wait(sfd, 0), 0);
	assert_int_equal(send(cfd, "!", 1, MSG_OOB), 1);
	assert_int_equal(mg_psi_trigger_wait(sfd, 2000), 1);
	close(sfd);
	close(cfd);
	close(lfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(parse_real_text),
	        cmocka_unit_test(parse_idle_and_extremes),
	        cmocka_unit_test(parse_without_full_line),
	        cmocka_unit_test(parse_tolerates_unknown),
	        cmocka_unit_test(parse_rejects),
	        cmocka_unit_test_setup_teardown(read_through_fake_dir, ft_setup, ft_teardown),
	        cmocka_unit_test_setup_teardown(trigger_open_validates_before_opening, ft_setup, ft_teardown),
	        cmocka_unit_test_setup_teardown(trigger_open_on_regular_file, ft_setup, ft_teardown),
	        cmocka_unit_test(trigger_wait_timeouts),
	        cmocka_unit_test(trigger_wait_errors),
	        cmocka_unit_test(trigger_wait_fires_on_pollpri),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
