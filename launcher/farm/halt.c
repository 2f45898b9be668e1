/* --halt and parallel's exit statuses (halt.h). */
#include "farm/halt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memguard/util.h"

int mg_halt_parse(const char *s, struct mg_halt *ret, char *err, size_t errsize)
{
	static const struct {
		const char *name, *as;
	} shorts[] = {
	        {"0", "never"},           {"1", "soon,fail=1"},    {"2", "now,fail=1"},
	        {"-1", "soon,success=1"}, {"-2", "now,success=1"},
	};
	char buf[64], *why, *value, *end;
	struct mg_halt h = {.given = true};
	const char *given = s;
	size_t len;

	for (size_t i = 0; i < MG_ARRAY_SIZE(shorts); i++)
		if (strcmp(s, shorts[i].name) == 0)
			s = shorts[i].as;
	len = strlen(s);
	if (len > 0 && len < 8 && s[len - 1] == '%' && strspn(s, "0123456789") == len - 1)
		snprintf(buf, sizeof(buf), "soon,fail=%s", s);
	else if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		goto bad;
	if (strcmp(buf, "never") == 0) {
		*ret = (struct mg_halt){.when = MG_HALT_NEVER, .given = true};
		return 0;
	}
	if (!(why = strchr(buf, ',')))
		goto bad;
	*why++ = '\0';
	if (strcmp(buf, "now") == 0)
		h.when = MG_HALT_NOW;
	else if (strcmp(buf, "soon") == 0)
		h.when = MG_HALT_SOON;
	else
		goto bad;
	if (!(value = strchr(why, '=')))
		goto bad;
	*value++ = '\0';
	if (strcmp(why, "fail") == 0)
		h.why = MG_HALT_FAIL;
	else if (strcmp(why, "success") == 0)
		h.why = MG_HALT_SUCCESS;
	else if (strcmp(why, "done") == 0)
		h.why = MG_HALT_DONE;
	else
		goto bad;
	len = strlen(value);
	h.percent = len > 1 && value[len - 1] == '%';
	if (h.percent)
		value[--len] = '\0';
	if (*value < '0' || *value > '9')
		goto bad;
	errno = 0;
	unsigned long v = strtoul(value, &end, 10);
	if (errno || *end || v == 0 || v > (h.percent ? 100 : 1u << 20))
		goto bad;
	h.value = (unsigned)v;
	*ret = h;
	return 0;
bad:
	snprintf(err, errsize,
	         "invalid --halt \"%s\": expected now or soon, then fail, success or done = a number of "
	         "jobs from 1 or a percentage (now,fail=1; soon,fail=10%%), or never",
	         given);
	return -EINVAL;
}

/* The status parallel fixes when it halts for failures or ends: the job's
 * own when one job was the limit, else the count or the percentage. */
static int fixed_status(const struct mg_halt *h, const struct mg_halt_state *st, size_t total, double limit,
                        int status)
{
	if (limit == 1.0)
		return status;
	if (h->percent) {
		/* ceil(failed / total * 100), as parallel computes it. */
		unsigned long long num = (unsigned long long)st->failed * 100;
		return (int)((num + total - 1) / (total ? total : 1));
	}
	return st->failed < 101 ? (int)st->failed : 101;
}

enum mg_halt_when mg_halt_job_ended(const struct mg_halt *h, struct mg_halt_state *st, size_t total,
                                    int status)
{
	size_t count;

	st->completed++;
	if (status != 0)
		st->failed++;
	if (h->when == MG_HALT_NEVER)
		return MG_HALT_NEVER;
	if (h->why == MG_HALT_FAIL && status != 0)
		count = st->failed;
	else if (h->why == MG_HALT_SUCCESS && status == 0)
		count = st->completed - st->failed;
	else if (h->why == MG_HALT_DONE)
		count = st->completed;
	else
		return MG_HALT_NEVER;
	/* parallel's limit: a count, or total * percent / 100 (a fraction). */
	double limit = h->percent ? (double)total * h->value / 100.0 : (double)h->value;
	if ((double)count < limit)
		return MG_HALT_NEVER;
	if (!st->halted) {
		st->halted = true;
		st->status = h->why == MG_HALT_SUCCESS ? 0 : fixed_status(h, st, total, limit, status);
	}
	return h->when;
}

int mg_halt_exit_status(const struct mg_halt *h, const struct mg_halt_state *st)
{
	if (st->halted)
		return st->status;
	if (h->when != MG_HALT_NEVER && h->percent) {
		unsigned long long num = (unsigned long long)st->failed * 100;
		size_t started = st->started ? st->started : 1;
		return (int)((num + started - 1) / started);
	}
	return st->failed < 101 ? (int)st->failed : 101;
}
