/* devprog: attaches a device program (BPF_CGROUP_DEVICE) to a cgroup, as
 * Slurm's ConstrainDevices and systemd's DeviceAllow= do, or lists those on
 * one, for the placement tests.
 *   devprog attach CGROUP deny-major:N [multi|override|none]
 *       a program that refuses every device of major N and allows the rest;
 *       the attach flags (default multi: BPF_F_ALLOW_MULTI)
 *   devprog query CGROUP [effective]
 *       one line: the attach flags, then each program's tag in hex
 * Exits 0, 1 when the kernel refuses, 2 on bad usage. */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return (int)syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

static int attach(int cg, unsigned major, unsigned flags)
{
	/* struct bpf_cgroup_dev_ctx { u32 access_type; u32 major; u32 minor; } in r1. */
	struct bpf_insn prog[] = {
	        {.code = BPF_LDX | BPF_W | BPF_MEM, .dst_reg = 2, .src_reg = 1, .off = 4},
	        {.code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = 2, .off = 2, .imm = (int32_t)major},
	        {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 1},
	        {.code = BPF_JMP | BPF_EXIT},
	        {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0},
	        {.code = BPF_JMP | BPF_EXIT},
	};
	static char log[4096];
	union bpf_attr attr = {0};

	attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	attr.insns = (uint64_t)(uintptr_t)prog;
	attr.insn_cnt = sizeof(prog) / sizeof(prog[0]);
	attr.license = (uint64_t)(uintptr_t) "GPL";
	attr.log_buf = (uint64_t)(uintptr_t)log;
	attr.log_size = sizeof(log);
	attr.log_level = 1;
	int fd = sys_bpf(BPF_PROG_LOAD, &attr);
	if (fd < 0) {
		fprintf(stderr, "devprog: load: %s\n%s", strerror(errno), log);
		return 1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.target_fd = (uint32_t)cg;
	attr.attach_bpf_fd = (uint32_t)fd;
	attr.attach_type = BPF_CGROUP_DEVICE;
	attr.attach_flags = flags;
	if (sys_bpf(BPF_PROG_ATTACH, &attr) < 0) {
		fprintf(stderr, "devprog: attach: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

static int query(int cg, int effective)
{
	uint32_t ids[64];
	union bpf_attr attr = {0};

	attr.query.target_fd = (uint32_t)cg;
	attr.query.attach_type = BPF_CGROUP_DEVICE;
	attr.query.query_flags = effective ? BPF_F_QUERY_EFFECTIVE : 0;
	attr.query.prog_ids = (uint64_t)(uintptr_t)ids;
	attr.query.prog_cnt = 64;
	if (sys_bpf(BPF_PROG_QUERY, &attr) < 0) {
		fprintf(stderr, "devprog: query: %s\n", strerror(errno));
		return 1;
	}
	printf("flags=%u", attr.query.attach_flags);
	for (uint32_t i = 0; i < attr.query.prog_cnt && i < 64; i++) {
		union bpf_attr a = {.prog_id = ids[i]};
		struct bpf_prog_info info = {0};
		int fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
		memset(&a, 0, sizeof(a));
		a.info.bpf_fd = (uint32_t)fd;
		a.info.info_len = sizeof(info);
		a.info.info = (uint64_t)(uintptr_t)&info;
		if (fd < 0 || sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) < 0) {
			fprintf(stderr, "devprog: program %u: %s\n", ids[i], strerror(errno));
			return 1;
		}
		printf(" ");
		for (int k = 0; k < 8; k++)
			printf("%02x", info.tag[k]);
		close(fd);
	}
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	unsigned major, flags = BPF_F_ALLOW_MULTI;
	int cg = argc > 2 ? open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

	if (argc > 2 && cg < 0) {
		fprintf(stderr, "devprog: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	if (argc >= 4 && strcmp(argv[1], "attach") == 0 && sscanf(argv[3], "deny-major:%u", &major) == 1) {
		if (argc > 4)
			flags = strcmp(argv[4], "override") == 0 ? BPF_F_ALLOW_OVERRIDE
			        : strcmp(argv[4], "none") == 0   ? 0
			                                         : BPF_F_ALLOW_MULTI;
		return attach(cg, major, flags);
	}
	if (argc >= 3 && strcmp(argv[1], "query") == 0)
		return query(cg, argc > 3 && strcmp(argv[3], "effective") == 0);
	fprintf(stderr, "usage: devprog attach CGROUP deny-major:N [multi|override|none] | query CGROUP "
	                "[effective]\n");
	return 2;
}
