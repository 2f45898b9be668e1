#include "memguard/locate.h"

#include <errno.h>
#include <libcgroup.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

#include "memguard/util.h"

/* libcgroup reports ECG* codes; ECGOTHER carries a real errno. */
static int cg_errno(int ecg)
{
	switch (ecg) {
	case 0:
		return 0;
	case ECGOTHER:
		return -cgroup_get_last_errno();
	case ECGROUPNOTMOUNTED:
	case ECGROUPSUBSYSNOTMOUNTED:
	case ECGROUPNOTEXIST:
		return -ENOENT;
	case ECGROUPNOTALLOWED:
	case ECGROUPNOTOWNER:
		return -EACCES;
	default:
		return -EIO;
	}
}

int mg_cgroup_find_memory_mount(struct mg_cgroup_mount *ret)
{
	char *path = NULL;
	struct statfs sfs;
	int r;

	r = cg_errno(cgroup_init());
	if (r < 0)
		return r;
	r = cg_errno(cgroup_get_subsys_mount_point("memory", &path));
	if (r < 0)
		return r;
	if (statfs(path, &sfs) < 0) {
		r = -errno;
		free(path);
		return r;
	}
	ret->path = path;
	ret->unified = sfs.f_type == CGROUP2_SUPER_MAGIC;
	return 0;
}

void mg_cgroup_mount_done(struct mg_cgroup_mount *m)
{
	free(m->path);
	m->path = NULL;
}
