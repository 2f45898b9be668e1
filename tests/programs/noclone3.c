/* noclone3: runs a command on which clone3 fails, as before 5.7 or under a
 * container runtime's seccomp filter.
 *   noclone3 ENOSYS|EPERM CMD [ARGS...]
 * Installs a seccomp filter that answers every clone3 with that errno (the
 * command and all it starts inherit it), proves that it does, then execs CMD.
 * No kernel from 5.10 up lacks clone3 and CLONE_INTO_CGROUP: this is how the
 * tests run memguard's fallback (fork, then a write to cgroup.procs) on them.
 * Exits 125 when the filter cannot be installed or does not work. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "noclone3: no seccomp architecture for this target"
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif

static int deny_clone3(int err)
{
	struct sock_filter prog[] = {
	        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
	        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
	        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
	        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fprog = {.len = sizeof(prog) / sizeof(prog[0]), .filter = prog};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) < 0)
		return -errno;
	return 0;
}

int main(int argc, char **argv)
{
	int err, r;

	if (argc < 3 || (strcmp(argv[1], "ENOSYS") != 0 && strcmp(argv[1], "EPERM") != 0)) {
		fprintf(stderr, "usage: noclone3 ENOSYS|EPERM CMD [ARGS...]\n");
		return 125;
	}
	err = strcmp(argv[1], "ENOSYS") == 0 ? ENOSYS : EPERM;
	if ((r = deny_clone3(err)) < 0) {
		fprintf(stderr, "noclone3: install the seccomp filter: %s\n", strerror(-r));
		return 125;
	}
	/* Without the filter, a size of 0 is EINVAL: only the filter answers err. */
	if (syscall(SYS_clone3, NULL, 0) != -1 || errno != err) {
		fprintf(stderr, "noclone3: clone3 still reaches the kernel (%s)\n", strerror(errno));
		return 125;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "noclone3: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
