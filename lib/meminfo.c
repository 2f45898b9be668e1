/* Parsing and reading /proc/meminfo into bytes. */
#include "memguard/meminfo.h"

#include "memguard/util.h"

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
	return 0;
}

int mg_meminfo_parse(const char *text, struct mg_meminfo *ret)
{
	struct mg_meminfo m;
	int r;

	if ((r = get_kb(text, "MemTotal", true, &m.mem_total)) < 0 ||
	    (r = get_kb(text, "MemAvailable", true, &m.mem_available)) < 0 ||
	    (r = get_kb(text, "SwapTotal", false, &m.swap_total)) < 0 ||
	    (r = get_kb(text, "SwapFree", false, &m.swap_free)) < 0 ||
	    (r = get_kb(text, "Shmem", false, &m.shmem)) < 0)
		return r;
	*ret = m;
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
