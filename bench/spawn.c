/* spawn: plain fork+exec, the baseline of the start-up costs.
 *   spawn [-s] N PROGRAM [ARGS...]
 * Starts N copies of PROGRAM at once with fork() and execv(), waits for all,
 * and prints the wall time in seconds. With -s, one after another: each copy
 * is waited for before the next starts. Exits 1 when a copy failed. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec a, b;
	int status, failed = 0, sequential = 0;
	long n;

	if (argc > 1 && strcmp(argv[1], "-s") == 0) {
		sequential = 1;
		argv++;
		argc--;
	}
	if (argc < 3 || (n = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: spawn [-s] N PROGRAM [ARGS...]\n");
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
			execv(argv[2], argv + 2);
			_exit(127);
		}
		if (sequential && waitpid(pid, &status, 0) == pid)
			failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	}
	while (wait(&status) > 0)
		failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.6f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	return failed;
}
