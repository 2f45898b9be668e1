/* Which mount carries the memory controller: mg_mountinfo_parse_cgroups on
 * mountinfo texts of real layouts, and mg_cgroup_find_memory_mount on fake
 * procfds and cgroup roots. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_tree.h"
#include "memguard/locate.h"

/* Debian 12 booted with the unified layout (systemd's default). */
static const char unified[] =
        "22 28 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
        "23 28 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
        "28 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw,errors=remount-ro\n"
        "26 22 0:25 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
        "rw,nsdelegate,memory_recursiveprot\n";

/* The hybrid layout of the build hosts: memory on v1, an empty unified tree. */
static const char hybrid[] =
        "25 22 0:24 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:4 - tmpfs tmpfs ro,mode=755\n"
        "26 25 0:25 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:5 - cgroup2 cgroup2 "
        "rw,nsdelegate\n"
        "29 25 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:10 - cgroup cgroup "
        "rw,cpu,cpuacct\n"
        "30 25 0:29 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup "
        "rw,memory\n";

struct parse_case {
	const char *what, *text;
	const char *v2, *v1_memory; /* NULL: none expected */
	bool v2_is_root;
};

static void parse_table(void **state)
{
	static const struct parse_case cases[] = {
	        {"unified", unified, "/sys/fs/cgroup", NULL, true},
	        {"hybrid", hybrid, "/sys/fs/cgroup/unified", "/sys/fs/cgroup/memory", true},
	        {"no optional fields, then several: the separator is found either way",
	         "40 1 0:40 / /cg rw - cgroup2 none rw\n"
	         "41 1 0:41 / /v1 rw shared:3 master:2 propagate_from:1 unbindable - cgroup none rw,memory",
	         "/cg", "/v1", true},
	        {"escapes in the mount point", "40 1 0:40 / /mnt/my\\040cgroups\\134x rw - cgroup2 none rw\n",
	         "/mnt/my cgroups\\x", NULL, true},
	        {"name=memory and memory_recursiveprot are not the memory controller",
	         "41 1 0:41 / /a rw - cgroup none rw,name=memory\n"
	         "42 1 0:42 / /b rw - cgroup none rw,memory_recursiveprot\n"
	         "43 1 0:43 / /c rw - cgroup none rw,pids,memory\n",
	         NULL, "/c", false},
	        {"the first mount wins",
	         "40 1 0:40 / /first rw - cgroup2 none rw\n"
	         "41 1 0:40 / /second rw - cgroup2 none rw\n",
	         "/first", NULL, true},
	        {"a container runtime's binds of one cgroup come before the root mount",
	         "40 1 0:40 /system.slice/x /run/x rw - cgroup2 none rw\n"
	         "41 1 0:40 /other /run/y rw - cgroup2 none rw\n"
	         "42 1 0:40 / /sys/fs/cgroup rw - cgroup2 none rw\n"
	         "43 1 0:40 / /later rw - cgroup2 none rw\n",
	         "/sys/fs/cgroup", NULL, true},
	        {"only subtrees: the first is better than nothing",
	         "40 1 0:40 /a /run/a rw - cgroup2 none rw\n"
	         "41 1 0:40 /b /run/b rw - cgroup2 none rw\n",
	         "/run/a", NULL, false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct parse_case *c = &cases[i];
		struct mg_cgroup_mounts m;

		print_message("%s\n", c->what);
		assert_int_equal(mg_mountinfo_parse_cgroups(c->text, &m), 0);
		if (c->v2) {
			assert_string_equal(m.v2, c->v2);
			assert_int_equal(m.v2_is_root, c->v2_is_root);
		} else {
			assert_null(m.v2);
		}
		if (c->v1_memory)
			assert_string_equal(m.v1_memory, c->v1_memory);
		else
			assert_null(m.v1_memory);
		mg_cgroup_mounts_done(&m);
		assert_null(m.v2);
		assert_null(m.v1_memory);
	}
}

static void parse_survives_garbage(void **state)
{
	static const char *const texts[] = {
	        "",
	        "\n\n",
	        "40 1 0:40 / /cg rw cgroup2 none rw\n",      /* no separator */
	        "40 1 0:40 / /cg rw -\n",                    /* nothing after it */
	        "40 1 0:40 / /cg rw - cgroup2\n",            /* no source or options */
	        "- - - - - - - - - - - - - - - - - - - -\n", /* separators only */
	        "40 1 0:40 / /cg\\0 rw - cgroup2 none rw\n", /* a cut escape stays as it is */
	};

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct mg_cgroup_mounts m;
		assert_int_equal(mg_mountinfo_parse_cgroups(texts[i], &m), 0);
		if (i == 6)
			assert_string_equal(m.v2, "/cg\\0");
		else
			assert_null(m.v2);
		assert_null(m.v1_memory);
		mg_cgroup_mounts_done(&m);
	}
}

/* A fake /proc whose self/mountinfo names v2 and v1 roots inside the tree. */
static void fake_layout(struct fake_tree *t, const char *v2_controllers, bool with_v1)
{
	char text[4 * PATH_MAX];
	int n = snprintf(text, sizeof(text), "26 22 0:25 / %s/v2 rw shared:4 - cgroup2 cgroup2 rw\n",
	                 t->path);

	if (with_v1)
		snprintf(text + n, sizeof(text) - (size_t)n,
		         "30 25 0:29 / %s/v1 rw - cgroup cgroup rw,memory\n", t->path);
	ft_write(t->fd, "proc/self/mountinfo", text);
	ft_write(t->fd, "v2/cgroup.controllers", v2_controllers);
	ft_mkdir(t->fd, "v1");
}

/* The mount found for a layout: the tree's subdirectory want, v2 or not. */
static void expect_found(struct fake_tree *t, const char *v2_controllers, const char *want, bool want_unified)
{
	struct mg_cgroup_mount m;
	char path[PATH_MAX + 8];

	fake_layout(t, v2_controllers, true);
	int procfd = ft_open_dir(t->fd, "proc");
	assert_int_equal(mg_cgroup_find_memory_mount(procfd, &m), 0);
	snprintf(path, sizeof(path), "%s/%s", t->path, want);
	assert_string_equal(m.path, path);
	assert_int_equal(m.unified, want_unified);
	mg_cgroup_mount_done(&m);
	close(procfd);
}

static void find_prefers_v2_with_memory(void **state)
{
	expect_found(*state, "cpuset cpu io memory pids\n", "v2", true);
}

static void find_falls_back_to_v1(void **state)
{
	/* Hybrid: the unified tree exists but has no memory controller. */
	expect_found(*state, "cpu io pids\n", "v1", false);
}

static void find_none(void **state)
{
	struct fake_tree *t = *state;
	struct mg_cgroup_mount m;

	fake_layout(t, "cpu memoryx\n", false);
	int procfd = ft_open_dir(t->fd, "proc");
	assert_int_equal(mg_cgroup_find_memory_mount(procfd, &m), -ENOENT);
	assert_null(m.path);
	close(procfd);
	/* No mountinfo at all: the read's own error. */
	assert_int_equal(mg_cgroup_find_memory_mount(t->fd, &m), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(parse_table),
	        cmocka_unit_test(parse_survives_garbage),
	        cmocka_unit_test_setup_teardown(find_prefers_v2_with_memory, ft_setup, ft_teardown),
	        cmocka_unit_test_setup_teardown(find_falls_back_to_v1, ft_setup, ft_teardown),
	        cmocka_unit_test_setup_teardown(find_none, ft_setup, ft_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
