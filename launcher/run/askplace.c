/* Asks memguardd's placement service for a cgroup: the launcher's client. */
#include "run/askplace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "memguard/units.h"
#include "memguard/util.h"

/* Copies the next space-separated word of *p into buf; false when none fits. */
static bool next_word(const char **p, char *buf, size_t size)
{
	size_t len;

	*p += strspn(*p, " ");
	len = strcspn(*p, " \n");
	if (len == 0 || len >= size)
		return false;
	memcpy(buf, *p, len);
	buf[len] = '\0';
	*p += len;
	return true;
}

int mg_place_parse_reply(const char *line, struct mg_place_answer *ret, char *why, size_t whysize)
{
	char word[16], limit[32];
	const char *p = line;

	*ret = (struct mg_place_answer){.limit = MG_SIZE_UNLIMITED};
	if (strncmp(line, "err ", 4) == 0) {
		snprintf(why, whysize, "%.*s", (int)strcspn(line + 4, "\n"), line + 4);
		return -EPERM;
	}
	if (!next_word(&p, word, sizeof(word)) || strcmp(word, "ok") != 0 ||
	    !next_word(&p, word, sizeof(word)))
		goto bad;
	if (strcmp(word, "job") == 0) {
		ret->kind = MG_PLACE_ANSWER_JOB;
		if (!next_word(&p, ret->cgroup, sizeof(ret->cgroup)))
			goto bad;
	} else if (strcmp(word, "run") == 0) {
		ret->kind = MG_PLACE_ANSWER_RUN;
		if (!next_word(&p, ret->cgroup, sizeof(ret->cgroup)) ||
		    !next_word(&p, limit, sizeof(limit)) ||
		    !next_word(&p, ret->limit_from, sizeof(ret->limit_from)))
			goto bad;
		if (strcmp(limit, "max") != 0 && (mg_parse_u64(limit, &ret->limit) < 0 || ret->limit == 0))
			goto bad;
		if (strcmp(ret->limit_from, "-") == 0)
			ret->limit_from[0] = '\0';
	} else {
		goto bad;
	}
	p += strspn(p, " ");
	if (*p && *p != '\n')
		goto bad;
	/* The daemon names cgroups below the mount: nothing absolute, nothing upward. */
	if (ret->cgroup[0] == '/' || strstr(ret->cgroup, ".."))
		goto bad;
	return 0;
bad:
	snprintf(why, whysize, "memguardd's placement service gave an unexpected reply");
	return -EBADMSG;
}

/* One request, one reply line: connects, sends, waits at most timeout_ms.
 * Returns the reply's length, or -errno with a one-line reason in why. */
static ssize_t exchange(const char *socket_path, const char *request, int timeout_ms, char *line,
                        size_t linesize, char *why, size_t whysize)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t len = strlen(request);
	_cleanup_close_ int fd = -1;
	ssize_t n;

	if (strlen(socket_path) >= sizeof(sa.sun_path)) {
		snprintf(why, whysize, "placement socket path %s is too long", socket_path);
		return -ENAMETOOLONG;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;
		snprintf(why, whysize, "memguardd's placement service at %s: %s", socket_path, strerror(-r));
		return r;
	}
	if (send(fd, request, len, MSG_NOSIGNAL) != (ssize_t)len) {
		snprintf(why, whysize, "memguardd's placement service at %s: %s", socket_path,
		         strerror(errno));
		return -EIO;
	}
	/* memguardd answers one line and closes; a silent one times out. */
	struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		n = -errno;
	else
		n = mg_read_small_fd(fd, line, linesize);
	if (n == 0)
		n = -ECONNRESET; /* closed without a word */
	if (n == -EAGAIN)
		n = -ETIMEDOUT;
	if (n < 0)
		snprintf(why, whysize, "memguardd's placement service at %s: %s", socket_path,
		         strerror((int)-n));
	return n;
}

/* Builds the request line "place[ job=ID][ budget=BYTES]\n" into buf; no
 * budget word for 0. */
static void request_line(char *buf, size_t size, const char *job_hint, uint64_t budget)
{
	/* The job id only chooses among the caller's own job cgroups; the daemon checks it. */
	bool hint = job_hint && *job_hint && strlen(job_hint) <= 64 && !strpbrk(job_hint, " \n/");
	int len = snprintf(buf, size, "place%s%s", hint ? " job=" : "", hint ? job_hint : "");

	if (budget)
		len += snprintf(buf + len, size - (size_t)len, " budget=%" PRIu64, budget);
	snprintf(buf + len, size - (size_t)len, "\n");
}

int mg_place_ask(const char *socket_path, const char *job_hint, uint64_t budget, int timeout_ms,
                 struct mg_place_answer *ret, char *why, size_t whysize)
{
	char request[96], line[1400];
	ssize_t n;
	int r;

	if (budget == MG_SIZE_UNLIMITED)
		budget = 0; /* nothing to say */
	request_line(request, sizeof(request), job_hint, budget);
	n = exchange(socket_path, request, timeout_ms, line, sizeof(line), why, whysize);
	if (n < 0)
		return (int)n;
	r = mg_place_parse_reply(line, ret, why, whysize);
	/* A memguardd from before budgets refuses the word: ask it as it understands, and say so. */
	if (r == -EPERM && budget && strncmp(line, "err bad request", 15) == 0) {
		request_line(request, sizeof(request), job_hint, 0);
		n = exchange(socket_path, request, timeout_ms, line, sizeof(line), why, whysize);
		if (n < 0)
			return (int)n;
		r = mg_place_parse_reply(line, ret, why, whysize);
		ret->budget_refused = true;
	}
	return r;
}
