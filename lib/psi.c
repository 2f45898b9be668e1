/* Pressure stall information: parsing pressure files and arming PSI triggers. */
#include "memguard/psi.h"

#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "memguard/util.h"

/* "12.34" -> 1234. At most two decimals, as the kernel prints. */
static int parse_avg(const char *s, size_t len, uint32_t *ret)
{
	uint32_t whole = 0, frac = 0, digits = 0;
	size_t i = 0;

	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		whole = whole * 10 + (uint32_t)(s[i] - '0');
		if (whole > 100)
			return -EBADMSG;
	}
	if (i == 0)
		return -EBADMSG;
	if (i < len && s[i] == '.') {
		for (i++; i < len && s[i] >= '0' && s[i] <= '9' && digits < 2; i++, digits++)
			frac = frac * 10 + (uint32_t)(s[i] - '0');
		if (digits == 0)
			return -EBADMSG;
		if (digits == 1)
			frac *= 10;
	}
	if (i != len)
		return -EBADMSG;
	*ret = whole * 100 + frac;
	return *ret > 10000 ? -EBADMSG : 0;
}

static int parse_line(const char *p, const char *end, struct mg_psi_line *ret)
{
	struct mg_psi_line l = {.present = true};
	unsigned seen = 0;

	while (p < end) {
		while (p < end && *p == ' ')
			p++;
		const char *tok = p;
		while (p < end && *p != ' ')
			p++;
		const char *eq = memchr(tok, '=', (size_t)(p - tok));
		if (!eq)
			continue;
		size_t klen = (size_t)(eq - tok), vlen = (size_t)(p - eq - 1);
		const char *v = eq + 1;
		int r = 0;

		if (klen == 5 && memcmp(tok, "avg10", 5) == 0)
			r = parse_avg(v, vlen, &l.avg10), seen |= 1;
		else if (klen == 5 && memcmp(tok, "avg60", 5) == 0)
			r = parse_avg(v, vlen, &l.avg60), seen |= 2;
		else if (klen == 6 && memcmp(tok, "avg300", 6) == 0)
			r = parse_avg(v, vlen, &l.avg300), seen |= 4;
		else if (klen == 5 && memcmp(tok, "total", 5) == 0) {
			char num[24];
			if (vlen == 0 || vlen >= sizeof(num))
				return -EBADMSG;
			memcpy(num, v, vlen);
			num[vlen] = '\0';
			r = mg_parse_u64(num, &l.total_usec) < 0 ? -EBADMSG : 0;
			seen |= 8;
		}
		if (r < 0)
			return r;
	}
	if (seen != 15)
		return -EBADMSG;
	*ret = l;
	return 0;
}

int mg_psi_parse(const char *text, struct mg_psi *ret)
{
	struct mg_psi psi = {0};

	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line);
		struct mg_psi_line *dst = NULL;
		int r;

		if (strncmp(line, "some ", 5) == 0)
			dst = &psi.some;
		else if (strncmp(line, "full ", 5) == 0)
			dst = &psi.full;
		if (dst && (r = parse_line(line + 5, end, dst)) < 0)
			return r;
		line = eol ? eol + 1 : NULL;
	}
	if (!psi.some.present)
		return -EBADMSG;
	*ret = psi;
	return 0;
}

int mg_psi_read(int dirfd, const char *name, struct mg_psi *ret)
{
	char buf[512];
	ssize_t n = mg_read_small_at(dirfd, name, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return mg_psi_parse(buf, ret);
}

bool mg_psi_trigger_valid(uint64_t stall_usec, uint64_t window_usec)
{
	return window_usec >= 500000 && window_usec <= 10000000 && stall_usec > 0 &&
	       stall_usec <= window_usec;
}

int mg_psi_trigger_open(int dirfd, const char *name, enum mg_psi_kind kind, uint64_t stall_usec,
                        uint64_t window_usec)
{
	char spec[64];
	_cleanup_close_ int fd = -1;

	if (!mg_psi_trigger_valid(stall_usec, window_usec))
		return -EINVAL;
	snprintf(spec, sizeof(spec), "%s %" PRIu64 " %" PRIu64, kind == MG_PSI_FULL ? "full" : "some",
	         stall_usec, window_usec);
	fd = openat(dirfd, name, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* The kernel wants the spec and its NUL in one write. */
	if (write(fd, spec, strlen(spec) + 1) < 0)
		return -errno;
	return TAKE_FD(fd);
}

int mg_psi_trigger_wait(int fd, int timeout_ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLPRI};

	for (;;) {
		int n = poll(&pfd, 1, timeout_ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		if (pfd.revents & (POLLERR | POLLNVAL))
			return -ENODEV;
		return (pfd.revents & POLLPRI) ? 1 : 0;
	}
}
