/* placeleave: an attacker of memguardd's placement service. Asks for a run,
 * waits until it has been moved into the run, starts a detached process
 * there and exits at once: the process must not keep the run. Fast on
 * purpose, in C, so it races memguardd even under emulation.
 *   placeleave SOCKET PROGRAM [ARG...]
 * Exits 0 once PROGRAM started, 3 if it never saw itself moved. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

extern char **environ;

static int in_placed_run(void)
{
	char buf[512];
	int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strstr(buf, "/memguard-run-") != NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	posix_spawnattr_t attr;
	pid_t pid;
	int fd;

	if (argc < 3 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: placeleave SOCKET PROGRAM [ARG...]\n");
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || write(fd, "place\n", 6) != 6) {
		perror("placeleave: ask memguardd");
		return 2;
	}
	for (long i = 0; !in_placed_run(); i++)
		if (i == 10000000)
			return 3;
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
	if (posix_spawn(&pid, argv[2], NULL, &attr, argv + 2, environ) != 0)
		return 2;
	_exit(0);
}
