/* Go build info detection in ELF binaries, with bounded reads (see elf_go.h). */
#include "runtime/elf_go.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/chars.h"
#include "memguard/util.h"

/* The 14-byte magic that opens the Go build info blob (debug/buildinfo). */
static const char go_buildinfo_magic[] = "\xff Go buildinf:";
#define GO_BUILDINFO_MAGIC_LEN 14
/* debug/buildinfo looks this far into the data segment, at this alignment. */
#define GO_BUILDINFO_SEARCH (UINT64_C(64) * 1024)
#define GO_BUILDINFO_ALIGN 16

#define ELF_SHN_XINDEX 0xffffu
#define ELF_SHT_NOBITS 8u
#define ELF_PT_LOAD 1u
#define ELF_PF_X 1u
#define ELF_PF_W 2u
/* Bounds on what a well-formed executable has; anything past is junk. */
#define ELF_SECTIONS_MAX 4096u
#define ELF_SEGMENTS_MAX 1024u
#define ELF_SHSTRTAB_MAX (UINT64_C(256) * 1024)

static uint64_t elf_get(const struct mg_elf_info *e, const uint8_t *p, unsigned size)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < size; i++) {
		unsigned shift = 8 * (e->big_endian ? size - 1 - i : i);
		v |= (uint64_t)p[i] << shift;
	}
	return v;
}

int mg_elf_parse_header(const uint8_t *b, size_t len, struct mg_elf_info *ret)
{
	if (len < 52 || memcmp(b,
	                       "\x7f"
	                       "ELF",
	                       4) != 0)
		return -ENOEXEC;
	if ((b[4] != 1 && b[4] != 2) || (b[5] != 1 && b[5] != 2))
		return -ENOEXEC;
	ret->is64 = b[4] == 2;
	ret->big_endian = b[5] == 2;
	/* ELF32 and ELF64 headers differ only in where the fields sit: the two
	 * offsets are words (4 or 8 bytes), then five 2-byte fields in a row. */
	static const struct {
		unsigned word, phoff, shoff, halves, size;
	} at[2] = {{4, 28, 32, 42, 52}, {8, 32, 40, 54, 64}};
	unsigned f = ret->is64;
	if (len < at[f].size)
		return -ENOEXEC;
	ret->phoff = elf_get(ret, b + at[f].phoff, at[f].word);
	ret->shoff = elf_get(ret, b + at[f].shoff, at[f].word);
	ret->phentsize = (uint16_t)elf_get(ret, b + at[f].halves, 2);
	ret->phnum = (uint32_t)elf_get(ret, b + at[f].halves + 2, 2);
	ret->shentsize = (uint16_t)elf_get(ret, b + at[f].halves + 4, 2);
	ret->shnum = (uint32_t)elf_get(ret, b + at[f].halves + 6, 2);
	ret->shstrndx = (uint32_t)elf_get(ret, b + at[f].halves + 8, 2);
	return 0;
}

struct elf_section {
	uint32_t name, type, link;
	uint64_t offset, size;
};

static void elf_parse_section(const struct mg_elf_info *e, const uint8_t *b, struct elf_section *ret)
{
	ret->name = (uint32_t)elf_get(e, b, 4);
	ret->type = (uint32_t)elf_get(e, b + 4, 4);
	if (e->is64) {
		ret->offset = elf_get(e, b + 24, 8);
		ret->size = elf_get(e, b + 32, 8);
		ret->link = (uint32_t)elf_get(e, b + 40, 4);
	} else {
		ret->offset = elf_get(e, b + 16, 4);
		ret->size = elf_get(e, b + 20, 4);
		ret->link = (uint32_t)elf_get(e, b + 24, 4);
	}
}

/* Finds the magic at GO_BUILDINFO_ALIGN alignment, as debug/buildinfo does. */
static bool find_go_magic(const uint8_t *b, size_t len)
{
	for (size_t off = 0; off + GO_BUILDINFO_MAGIC_LEN <= len; off += GO_BUILDINFO_ALIGN)
		if (memcmp(b + off, go_buildinfo_magic, GO_BUILDINFO_MAGIC_LEN) == 0)
			return true;
	return false;
}

/* pread of exactly len bytes inside a file of file_size; -EIO otherwise. */
static int read_exact_at(int fd, uint64_t file_size, uint64_t off, void *buf, size_t len)
{
	size_t done = 0;

	if (off > file_size || len > file_size - off || off > (uint64_t)INT64_MAX)
		return -EIO;
	while (done < len) {
		ssize_t n = pread(fd, (uint8_t *)buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

/* The file offset of the ".go.buildinfo" section, via the section table: a
 * handful of small reads wherever it lies (in a 10 MiB go binary it is
 * 9.9 MiB in, past any fixed-size prefix scan). Returns 1 (found), 0 (no
 * such section), -errno (no usable section table). */
static int elf_buildinfo_section(int fd, uint64_t file_size, const struct mg_elf_info *e,
                                 uint64_t *ret_offset)
{
	size_t entsize = e->is64 ? 64 : 40;
	uint32_t shnum = e->shnum, shstrndx = e->shstrndx;
	uint8_t sh[64];
	struct elf_section sec, strtab;
	_cleanup_free_ char *names = NULL;
	_cleanup_free_ uint8_t *table = NULL;
	int r;

	if (e->shoff == 0 || e->shentsize != entsize)
		return -ENOEXEC;
	if (shnum == 0 || shstrndx == ELF_SHN_XINDEX) {
		/* Extended numbering: the real values live in section 0. */
		r = read_exact_at(fd, file_size, e->shoff, sh, entsize);
		if (r < 0)
			return r;
		elf_parse_section(e, sh, &sec);
		if (shnum == 0)
			shnum = sec.size > ELF_SECTIONS_MAX ? ELF_SECTIONS_MAX + 1 : (uint32_t)sec.size;
		if (shstrndx == ELF_SHN_XINDEX)
			shstrndx = sec.link;
	}
	if (shnum == 0 || shnum > ELF_SECTIONS_MAX || shstrndx >= shnum)
		return -ENOEXEC;
	table = malloc(shnum * entsize);
	if (!table)
		return -ENOMEM;
	r = read_exact_at(fd, file_size, e->shoff, table, shnum * entsize);
	if (r < 0)
		return r;
	elf_parse_section(e, table + (size_t)shstrndx * entsize, &strtab);
	if (strtab.type == ELF_SHT_NOBITS || strtab.size == 0 || strtab.size > ELF_SHSTRTAB_MAX)
		return -ENOEXEC;
	names = malloc(strtab.size + 1);
	if (!names)
		return -ENOMEM;
	r = read_exact_at(fd, file_size, strtab.offset, names, strtab.size);
	if (r < 0)
		return r;
	names[strtab.size] = '\0';

	for (uint32_t i = 0; i < shnum; i++) {
		elf_parse_section(e, table + (size_t)i * entsize, &sec);
		if (sec.name < strtab.size && streq(names + sec.name, ".go.buildinfo") &&
		    sec.type != ELF_SHT_NOBITS) {
			*ret_offset = sec.offset;
			return 1;
		}
	}
	return 0;
}

/* The first writable, non-executable PT_LOAD: where the Go linker puts the
 * build info when a binary has no section table (sstrip). Returns 1 and its
 * file offset and size, or 0. */
static int elf_data_segment(int fd, uint64_t file_size, const struct mg_elf_info *e, uint64_t *ret_offset,
                            uint64_t *ret_size)
{
	size_t entsize = e->is64 ? 56 : 32;
	uint8_t ph[56];

	if (e->phoff == 0 || e->phentsize != entsize || e->phnum == 0 || e->phnum > ELF_SEGMENTS_MAX)
		return 0;
	for (uint32_t i = 0; i < e->phnum; i++) {
		uint64_t type, flags;

		if (read_exact_at(fd, file_size, e->phoff + (uint64_t)i * entsize, ph, entsize) < 0)
			return 0;
		type = elf_get(e, ph, 4);
		flags = elf_get(e, ph + (e->is64 ? 4 : 24), 4);
		if (type != ELF_PT_LOAD || (flags & (ELF_PF_X | ELF_PF_W)) != ELF_PF_W)
			continue;
		*ret_offset = elf_get(e, ph + (e->is64 ? 8 : 4), e->is64 ? 8 : 4);
		*ret_size = elf_get(e, ph + (e->is64 ? 32 : 16), e->is64 ? 8 : 4);
		return 1;
	}
	return 0;
}

bool mg_elf_is_go(int fd, uint64_t file_size, const uint8_t *head, size_t head_len)
{
	_cleanup_free_ uint8_t *data = NULL;
	struct mg_elf_info e;
	uint64_t offset = 0, size = GO_BUILDINFO_SEARCH;
	size_t len;

	if (mg_elf_parse_header(head, head_len, &e) < 0)
		return false;
	if (elf_buildinfo_section(fd, file_size, &e, &offset) <= 0 &&
	    elf_data_segment(fd, file_size, &e, &offset, &size) <= 0)
		return false;
	if (offset >= file_size)
		return false;
	len = (size_t)(size < GO_BUILDINFO_SEARCH ? size : GO_BUILDINFO_SEARCH);
	if (len > file_size - offset)
		len = (size_t)(file_size - offset);
	data = malloc(len ? len : 1);
	if (!data || read_exact_at(fd, file_size, offset, data, len) < 0)
		return false;
	return find_go_magic(data, len);
}
