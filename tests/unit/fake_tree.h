/* Test helpers: fake /proc and cgroup trees in a mkdtemp directory,
 * capturing what the library logs to stderr, paused children for fake
 * cgroup.procs files, and checking files with a Python program.
 *
 * Every helper fails the running cmocka test on an unexpected error, so tests
 * can build their trees without checking each step. Include cmocka's
 * prerequisites (stdarg.h, stddef.h, stdint.h, setjmp.h) and cmocka.h before
 * using the ft_assert_* helpers from a test. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct fake_tree {
	char path[PATH_MAX]; /* absolute path of the temp directory */
	int fd;              /* O_DIRECTORY fd for it */
};

/* Creates an empty tree under $TMPDIR (or /tmp). */
void ft_new(struct fake_tree *t);

/* Like ft_new(), on a filesystem that stores user xattrs: $TMPDIR (or /tmp)
 * first, else /dev/shm or /var/tmp. Fails the test (never skips) when none
 * has them, saying that what (a function's name) cannot be tested. */
void ft_new_xattr(struct fake_tree *t, const char *what);

/* Fails the test (never skips) unless trusted.* xattrs can be set and read
 * in the tree t (root on a filesystem that stores them), saying that what
 * cannot be tested. */
void ft_require_trusted_xattr(struct fake_tree *t, const char *what);

/* chown of dirfd/relpath (not following a symlink) to uid, so a fake limit
 * file can belong to a user. */
void ft_chown(int dirfd, const char *relpath, uid_t uid);

/* Sets (value not NULL) or removes the xattr name of the directory
 * dirfd/relpath. */
void ft_set_xattr(int dirfd, const char *relpath, const char *name, const char *value);

/* Removes everything below and including the tree, and closes its fd. Safe on
 * a tree that ft_new() never filled in (fd < 0). */
void ft_free(struct fake_tree *t);

/* cmocka fixtures: *state becomes a fresh struct fake_tree, removed again
 * by ft_teardown() even when the test failed half way. */
int ft_setup(void **state);
int ft_teardown(void **state);

/* mkdir -p of relpath below dirfd. */
void ft_mkdir(int dirfd, const char *relpath);

/* Creates (or truncates) dirfd/relpath with content, making parent dirs. */
void ft_write(int dirfd, const char *relpath, const char *content);

/* Like ft_write() with len bytes that may contain NULs. */
void ft_write_bytes(int dirfd, const char *relpath, const void *data, size_t len);

/* The content of dirfd/relpath as a heap string (the caller frees it), and
 * its length in *ret_len when ret_len is not NULL. Fails the test when the
 * file cannot be read. */
char *ft_read(int dirfd, const char *relpath, size_t *ret_len);

/* True when dirfd/relpath exists (of any type). */
bool ft_exists(int dirfd, const char *relpath);

/* Opens dirfd/relpath as a directory; fails the test when it cannot. */
int ft_open_dir(int dirfd, const char *relpath);

/* Redirects stderr (fd 2) into a temp file until ft_capture_end(), which
 * restores it and returns everything written meanwhile as a heap string. */
struct ft_capture {
	int saved_fd;
	int file_fd;
};
void ft_capture_begin(struct ft_capture *c);
char *ft_capture_end(struct ft_capture *c);

/* Forks a child that blocks in pause() until a signal kills it. Only these
 * pids may ever be listed in a fake cgroup.procs that mg_cg_kill() reads. */
pid_t ft_fork_paused_child(void);

/* Reaps pid, which must have been forked by this test, and returns its raw
 * wait status. Waits at most timeout_ms; a child still alive by then is
 * SIGKILLed and reaped so it never outlives the test, and -1 is returned. */
int ft_reap_child(pid_t pid, int timeout_ms);

/* The children a test forked, by pid, so that its teardown can reap those a
 * failed test left alive. Starts zeroed (a calloc'ed fixture). */
#define FT_MAX_CHILDREN 8
struct ft_children {
	pid_t pid[FT_MAX_CHILDREN]; /* 0: reaped, or never forked */
	size_t n;
};

/* ft_fork_paused_child(), remembered in c. */
pid_t ft_children_fork(struct ft_children *c);

/* Remembers pid, a child the test forked itself some other way. */
void ft_children_add(struct ft_children *c, pid_t pid);

/* ft_reap_child() of one of the children in c, which forgets it. */
int ft_children_reap(struct ft_children *c, pid_t pid, int timeout_ms);

/* Kills and reaps every child c still remembers (only ours, by pid): for a
 * teardown after a test that may have failed half way. */
void ft_children_cleanup(struct ft_children *c);

/* Fails the test unless python3 runs here and has its json module. */
void ft_require_python(void);

/* Runs script, the text of a Python program, on arg (its sys.argv[1]): all
 * it printed to stdout and stderr (at most 64 KiB) as a heap string, and its
 * wait status in *ret_status. Fails the test without python3. */
char *ft_run_python(const char *script, const char *arg, int *ret_status);

/* ft_run_python() that fails the test, printing the output, unless script
 * exits 0 for path; returns the output. */
char *ft_check_python(const char *script, const char *path);

/* The bytes of s as lowercase hex into out (always terminated; cut short
 * when size is too small). */
void ft_hex(const char *s, char *out, size_t size);

/* Fails the test unless haystack contains needle (both printed on failure). */
#define ft_assert_contains(haystack, needle) ft_assert_contains_at((haystack), (needle), __FILE__, __LINE__)
void ft_assert_contains_at(const char *haystack, const char *needle, const char *file, int line);
#define ft_assert_not_contains(haystack, needle)                                                             \
	ft_assert_not_contains_at((haystack), (needle), __FILE__, __LINE__)
void ft_assert_not_contains_at(const char *haystack, const char *needle, const char *file, int line);
