/* Parsing and reading /proc/meminfo into bytes, the free pages of the per-CPU
 * lists in /proc/zoneinfo, and a cgroup's unreclaimable part. */
#include "memguard/meminfo.h"

#include <string.h>
#include <unistd.h>

#include "memguard/util.h"

/* Returns 1 when key is there, 0 when it is not and not required (*ret 0). */
static int get_kb(const char *text, const char *key, bool required, uint64_t *ret)
{
	uint64_t kb = 0;
	int r = mg_keyed_u64(text, key, &kb);

	if (r == -ENOENT && !required)
		kb = 0;
	else if (r < 0)
		return -EBADMSG;
	if (__builtin_mul_overflow(kb, 1024, ret))
		return -EBADMSG;
	return r == 0;
}

int mg_meminfo_parse(const char *text, struct mg_meminfo *ret)
{
	struct mg_meminfo m;
	uint64_t active_file, inactive_file;
	int r, has_free = 0;

	if ((r = get_kb(text, "MemTotal", true, &m.mem_total)) < 0 ||
	    (r = get_kb(text, "MemAvailable", true, &m.mem_available)) < 0 ||
	    (r = get_kb(text, "SwapTotal", false, &m.swap_total)) < 0 ||
	    (r = get_kb(text, "SwapFree", false, &m.swap_free)) < 0 ||
	    (r = get_kb(text, "Shmem", false, &m.shmem)) < 0 ||
	    (r = has_free = get_kb(text, "MemFree", false, &m.mem_free)) < 0 ||
	    (r = get_kb(text, "Active(file)", false, &active_file)) < 0 ||
	    (r = get_kb(text, "Inactive(file)", false, &inactive_file)) < 0 ||
	    (r = get_kb(text, "SReclaimable", false, &m.slab_reclaimable)) < 0)
		return r;
	if (__builtin_add_overflow(active_file, inactive_file, &m.file))
		return -EBADMSG;
	m.has_free = has_free;
	*ret = m;
	return 0;
}

uint64_t mg_meminfo_free_and_reclaimable(const struct mg_meminfo *m)
{
	uint64_t sum;

	if (!m->has_free)
		return m->mem_available;
	if (__builtin_add_overflow(m->mem_free, m->file, &sum) ||
	    __builtin_add_overflow(sum, m->slab_reclaimable, &sum))
		return UINT64_MAX;
	return sum;
}

int mg_memstat_unreclaimable(const char *stat, uint64_t current, uint64_t *ret)
{
	uint64_t active = 0, inactive = 0, slab = 0, lru;
	int r;

	if (mg_keyed_u64(stat, "active_file", &active) < 0 ||
	    mg_keyed_u64(stat, "inactive_file", &inactive) < 0)
		return -EBADMSG;
	/* Older kernels have no slab_reclaimable: their slab then counts as held. */
	if ((r = mg_keyed_u64(stat, "slab_reclaimable", &slab)) < 0 && r != -ENOENT)
		return -EBADMSG;
	if (__builtin_add_overflow(active, inactive, &lru) || __builtin_add_overflow(lru, slab, &lru))
		return -EBADMSG;
	*ret = current > lru ? current - lru : 0;
	return 0;
}

/* The value of a "count:" line of zoneinfo starting at line: 1 and *ret,
 * 0 when line is another line, -EBADMSG when its value is not a number. */
static int pcp_count(const char *line, uint64_t *ret)
{
	const char *p = line + strspn(line, " \t");
	char digits[24];
	size_t n;

	if (strncmp(p, "count:", 6) != 0)
		return 0;
	p += 6 + strspn(p + 6, " \t");
	n = strspn(p, "0123456789");
	if (n == 0 || n >= sizeof(digits) || (p[n] != '\n' && p[n] != '\0'))
		return -EBADMSG;
	memcpy(digits, p, n);
	digits[n] = '\0';
	return mg_parse_u64(digits, ret) < 0 ? -EBADMSG : 1;
}

int mg_zoneinfo_pcp_parse(const char *text, uint64_t *ret_pages)
{
	uint64_t pages = 0;

	for (const char *line = text; line && *line;) {
		const char *next = strchr(line, '\n');
		uint64_t count;
		int r = pcp_count(line, &count);

		if (r < 0 || (r > 0 && __builtin_add_overflow(pages, count, &pages)))
			return -EBADMSG;
		line = next ? next + 1 : NULL;
	}
	*ret_pages = pages;
	return 0;
}

int mg_zoneinfo_pcp_read(int procfd, uint64_t *ret_bytes)
{
	_cleanup_free_ char *text = NULL;
	ssize_t n = mg_read_file_at(procfd, "zoneinfo", &text);
	uint64_t pages;
	int r;

	if (n < 0)
		return (int)n;
	if ((r = mg_zoneinfo_pcp_parse(text, &pages)) < 0)
		return r;
	if (__builtin_mul_overflow(pages, (uint64_t)sysconf(_SC_PAGESIZE), ret_bytes))
		return -EBADMSG;
	return 0;
}

int mg_meminfo_read(int procfd, struct mg_meminfo *ret)
{
	char buf[8192];
	ssize_t n = mg_read_small_at(procfd, "meminfo", buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return mg_meminfo_parse(buf, ret);
}
