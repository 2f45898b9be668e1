/* The launcher-daemon contract: typed access to the xattrs on task cgroups. */
#include "memguard/contract.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>

#include "memguard/util.h"

/* An xattr that was never set reads as ENODATA; a filesystem without
 * xattrs (or trusted.* hidden from us) reads as none too. */
static int get_text(int cgfd, const char *name, char *buf, size_t size)
{
	if (size == 0)
		return -EINVAL;
	ssize_t n = fgetxattr(cgfd, name, buf, size - 1);
	if (n < 0 && errno == ERANGE) {
		/* Longer than buf: cut it, as the caller asked. */
		char big[4096];
		n = fgetxattr(cgfd, name, big, sizeof(big));
		if (n < 0)
			return -errno;
		n = (size_t)n < size - 1 ? n : (ssize_t)(size - 1);
		memcpy(buf, big, (size_t)n);
	} else if (n < 0) {
		return errno == ENOTSUP ? -ENODATA : -errno;
	}
	buf[n] = '\0';
	return (int)n;
}

static int set_text(int cgfd, const char *name, const char *value)
{
	return fsetxattr(cgfd, name, value, strlen(value), 0) < 0 ? -errno : 0;
}

static int get_bytes(int cgfd, const char *name, uint64_t *ret)
{
	char buf[32];
	uint64_t v;
	int r = get_text(cgfd, name, buf, sizeof(buf));

	if (r < 0)
		return r;
	if (mg_parse_u64(buf, &v) < 0 || v == 0)
		return -ENODATA;
	*ret = v;
	return 0;
}

int mg_contract_set_share(int cgfd, uint64_t share)
{
	char buf[24];

	if (share == 0)
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%" PRIu64, share);
	if (set_text(cgfd, MG_XATTR_SHARE, buf) == 0)
		return 1;
	int r = set_text(cgfd, MG_XATTR_SHARE_HINT, buf);
	return r < 0 ? r : 0;
}

int mg_contract_get_share(int cgfd, uint64_t *ret_share)
{
	return get_bytes(cgfd, MG_XATTR_SHARE, ret_share);
}

int mg_contract_get_share_hint(int cgfd, uint64_t *ret_share)
{
	return get_bytes(cgfd, MG_XATTR_SHARE_HINT, ret_share);
}

uint64_t mg_contract_share(uint64_t trusted, uint64_t root_limit, uint64_t hint)
{
	uint64_t known = trusted ? trusted : root_limit;

	return hint && hint < known ? hint : known;
}

int mg_contract_set_killed(int cgfd, const char *why)
{
	return set_text(cgfd, MG_XATTR_KILLED, why);
}

int mg_contract_get_killed(int cgfd, char *buf, size_t size)
{
	return get_text(cgfd, MG_XATTR_KILLED, buf, size);
}

int mg_contract_set_fence(int cgfd, const char *saved_high)
{
	return set_text(cgfd, MG_XATTR_FENCE, saved_high);
}

int mg_contract_get_fence(int cgfd, char *buf, size_t size)
{
	return get_text(cgfd, MG_XATTR_FENCE, buf, size);
}

int mg_contract_clear_fence(int cgfd)
{
	if (fremovexattr(cgfd, MG_XATTR_FENCE) < 0)
		return errno == ENODATA || errno == ENOTSUP ? 0 : -errno;
	return 0;
}

int mg_contract_set_launcher(int cgfd, pid_t pid, uint64_t start_time)
{
	char buf[48];

	if (pid <= 0)
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%d %" PRIu64, (int)pid, start_time);
	return set_text(cgfd, MG_XATTR_LAUNCHER, buf);
}

/* An xattr of two numbers, "<a> <b>"; -ENODATA when it is not that. */
static int get_pair(int cgfd, const char *name, uint64_t *ret_a, uint64_t *ret_b)
{
	char buf[48];
	int r = get_text(cgfd, name, buf, sizeof(buf));

	if (r < 0)
		return r;
	char *space = strchr(buf, ' ');
	if (!space)
		return -ENODATA;
	*space = '\0';
	return mg_parse_u64(buf, ret_a) < 0 || mg_parse_u64(space + 1, ret_b) < 0 ? -ENODATA : 0;
}

int mg_contract_get_launcher(int cgfd, pid_t *ret_pid, uint64_t *ret_start_time)
{
	uint64_t pid, start;
	int r = get_pair(cgfd, MG_XATTR_LAUNCHER, &pid, &start);

	if (r < 0)
		return r;
	if (pid == 0 || pid > INT32_MAX)
		return -ENODATA;
	*ret_pid = (pid_t)pid;
	*ret_start_time = start;
	return 0;
}

int mg_contract_set_tether(int cgfd, const char *path)
{
	return set_text(cgfd, MG_XATTR_TETHER, path);
}

int mg_contract_get_tether(int cgfd, char *buf, size_t size)
{
	return get_text(cgfd, MG_XATTR_TETHER, buf, size);
}

int mg_contract_set_taken(int cgfd, uint64_t taken, uint64_t limit)
{
	char buf[48];

	if (taken == 0 || limit == 0)
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%" PRIu64 " %" PRIu64, taken, limit);
	return set_text(cgfd, MG_XATTR_TAKEN, buf);
}

int mg_contract_get_taken(int cgfd, uint64_t *ret_taken, uint64_t *ret_limit)
{
	uint64_t taken, limit;
	int r = get_pair(cgfd, MG_XATTR_TAKEN, &taken, &limit);

	if (r < 0)
		return r;
	if (taken == 0 || limit == 0)
		return -ENODATA;
	*ret_taken = taken;
	*ret_limit = limit;
	return 0;
}

int mg_contract_set_keeps(int cgfd, uint64_t bytes)
{
	char buf[24];

	if (bytes == 0)
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%" PRIu64, bytes);
	return set_text(cgfd, MG_XATTR_KEEPS, buf);
}

int mg_contract_get_keeps(int cgfd, uint64_t *ret_bytes)
{
	return get_bytes(cgfd, MG_XATTR_KEEPS, ret_bytes);
}

int mg_contract_clear_keeps(int cgfd)
{
	if (fremovexattr(cgfd, MG_XATTR_KEEPS) < 0)
		return errno == ENODATA || errno == ENOTSUP ? 0 : -errno;
	return 0;
}
