/* Prometheus text exposition format (version 0.0.4), built in memory and
 * written atomically, for node_exporter's textfile collector: memguardd's
 * metrics file and the launcher's --metrics. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A growing text buffer. Errors are sticky: the first one (-ENOMEM, or
 * -EINVAL for a name that is not a valid metric or label name) is kept in
 * error, and later calls add nothing. Zero it to start (or MG_METRICS_INIT);
 * mg_metrics_reset empties it and keeps the memory, so a daemon that writes
 * again and again allocates only the first time. */
struct mg_metrics {
	char *buf;
	size_t len, cap;
	int error;
};

#define MG_METRICS_INIT ((struct mg_metrics){0})

void mg_metrics_reset(struct mg_metrics *m);
void mg_metrics_done(struct mg_metrics *m);

/* A metric family's "# HELP" and "# TYPE" lines; type is "gauge",
 * "counter" or "untyped". Help text escapes backslash and newline. */
void mg_metrics_family(struct mg_metrics *m, const char *name, const char *type, const char *help);

/* One sample line: name{l1="v1",...} value. labels holds name, value pairs
 * and ends with NULL (NULL itself: no labels); label values escape
 * backslash, double quote and newline. A value that is not finite is
 * written as NaN, +Inf or -Inf. */
void mg_metrics_sample(struct mg_metrics *m, const char *name, const char *const *labels, double value);
/* The same for integers, written exactly (a double holds 2^53 exactly only). */
void mg_metrics_sample_u64(struct mg_metrics *m, const char *name, const char *const *labels, uint64_t value);

/* Whether name is a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*), or with
 * label true a valid label name (no colon, not starting with "__"). */
bool mg_metrics_name_valid(const char *name, bool label);

/* Creates path.tmp-<random> in path's directory for writing (O_EXCL,
 * O_NOFOLLOW, O_CLOEXEC), never through a symlink or over an existing file:
 * a predictable name in a shared directory would let anyone plant a link
 * there. The name comes back in ret_tmp. Returns the fd, or -errno
 * (-ENAMETOOLONG when the name does not fit in size). mode goes through
 * the umask, as open(2) has it. */
int mg_atomic_open(const char *path, mode_t mode, char *ret_tmp, size_t size);

/* Writes len bytes of buf to path atomically: into mg_atomic_open's file,
 * set to mode exactly (not through the umask: a collector running as
 * another user must read it), fsync'd when sync is true, then renamed over
 * path. A reader sees the old file or the new one whole, never a part.
 * Returns 0 or -errno; no temporary file is left behind. */
int mg_atomic_write(const char *path, const void *buf, size_t len, mode_t mode, bool sync);

/* mg_atomic_write of m's text with mode 0644: m->error when building it
 * failed, else what mg_atomic_write returns. */
int mg_metrics_write(const struct mg_metrics *m, const char *path, bool sync);
