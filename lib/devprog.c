/* Device programs on a cgroup: BPF_PROG_QUERY, then each program's tag. */
#include "memguard/devprog.h"

#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "memguard/util.h"

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	long r = syscall(SYS_bpf, cmd, attr, sizeof(*attr));
	return r < 0 ? -errno : (int)r;
}

static int prog_tag(uint32_t id, struct mg_devprog_tag *ret)
{
	union bpf_attr attr = {.prog_id = id};
	struct bpf_prog_info info = {0};
	_cleanup_close_ int fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &attr);
	int r;

	if (fd < 0)
		return fd;
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = (uint32_t)fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = (uint64_t)(uintptr_t)&info;
	if ((r = sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr)) < 0)
		return r;
	memcpy(ret->b, info.tag, sizeof(ret->b));
	return 0;
}

int mg_devprog_tags(int cgfd, bool effective, struct mg_devprog_tag *ret, size_t max)
{
	uint32_t ids[MG_DEVPROG_MAX];
	union bpf_attr attr = {0};
	int r;

	if (cgfd < 0)
		return -EBADF;
	attr.query.target_fd = (uint32_t)cgfd;
	attr.query.attach_type = BPF_CGROUP_DEVICE;
	attr.query.query_flags = effective ? BPF_F_QUERY_EFFECTIVE : 0;
	attr.query.prog_ids = (uint64_t)(uintptr_t)ids;
	attr.query.prog_cnt = MG_DEVPROG_MAX;
	r = sys_bpf(BPF_PROG_QUERY, &attr);
	/* A kernel without cgroup BPF knows no such query: no program applies. */
	if (r == -EINVAL && !effective)
		return 0;
	if (r < 0)
		return r;
	size_t n = attr.query.prog_cnt < MG_DEVPROG_MAX ? attr.query.prog_cnt : MG_DEVPROG_MAX;
	if (n > max)
		return -E2BIG;
	for (size_t i = 0; i < n; i++)
		if ((r = prog_tag(ids[i], &ret[i])) < 0)
			return r;
	return (int)n;
}

bool mg_devprog_covered(const struct mg_devprog_tag *own, size_t n_own, const struct mg_devprog_tag *applied,
                        size_t n_applied)
{
	for (size_t i = 0; i < n_own; i++) {
		bool found = false;
		for (size_t j = 0; j < n_applied && !found; j++)
			found = memcmp(own[i].b, applied[j].b, sizeof(own[i].b)) == 0;
		if (!found)
			return false;
	}
	return true;
}
