/* outside_kill (daemon/guard/outside.c) on fake cgroup and /proc trees, in a dry
 * run: which process memguardd names outside the guard. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_tree.h"
#include "guard/outside.h"

/* A fake process: its stat line, its OOM score and adjustment. */
static void fake_proc_of(int procfd, int pid, int ppid, const char *comm, int oom_score,
                         unsigned long rss_pages)
{
	char path[64], text[512];

	snprintf(path, sizeof(path), "%d/stat", pid);
	snprintf(text, sizeof(text),
	         "%d (%s) S %d %d %d 0 -1 4194560 1843 0 12 0 2150 312 0 0 20 0 1 0 8589934597 42949672960 "
	         "%lu "
	         "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
	         pid, comm, ppid, pid, pid, rss_pages);
	ft_write(procfd, path, text);
	snprintf(path, sizeof(path), "%d/oom_score", pid);
	snprintf(text, sizeof(text), "%d\n", oom_score);
	ft_write(procfd, path, text);
	snprintf(path, sizeof(path), "%d/oom_score_adj", pid);
	ft_write(procfd, path, "0\n");
}

static void fake_proc(int procfd, int pid, const char *comm, int oom_score, unsigned long rss_pages)
{
	fake_proc_of(procfd, pid, 1, comm, oom_score, rss_pages);
}

/* A fake cgroup holding current bytes and the pids in procs. */
static void fake_cgroup(int mountfd, const char *path, const char *current, const char *procs)
{
	char file[1200];

	snprintf(file, sizeof(file), "%s/memory.current", path);
	ft_write(mountfd, file, current);
	snprintf(file, sizeof(file), "%s/cgroup.procs", path);
	ft_write(mountfd, file, procs);
}

/* The fake cgroup mount and /proc of t, made and opened. */
static void fake_node(struct fake_tree *t, int *ret_mountfd, int *ret_procfd)
{
	ft_mkdir(t->fd, "cg");
	ft_mkdir(t->fd, "proc");
	*ret_mountfd = ft_open_dir(t->fd, "cg");
	*ret_procfd = ft_open_dir(t->fd, "proc");
}

/* outside_kill of top on that fake node, in a dry run; closes its fds and
 * returns the kill log (the caller frees it). */
static char *dry_kill(struct fake_tree *t, int mountfd, int procfd, const char *top)
{
	static struct mg_guard d;

	d = (struct mg_guard){.mountfd = mountfd, .procfd = procfd, .policy = {.dry_run = true}};
	assert_true(strlen(t->path) + sizeof("/kills.jsonl") <= sizeof(d.cfg.kill_log));
	memcpy(d.cfg.kill_log, t->path, strlen(t->path));
	strcat(d.cfg.kill_log, "/kills.jsonl");
	assert_int_equal(outside_kill(&d, top, NULL, 0, "test", 0), 1);
	close(mountfd);
	close(procfd);
	return ft_read(t->fd, "kills.jsonl", NULL);
}

/* Issue 36, hole 2: the hog two 250-character cgroups below its user's
 * slice, at a 528-byte path; a bystander of another user elsewhere. Before,
 * both walks passed over a path of 512 bytes or more, and the verdict named
 * the bystander. */
static void hog_at_long_path(void **state)
{
	struct fake_tree *t = *state;
	char name[251], deep[1200], *log;
	int mountfd, procfd;

	memset(name, 'x', 250);
	name[250] = '\0';
	snprintf(deep, sizeof(deep), "user.slice/user-1001.slice/%s/%s", name, name);
	assert_int_equal(strlen(deep), 528);
	fake_node(t, &mountfd, &procfd);
	fake_cgroup(mountfd, "user.slice", "4294967296\n", "");
	fake_cgroup(mountfd, "user.slice/user-1001.slice", "3221225472\n", "");
	snprintf(deep, sizeof(deep), "user.slice/user-1001.slice/%s", name);
	fake_cgroup(mountfd, deep, "3221225472\n", "");
	snprintf(deep, sizeof(deep), "user.slice/user-1001.slice/%s/%s", name, name);
	fake_cgroup(mountfd, deep, "3221225472\n", "1001\n");
	fake_cgroup(mountfd, "user.slice/user-1002.slice", "1073741824\n", "");
	fake_cgroup(mountfd, "user.slice/user-1002.slice/session-2.scope", "1073741824\n", "2002\n");
	fake_proc(procfd, 1001, "hog", 700, 786432);
	fake_proc(procfd, 2002, "bystander", 250, 262144);

	log = dry_kill(t, mountfd, procfd, "user.slice");
	ft_assert_contains(log, "(hog) has the highest OOM score there (700)");
	ft_assert_contains(log, "too deep to name");
	snprintf(deep, sizeof(deep), "\"cgroup\":\"user.slice/user-1001.slice/%s\"", name);
	ft_assert_contains(log, deep);
	free(log);
}

/* Issue 36, hole 8: a hog in the root cgroup itself, beside init and kernel
 * threads, which are never taken, and a top-level cgroup whose processes
 * are not the root's. */
static void hog_in_root(void **state)
{
	struct fake_tree *t = *state;
	int mountfd, procfd;

	fake_node(t, &mountfd, &procfd);
	ft_write(mountfd, "cgroup.procs", "1\n2\n57\n3001\n3002\n");
	fake_cgroup(mountfd, "user.slice", "104857600\n", "4004\n");
	fake_proc_of(procfd, 1, 0, "init", 999, 262144);
	fake_proc_of(procfd, 2, 0, "kthreadd", 998, 0);
	fake_proc_of(procfd, 57, 2, "kworker/0:1", 997, 0);
	fake_proc(procfd, 3001, "hog", 600, 196608);
	fake_proc(procfd, 3002, "sh", 3, 256);
	fake_proc(procfd, 4004, "other", 900, 25600);

	char *log = dry_kill(t, mountfd, procfd, MG_ROOT_CGROUP);
	ft_assert_contains(log, "\"cgroup\":\"/\"");
	ft_assert_contains(log, "(hog) has the highest OOM score there (600)");
	free(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(hog_at_long_path, ft_setup, ft_teardown),
	        cmocka_unit_test_setup_teardown(hog_in_root, ft_setup, ft_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
