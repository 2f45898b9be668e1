/* The launcher's first process, when memguardd places the run: it stays in
 * the cgroup it was started in, where the batch system tracks it (Slurm
 * signals and accounts only the processes directly in the cgroups it made),
 * and a child goes on as the launcher, which memguardd moves into the run.
 * The first process relays signals to that child and ends as it ends. */
#pragma once

/* Forks. In the child, returns the write end of a pipe on which to name the
 * run's cgroup (mg_relay_tell_run) once it is placed. The parent never
 * returns: it relays SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
 * SIGTSTP (and then stops itself, as SIGTSTP's default would) and SIGCONT
 * to the child, waits for it, waits for memguardd to remove the run's cgroup
 * (for as long as a memguardd runs), so the batch system's cleanup finds
 * nothing of it, and exits with the child's status, or dies by its signal.
 * Returns -errno when it cannot fork: the caller then goes on in one
 * process. */
int mg_relay_fork(void);

/* In the child: the run's cgroup is path (absolute). Closes fd. */
void mg_relay_tell_run(int fd, const char *path);
