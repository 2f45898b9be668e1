/* Go build info in an ELF binary: the file header decoded from a buffer, and
 * a bounded search of the file for the blob Go's linker writes. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the file header says (only the fields we use). */
struct mg_elf_info {
	bool is64, big_endian;
	uint64_t shoff, phoff;
	uint16_t shentsize, phentsize;
	uint32_t shnum, phnum, shstrndx;
};

/* Decodes the ELF file header from the first len bytes of a file (52 are
 * needed for ELFCLASS32, 64 for ELFCLASS64). Pure; offsets and counts are
 * not checked against any file. Returns 0, or -ENOEXEC when b is not an ELF
 * header of a known class and byte order, or is cut short. */
int mg_elf_parse_header(const uint8_t *b, size_t len, struct mg_elf_info *ret);

/* Whether fd (a regular file of file_size bytes, whose first head_len bytes
 * are head) holds Go build info, found the way Go's debug/buildinfo does:
 * the .go.buildinfo section, else the first writable data segment, searched
 * at 16-byte steps in its first 64 KiB. Reads are bounded by the file size;
 * a broken or hostile file is simply not Go. */
bool mg_elf_is_go(int fd, uint64_t file_size, const uint8_t *head, size_t head_len);
