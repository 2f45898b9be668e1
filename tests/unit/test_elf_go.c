/* Go build info in ELF binaries: the header decoder fed truncated and garbage
 * buffers, fake Go binaries written byte by byte (checked directly and
 * through detection), broken headers, and real binaries. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/elf_go.h"
#include "fake_tree.h"
#include "runtime/runtime.h"

#define MIB (UINT64_C(1) << 20)

static struct fake_tree tree = {.fd = -1};

static const char *elf_path(const char *name)
{
	static char buf[PATH_MAX];
	int n = snprintf(buf, sizeof(buf), "%s/%s", tree.path, name);

	assert_true(n > 0 && (size_t)n < sizeof(buf));
	return buf;
}

static enum mg_runtime detect1(const char *prog, const char *path_env, const char **ret_why)
{
	char *argv[] = {(char *)prog, (char *)"input.dat", NULL};

	return mg_runtime_detect(argv, path_env, ret_why);
}

/* mg_elf_is_go() on dirfd/name, fed the file's first bytes as detection
 * reads them. */
static bool is_go_file(int dirfd, const char *name)
{
	uint8_t head[256];
	struct stat st;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	bool go;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	n = pread(fd, head, sizeof(head), 0);
	assert_true(n >= 0);
	go = mg_elf_is_go(fd, (uint64_t)st.st_size, head, (size_t)n);
	assert_int_equal(close(fd), 0);
	return go;
}

static int group_setup(void **state)
{
	(void)state;
	ft_new(&tree);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	ft_free(&tree);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* ELF: fake Go binaries written byte by byte */

struct fake_elf {
	bool is64, big_endian;
	bool sections;   /* a section table with .go.buildinfo (or without, see go_section) */
	bool go_section; /* the table names .go.buildinfo */
	bool segment;    /* a writable PT_LOAD over the data */
	bool magic;      /* the data starts with the Go build info magic */
	uint64_t data_off;
	uint64_t magic_at; /* offset of the magic inside the data */
};

static void put(uint8_t *p, uint64_t v, unsigned size, bool big_endian)
{
	for (unsigned i = 0; i < size; i++)
		p[big_endian ? size - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

static void pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	assert_int_equal(pwrite(fd, buf, len, (off_t)off), (ssize_t)len);
}

static void write_fake_elf(const char *name, const struct fake_elf *f)
{
	static const char shstrtab[] = "\0.shstrtab\0.go.buildinfo\0.text\0.data";
	const bool be = f->big_endian;
	const unsigned ehsize = f->is64 ? 64 : 52, phentsize = f->is64 ? 56 : 32,
	               shentsize = f->is64 ? 64 : 40;
	const uint64_t phoff = ehsize, strtab_off = f->data_off + 0x1000, shoff = f->data_off + 0x1100;
	const uint32_t data_name = f->go_section ? 11 : 31; /* ".go.buildinfo" or ".data" */
	uint8_t eh[64] = {0}, ph[56] = {0}, sh[4][64] = {{0}}, data[256] = {0};
	int fd = openat(tree.fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);

	assert_true(fd >= 0);
	memcpy(eh,
	       "\x7f"
	       "ELF",
	       4);
	eh[4] = f->is64 ? 2 : 1;
	eh[5] = be ? 2 : 1;
	eh[6] = 1;
	put(eh + 16, 2, 2, be); /* ET_EXEC */
	put(eh + 18, f->is64 ? 62 : 3, 2, be);
	put(eh + 20, 1, 4, be);
	if (f->is64) {
		put(eh + 32, f->segment ? phoff : 0, 8, be);
		put(eh + 40, f->sections ? shoff : 0, 8, be);
		put(eh + 52, ehsize, 2, be);
		put(eh + 54, phentsize, 2, be);
		put(eh + 56, f->segment ? 1 : 0, 2, be);
		put(eh + 58, shentsize, 2, be);
		put(eh + 60, f->sections ? 4 : 0, 2, be);
		put(eh + 62, f->sections ? 3 : 0, 2, be);
	} else {
		put(eh + 28, f->segment ? phoff : 0, 4, be);
		put(eh + 32, f->sections ? shoff : 0, 4, be);
		put(eh + 40, ehsize, 2, be);
		put(eh + 42, phentsize, 2, be);
		put(eh + 44, f->segment ? 1 : 0, 2, be);
		put(eh + 46, shentsize, 2, be);
		put(eh + 48, f->sections ? 4 : 0, 2, be);
		put(eh + 50, f->sections ? 3 : 0, 2, be);
	}
	pwrite_all(fd, eh, ehsize, 0);

	if (f->segment) {
		if (f->is64) {
			put(ph, 1, 4, be);     /* PT_LOAD */
			put(ph + 4, 6, 4, be); /* PF_R | PF_W */
			put(ph + 8, f->data_off, 8, be);
			put(ph + 32, sizeof(data), 8, be);
			put(ph + 40, sizeof(data), 8, be);
		} else {
			put(ph, 1, 4, be);
			put(ph + 4, f->data_off, 4, be);
			put(ph + 16, sizeof(data), 4, be);
			put(ph + 20, sizeof(data), 4, be);
			put(ph + 24, 6, 4, be);
		}
		pwrite_all(fd, ph, phentsize, phoff);
	}

	memcpy(data + 100, "filler, not the magic", 21);
	if (f->magic)
		memcpy(data + f->magic_at, "\xff Go buildinf:", 14);
	pwrite_all(fd, data, sizeof(data), f->data_off);

	if (f->sections) {
		/* [0] null, [1] .text, [2] .go.buildinfo or .data, [3] .shstrtab */
		const struct {
			uint32_t name, type;
			uint64_t off, size;
		} s[4] = {{0, 0, 0, 0},
		          {25, 1, ehsize, 16},
		          {data_name, 1, f->data_off, sizeof(data)},
		          {1, 3, strtab_off, sizeof(shstrtab)}};
		for (int i = 0; i < 4; i++) {
			put(sh[i], s[i].name, 4, be);
			put(sh[i] + 4, s[i].type, 4, be);
			if (f->is64) {
				put(sh[i] + 24, s[i].off, 8, be);
				put(sh[i] + 32, s[i].size, 8, be);
			} else {
				put(sh[i] + 16, s[i].off, 4, be);
				put(sh[i] + 20, s[i].size, 4, be);
			}
			pwrite_all(fd, sh[i], shentsize, shoff + (uint64_t)i * shentsize);
		}
		pwrite_all(fd, shstrtab, sizeof(shstrtab), strtab_off);
	}
	assert_int_equal(close(fd), 0);
}

static void test_detect_go_elf(void **state)
{
	static const struct {
		const char *name;
		struct fake_elf elf;
		enum mg_runtime want;
	} cases[] = {
	        {"go64", {true, false, true, true, false, true, 0x2000, 0}, MG_RUNTIME_GO},
	        {"go32be", {false, true, true, true, false, true, 0x2000, 0}, MG_RUNTIME_GO},
	        /* 8 MiB in (a sparse file): past any fixed-size prefix scan. */
	        {"go-far", {true, false, true, true, false, true, 8 * MIB, 0}, MG_RUNTIME_GO},
	        /* No section table (sstrip): the data segment is searched at 16-byte steps. */
	        {"go-nosections", {true, false, false, false, true, true, 0x2000, 48}, MG_RUNTIME_GO},
	        {"go-nosections32", {false, false, false, false, true, true, 0x2000, 32}, MG_RUNTIME_GO},
	        /* Not Go: the section is there but holds something else. */
	        {"fake-section", {true, false, true, true, false, false, 0x2000, 0}, MG_RUNTIME_GENERIC},
	        /* Old layout: no .go.buildinfo section, the blob opens the data segment. */
	        {"go-old-layout", {true, false, true, false, true, true, 0x2000, 0}, MG_RUNTIME_GO},
	        /* Not Go: sections and a data segment, no magic anywhere. */
	        {"c-program", {true, false, true, false, true, false, 0x2000, 0}, MG_RUNTIME_GENERIC},
	        /* Not Go: magic off the 16-byte alignment Go uses. */
	        {"misaligned", {true, false, false, false, true, true, 0x2000, 40}, MG_RUNTIME_GENERIC},
	        /* Not Go: no sections, no segments. */
	        {"bare-elf", {true, false, false, false, false, true, 0x2000, 0}, MG_RUNTIME_GENERIC},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *why = NULL;
		enum mg_runtime rt;

		write_fake_elf(cases[i].name, &cases[i].elf);
		rt = detect1(elf_path(cases[i].name), NULL, &why);
		if (rt != cases[i].want)
			fail_msg("%s: got %s, want %s (%s)", cases[i].name, mg_runtime_name(rt),
			         mg_runtime_name(cases[i].want), why);
		if (rt == MG_RUNTIME_GO)
			assert_non_null(strstr(why, "Go build info in "));
		if (is_go_file(tree.fd, cases[i].name) != (cases[i].want == MG_RUNTIME_GO))
			fail_msg("%s: mg_elf_is_go disagrees with detection", cases[i].name);
	}
}

static void test_detect_broken_elf(void **state)
{
	uint8_t buf[128] = {0};
	const char *why = NULL;

	(void)state;
	/* Just the ident. */
	ft_write_bytes(tree.fd, "elf-ident",
	               "\x7f"
	               "ELF\x02\x01\x01",
	               7);
	assert_int_equal(detect1(elf_path("elf-ident"), NULL, &why), MG_RUNTIME_GENERIC);
	assert_false(is_go_file(tree.fd, "elf-ident"));
	/* A header whose tables point far past the end of the file. */
	memcpy(buf,
	       "\x7f"
	       "ELF\x02\x01\x01",
	       7);
	put(buf + 32, UINT64_C(0x7fffffffffff0000), 8, false); /* phoff */
	put(buf + 40, UINT64_MAX - 10, 8, false);              /* shoff */
	put(buf + 54, 56, 2, false);
	put(buf + 56, 1, 2, false);
	put(buf + 58, 64, 2, false);
	put(buf + 60, 0xffff, 2, false);
	put(buf + 62, 0xfffe, 2, false);
	ft_write_bytes(tree.fd, "elf-wild", buf, sizeof(buf));
	assert_int_equal(detect1(elf_path("elf-wild"), NULL, &why), MG_RUNTIME_GENERIC);
	assert_false(is_go_file(tree.fd, "elf-wild"));
	/* Extended numbering (shnum 0, shstrndx in section 0) with a table
	 * that runs past the end of the file. */
	put(buf + 32, 0, 8, false);
	put(buf + 40, 64, 8, false);
	put(buf + 60, 0, 2, false);
	put(buf + 62, 0xffff, 2, false);
	put(buf + 64 + 32, 3, 8, false); /* section 0 sh_size: 3 sections */
	put(buf + 64 + 40, 2, 4, false); /* section 0 sh_link: shstrndx 2 */
	ft_write_bytes(tree.fd, "elf-xnum", buf, sizeof(buf));
	assert_int_equal(detect1(elf_path("elf-xnum"), NULL, &why), MG_RUNTIME_GENERIC);
	assert_false(is_go_file(tree.fd, "elf-xnum"));
	/* A bad class byte. */
	buf[4] = 9;
	ft_write_bytes(tree.fd, "elf-class", buf, sizeof(buf));
	assert_int_equal(detect1(elf_path("elf-class"), NULL, &why), MG_RUNTIME_GENERIC);
	assert_false(is_go_file(tree.fd, "elf-class"));
}

static void test_detect_real_binaries(void **state)
{
	static const char *const go_binaries[] = {"/usr/lib/go/bin/gofmt", "/usr/lib/go/bin/go",
	                                          "/usr/local/go/bin/gofmt"};
	const char *why = NULL;

	(void)state;
	/* /bin/true: a real ELF, not Go. */
	assert_int_equal(detect1("/bin/true", NULL, &why), MG_RUNTIME_GENERIC);
	assert_string_equal(why, "no runtime known for true");
	assert_false(is_go_file(AT_FDCWD, "/bin/true"));
	assert_int_equal(detect1("true", "/nonexistent:/usr/bin:/bin", &why), MG_RUNTIME_GENERIC);
	assert_string_equal(why, "no runtime known for true");

	for (size_t i = 0; i < sizeof(go_binaries) / sizeof(go_binaries[0]); i++) {
		if (access(go_binaries[i], X_OK) != 0)
			continue;
		assert_int_equal(detect1(go_binaries[i], NULL, &why), MG_RUNTIME_GO);
		assert_non_null(strstr(why, "Go build info in "));
		assert_true(is_go_file(AT_FDCWD, go_binaries[i]));
		return;
	}
	fail_msg("no Go binary found (golang-go, a test dependency, ships gofmt)");
}

/* ---------------------------------------------------------------------- */
/* The file header alone */

/* A valid ELFCLASS64 little-endian or ELFCLASS32 big-endian header with
 * distinct values in every field the decoder reads. */
static void make_header(uint8_t *b, bool is64, bool big_endian)
{
	memset(b, 0, 64);
	memcpy(b,
	       "\x7f"
	       "ELF",
	       4);
	b[4] = is64 ? 2 : 1;
	b[5] = big_endian ? 2 : 1;
	b[6] = 1;
	if (is64) {
		put(b + 32, UINT64_C(0x1122334455667788), 8, big_endian); /* phoff */
		put(b + 40, UINT64_C(0x0102030405060708), 8, big_endian); /* shoff */
		put(b + 54, 56, 2, big_endian);
		put(b + 56, 7, 2, big_endian);
		put(b + 58, 64, 2, big_endian);
		put(b + 60, 0xabcd, 2, big_endian);
		put(b + 62, 0x1234, 2, big_endian);
	} else {
		put(b + 28, 0x11223344, 4, big_endian);
		put(b + 32, 0x01020304, 4, big_endian);
		put(b + 42, 32, 2, big_endian);
		put(b + 44, 7, 2, big_endian);
		put(b + 46, 40, 2, big_endian);
		put(b + 48, 0xabcd, 2, big_endian);
		put(b + 50, 0x1234, 2, big_endian);
	}
}

static void test_elf_parse_header(void **state)
{
	static const struct {
		const char *what;
		bool is64, big_endian;
		size_t len;   /* bytes handed to the decoder */
		int at;       /* byte to overwrite, or -1 */
		uint8_t byte; /* its new value */
		int want;
	} cases[] = {
	        {"64 LE", true, false, 64, -1, 0, 0},
	        {"64 BE", true, true, 64, -1, 0, 0},
	        {"32 LE", false, false, 52, -1, 0, 0},
	        {"32 BE", false, true, 64, -1, 0, 0},
	        /* Cut short: 52 bytes are too few for ELFCLASS64, 51 for anything. */
	        {"64 cut to 63", true, false, 63, -1, 0, -ENOEXEC},
	        {"64 cut to 52", true, false, 52, -1, 0, -ENOEXEC},
	        {"32 cut to 51", false, false, 51, -1, 0, -ENOEXEC},
	        {"ident only", true, false, 16, -1, 0, -ENOEXEC},
	        {"magic only", true, false, 4, -1, 0, -ENOEXEC},
	        {"empty", true, false, 0, -1, 0, -ENOEXEC},
	        /* Garbage where the decoder looks first. */
	        {"bad magic", true, false, 64, 1, 'e', -ENOEXEC},
	        {"no magic", true, false, 64, 0, '#', -ENOEXEC},
	        {"class 0", true, false, 64, 4, 0, -ENOEXEC},
	        {"class 3", true, false, 64, 4, 3, -ENOEXEC},
	        {"data 0", true, false, 64, 5, 0, -ENOEXEC},
	        {"data 0xff", true, false, 64, 5, 0xff, -ENOEXEC},
	        /* Bytes the decoder does not read do not matter. */
	        {"odd version", true, false, 64, 6, 0xff, 0},
	        {"odd type", false, false, 52, 16, 0xff, 0},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t b[64];
		struct mg_elf_info e;
		int r;

		make_header(b, cases[i].is64, cases[i].big_endian);
		if (cases[i].at >= 0)
			b[cases[i].at] = cases[i].byte;
		memset(&e, 0x5a, sizeof(e));
		r = mg_elf_parse_header(b, cases[i].len, &e);
		if (r != cases[i].want)
			fail_msg("%s: got %d, want %d", cases[i].what, r, cases[i].want);
		if (r < 0)
			continue;
		assert_int_equal(e.is64, cases[i].is64);
		assert_int_equal(e.big_endian, cases[i].big_endian);
		assert_int_equal(e.phoff, cases[i].is64 ? UINT64_C(0x1122334455667788) : 0x11223344);
		assert_int_equal(e.shoff, cases[i].is64 ? UINT64_C(0x0102030405060708) : 0x01020304);
		assert_int_equal(e.phentsize, cases[i].is64 ? 56 : 32);
		assert_int_equal(e.shentsize, cases[i].is64 ? 64 : 40);
		assert_int_equal(e.phnum, 7);
		assert_int_equal(e.shnum, 0xabcd);
		assert_int_equal(e.shstrndx, 0x1234);
	}
}

static void test_elf_parse_header_garbage(void **state)
{
	/* Pseudo-random buffers of every length up to 80: only those that
	 * happen to carry the magic and valid class and data bytes decode. */
	uint8_t b[80];
	uint32_t x = 12345;

	(void)state;
	for (int round = 0; round < 2000; round++) {
		size_t len = (size_t)round % (sizeof(b) + 1);
		struct mg_elf_info e;
		bool valid;

		for (size_t i = 0; i < sizeof(b); i++) {
			x = x * 1103515245u + 12345u;
			b[i] = (uint8_t)(x >> 16);
		}
		if (round % 2) /* half of them open like an ELF file */
			memcpy(b,
			       "\x7f"
			       "ELF",
			       4);
		valid = len >= 52 &&
		        memcmp(b,
		               "\x7f"
		               "ELF",
		               4) == 0 &&
		        (b[4] == 1 || (b[4] == 2 && len >= 64)) && (b[5] == 1 || b[5] == 2);
		assert_int_equal(mg_elf_parse_header(b, len, &e), valid ? 0 : -ENOEXEC);
	}
}

static void test_elf_is_go_hostile(void **state)
{
	struct fake_elf go = {true, false, true, true, false, true, 0x2000, 0};
	uint8_t head[256], *prefix = malloc(0x2000);
	struct stat st;
	uint64_t size;
	ssize_t n;
	int fd;

	(void)state;
	assert_non_null(prefix);
	write_fake_elf("go-real", &go);
	fd = openat(tree.fd, "go-real", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	size = (uint64_t)st.st_size;
	n = pread(fd, head, sizeof(head), 0);
	assert_true(n >= 64);
	/* The file as it is: Go. */
	assert_true(mg_elf_is_go(fd, size, head, (size_t)n));
	/* A head that is not the file's own, or none. */
	assert_false(mg_elf_is_go(fd, size, head, 0));
	assert_false(mg_elf_is_go(fd, size, head, 40));
	assert_false(mg_elf_is_go(fd, size, (const uint8_t *)"#!/bin/sh\n", 10));
	/* A file size that ends before the tables: nothing is read past it. */
	assert_false(mg_elf_is_go(fd, 64, head, (size_t)n));
	assert_false(mg_elf_is_go(fd, 0, head, (size_t)n));
	/* The same file cut before its data and tables, with a size that
	 * claims they are there: the short reads are no match. */
	assert_int_equal(pread(fd, prefix, 0x2000, 0), 0x2000);
	assert_int_equal(close(fd), 0);
	ft_write_bytes(tree.fd, "go-cut", prefix, 0x2000);
	free(prefix);
	fd = openat(tree.fd, "go-cut", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_false(mg_elf_is_go(fd, size, head, (size_t)n));
	assert_int_equal(close(fd), 0);
	/* No file behind the header at all. */
	assert_false(mg_elf_is_go(-1, size, head, (size_t)n));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_elf_parse_header),  cmocka_unit_test(test_elf_parse_header_garbage),
	        cmocka_unit_test(test_elf_is_go_hostile), cmocka_unit_test(test_detect_go_elf),
	        cmocka_unit_test(test_detect_broken_elf), cmocka_unit_test(test_detect_real_binaries),
	};

	return cmocka_run_group_tests_name("elf_go", tests, group_setup, group_teardown);
}
