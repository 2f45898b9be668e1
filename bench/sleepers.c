/* sleepers: one sleeping process in each of many cgroups, for bench/scale.sh.
 *   sleepers [-s SHARE] DIR FIRST LAST
 * Forks one child per I in FIRST..LAST; the child moves itself into the
 * existing cgroup DIR/task-I (writes 0 to its cgroup.procs) and sleeps until
 * killed. With -s, it first sets the cgroup's trusted.memguard.share to SHARE
 * bytes, as the launcher does (memguardd then needs no fallback for a share).
 * The parent exits once every child has moved, 0 when all did; the children
 * stay (the caller ends them with cgroup.kill). Linked statically, a
 * child maps only a few pages of its own: thousands of them fit a small guest. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fds[2], failed = 0, opt;
	long first, last, moved = 0;
	const char *share = NULL;

	while ((opt = getopt(argc, argv, "s:")) != -1) {
		if (opt != 's') {
			fprintf(stderr, "usage: sleepers [-s SHARE] DIR FIRST LAST\n");
			return 2;
		}
		share = optarg;
	}
	argc -= optind - 1;
	argv += optind - 1;
	if (argc != 4 || (first = atol(argv[2])) < 1 || (last = atol(argv[3])) < first) {
		fprintf(stderr, "usage: sleepers [-s SHARE] DIR FIRST LAST\n");
		return 2;
	}
	if (pipe(fds) < 0) {
		fprintf(stderr, "sleepers: pipe: %s\n", strerror(errno));
		return 1;
	}
	for (long i = first; i <= last; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			fprintf(stderr, "sleepers: fork %ld: %s\n", i, strerror(errno));
			return 1;
		}
		if (pid == 0) {
			char path[4096], ok = 1;
			int fd;

			close(fds[0]);
			snprintf(path, sizeof(path), "%s/task-%ld", argv[1], i);
			if (share && setxattr(path, "trusted.memguard.share", share, strlen(share), 0) < 0) {
				fprintf(stderr, "sleepers: share of %s: %s\n", path, strerror(errno));
				ok = 0;
			}
			snprintf(path, sizeof(path), "%s/task-%ld/cgroup.procs", argv[1], i);
			fd = open(path, O_WRONLY | O_CLOEXEC);
			if (fd < 0 || write(fd, "0", 1) != 1) {
				fprintf(stderr, "sleepers: join %s: %s\n", path, strerror(errno));
				ok = 0;
			}
			if (fd >= 0)
				close(fd);
			if (write(fds[1], &ok, 1) != 1 || !ok)
				_exit(1);
			close(fds[1]);
			for (;;)
				pause();
		}
	}
	close(fds[1]);
	for (;;) {
		char ok;
		ssize_t r = read(fds[0], &ok, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		moved++;
		failed |= !ok;
	}
	if (moved != last - first + 1)
		failed = 1;
	printf("%ld\n", moved);
	return failed;
}
