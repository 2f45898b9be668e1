/* libFuzzer target: ELF headers and Go build info (launcher/runtime/elf_go.h). The
 * input is the whole file, served from a memfd as detection reads it. */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/elf_go.h"
#include "fuzz.h"
#include "memguard/util.h"

static int memfd = -1;

/* What mg_runtime_detect hands over: the file's first bytes. */
#define HEAD_LEN 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mg_elf_info e;
	size_t head_len = size < HEAD_LEN ? size : HEAD_LEN;
	int r;

	if (memfd < 0) {
		memfd = memfd_create("fuzz_elf", MFD_CLOEXEC);
		check(memfd >= 0, "memfd_create", "");
	}
	check(ftruncate(memfd, 0) == 0 && (size == 0 || pwrite(memfd, data, size, 0) == (ssize_t)size),
	      "writing the memfd", "");

	r = mg_elf_parse_header(data, size, &e);
	check(r == 0 || r == -ENOEXEC, "mg_elf_parse_header fails with -ENOEXEC", "");
	if (r == 0) {
		check(size >= (e.is64 ? 64u : 52u) && memcmp(data,
		                                             "\x7f"
		                                             "ELF",
		                                             4) == 0,
		      "a header is long enough and starts with \\x7fELF", "");
		check(e.is64 == (data[4] == 2) && e.big_endian == (data[5] == 2), "class and byte order", "");
		check(e.phnum <= 0xffff && e.shnum <= 0xffff && e.shstrndx <= 0xffff,
		      "counts are 16-bit fields", "");
	}
	if (mg_elf_is_go(memfd, size, data, head_len)) {
		check(r == 0, "a Go binary has an ELF header", "");
		check(memmem(data, size, "\xff Go buildinf:", 14) != NULL, "a Go binary holds the magic", "");
	}
	/* A short head (a file cut short while read) is never Go. */
	check(!mg_elf_is_go(memfd, size, data, head_len < 52 ? head_len : 51), "51 bytes are no header", "");
	return 0;
}
