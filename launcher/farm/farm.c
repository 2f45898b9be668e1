/* The joblog's appends, the --results folders, the status line (farm.h). */
#include "farm/farm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "farm/joblog.h"
#include "memguard/log.h"
#include "memguard/units.h"
#include "memguard/util.h"

static const char *duration(uint64_t secs, char buf[32])
{
	if (secs >= 3600)
		snprintf(buf, 32, "%lluh%02llum", (unsigned long long)(secs / 3600),
		         (unsigned long long)(secs / 60 % 60));
	else if (secs >= 60)
		snprintf(buf, 32, "%llum%02llus", (unsigned long long)(secs / 60),
		         (unsigned long long)(secs % 60));
	else
		snprintf(buf, 32, "%llus", (unsigned long long)secs);
	return buf;
}

const char *mg_farm_status_format(const struct mg_farm_counts *c, char *buf, size_t size)
{
	char in_use[MG_SIZE_STRLEN], budget[MG_SIZE_STRLEN], eta[40], d[32];
	size_t finished = c->ok + c->failed, total = c->total - c->elsewhere;

	if (finished == total)
		snprintf(eta, sizeof(eta), "done");
	else if (finished == 0)
		snprintf(eta, sizeof(eta), "ETA ?");
	else
		snprintf(eta, sizeof(eta), "ETA %s",
		         duration(c->elapsed_usec / finished * (total - finished) / 1000000u, d));
	snprintf(buf, size,
	         "%zu/%zu done (%zu failed), %zu running, %zu retried, %zu OOM kill%s, budget %s/%s in use, "
	         "%s",
	         finished, total, c->failed, c->running, c->retried, c->memory_kills,
	         c->memory_kills == 1 ? "" : "s", mg_size_format(c->in_use, in_use),
	         mg_size_format(c->budget, budget), eta);
	return buf;
}

int mg_farm_log_attempt(struct mg_farm *f, const struct mg_task *t)
{
	struct mg_joblog_entry e;
	_cleanup_free_ char *line = NULL;

	if (f->joblog_fd < 0)
		return 0;
	mg_joblog_entry_of(t, t->host ? t->host : f->host, f->commands[t->index], &e);
	if (!(line = mg_joblog_format(&e)))
		return -ENOMEM;
	size_t len = strlen(line);
	/* One write: O_APPEND makes it one record even beside another writer. */
	ssize_t n = write(f->joblog_fd, line, len);
	int r = n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
	if (r < 0 && !f->joblog_failed)
		mg_log_errno(LOG_ERR, r,
		             "cannot append task %u's attempt %u to the joblog %s: %m; a resume would run it "
		             "again",
		             t->index + 1, e.attempt, f->joblog_path);
	if (r < 0)
		f->joblog_failed = true;
	return r;
}

int mg_farm_open_results(const struct mg_farm *f, const struct mg_task *t, int *ret_out, int *ret_err)
{
	char dir[64], path[96];
	int out, err;

	*ret_out = *ret_err = -1;
	if (f->results_fd < 0)
		return 0;
	snprintf(dir, sizeof(dir), "%u", t->index + 1);
	if (mkdirat(f->results_fd, dir, 0777) < 0 && errno != EEXIST)
		goto fail;
	snprintf(dir, sizeof(dir), "%u/%u", t->index + 1, t->attempt ? t->attempt : 1);
	if (mkdirat(f->results_fd, dir, 0777) < 0 && errno != EEXIST)
		goto fail;
	snprintf(path, sizeof(path), "%s/stdout", dir);
	out = openat(f->results_fd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666);
	if (out < 0)
		goto fail;
	snprintf(path, sizeof(path), "%s/stderr", dir);
	err = openat(f->results_fd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666);
	if (err < 0) {
		int saved = errno;
		close(out);
		errno = saved;
		goto fail;
	}
	*ret_out = out;
	*ret_err = err;
	return 0;
fail:
	return mg_log_errno(LOG_ERR, -errno, "cannot create %s/%s for task %u's output: %m", f->results_path,
	                    dir, t->index + 1);
}

int mg_farm_claim(const struct mg_farm *f, const struct mg_task *t)
{
	char name[32], note[128];
	int fd;

	if (f->claims_fd < 0)
		return 1;
	snprintf(name, sizeof(name), "%u", t->index + 1);
	fd = openat(f->claims_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
	if (fd < 0 && errno == EEXIST)
		return 0;
	if (fd < 0)
		return mg_log_errno(LOG_ERR, -errno, "cannot claim task %u in %s: %m", t->index + 1,
		                    f->claims_path);
	/* Who has it, for a person looking: the claim is its existence. */
	int n = snprintf(note, sizeof(note), "%s %d\n", f->host, (int)getpid());
	if (write(fd, note, (size_t)n) < 0) {
		/* the claim stands without it */
	}
	close(fd);
	return 1;
}

void mg_farm_done(struct mg_farm *f, size_t ntasks)
{
	if (f->claims_fd >= 0)
		close(f->claims_fd);
	if (f->joblog_fd >= 0)
		close(f->joblog_fd);
	if (f->results_fd >= 0)
		close(f->results_fd);
	for (size_t i = 0; f->commands && i < ntasks; i++)
		free(f->commands[i]);
	free(f->commands);
	*f = (struct mg_farm)MG_FARM_INIT;
}
