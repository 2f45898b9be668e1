/* spawn: plain fork+exec, the baseline of the start-up costs.
 *   spawn [-s] [-o FILE] N PROGRAM [ARGS...]
 * Starts N copies of PROGRAM at once with fork() and execv(), waits for all,
 * and prints the wall time in seconds and the largest peak RSS of a copy (KiB,
 * getrusage's ru_maxrss, which counts the descendants a copy waited for). With
 * -s, one after another: each copy is waited for before the next starts. With
 * -o, the copies' stdout and stderr go to FILE. Exits 1 when a copy failed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec a, b;
	struct rusage children;
	int status, failed = 0, sequential = 0, opt, out = -1;
	long n;

	while ((opt = getopt(argc, argv, "+so:")) != -1) {
		if (opt == 's') {
			sequential = 1;
		} else if (opt == 'o') {
			out = open(optarg, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (out < 0) {
				fprintf(stderr, "spawn: cannot open %s: %s\n", optarg, strerror(errno));
				return 1;
			}
		} else {
			break;
		}
	}
	argv += optind - 1;
	argc -= optind - 1;
	if (opt == '?' || argc < 3 || (n = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: spawn [-s] [-o FILE] N PROGRAM [ARGS...]\n");
		return 64;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("spawn: fork");
			failed = 1;
			break;
		}
		if (pid == 0) {
			if (out >= 0 && (dup2(out, 1) < 0 || dup2(out, 2) < 0))
				_exit(127);
			execv(argv[2], argv + 2);
			_exit(127);
		}
		if (sequential && waitpid(pid, &status, 0) == pid)
			failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	}
	while (wait(&status) > 0)
		failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (getrusage(RUSAGE_CHILDREN, &children) < 0)
		children.ru_maxrss = 0;
	printf("%.6f %ld\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9,
	       children.ru_maxrss);
	return failed;
}
