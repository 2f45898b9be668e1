/* Heap flags: the cap each runtime gets for a share, and the settings that
 * carry it, never overriding what the user set. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "runtime/cmdline.h"
#include "runtime/runtime.h"

#define MIB (UINT64_C(1) << 20)
#define GIB (UINT64_C(1) << 30)

static void test_heap_cap(void **state)
{
	static const struct {
		enum mg_runtime rt;
		uint64_t share, want;
	} cases[] = {
	        /* The two reference shares (see docs/runtimes.md). */
	        {MG_RUNTIME_PYPY, 256 * MIB, 160 * MIB},
	        {MG_RUNTIME_PYPY, 4 * GIB, 3760 * MIB},
	        {MG_RUNTIME_JVM, 256 * MIB, 144 * MIB},
	        {MG_RUNTIME_JVM, 4 * GIB, 3024 * MIB},
	        {MG_RUNTIME_GO, 256 * MIB, 214 * MIB},
	        {MG_RUNTIME_GO, 4 * GIB, 3670 * MIB},
	        {MG_RUNTIME_NODE, 256 * MIB, 96 * MIB},
	        {MG_RUNTIME_NODE, 4 * GIB, 2976 * MIB},
	        {MG_RUNTIME_DOTNET, 256 * MIB, 160 * MIB},
	        {MG_RUNTIME_DOTNET, 4 * GIB, 3040 * MIB},
	        {MG_RUNTIME_R, 256 * MIB, 160 * MIB},
	        {MG_RUNTIME_R, 4 * GIB, 3520 * MIB},
	        /* Small VM shares: the floor (a quarter of the share) takes over. */
	        {MG_RUNTIME_PYPY, 128 * MIB, 40 * MIB},
	        {MG_RUNTIME_PYPY, 200 * MIB, 107 * MIB},
	        {MG_RUNTIME_NODE, 128 * MIB, 32 * MIB},
	        {MG_RUNTIME_JVM, 100 * MIB, 27 * MIB},
	        {MG_RUNTIME_JVM, 64 * MIB, 16 * MIB},
	        {MG_RUNTIME_R, 64 * MIB, 16 * MIB},
	        /* Below the runtime's minimum the share itself is the cap. */
	        {MG_RUNTIME_GO, 8 * MIB, 8 * MIB},
	        {MG_RUNTIME_DOTNET, 16 * MIB, 16 * MIB},
	        {MG_RUNTIME_DOTNET, 40 * MIB, 20 * MIB},
	        {MG_RUNTIME_JVM, 512 * 1024, 0},
	        /* Big shares stay exact. */
	        {MG_RUNTIME_JVM, 1024 * GIB, 786384 * MIB},
	        /* No cap: runtimes without a heap flag, no share, no real limit. */
	        {MG_RUNTIME_GENERIC, 4 * GIB, 0},
	        {MG_RUNTIME_CPYTHON, 4 * GIB, 0},
	        {MG_RUNTIME_JVM, 0, 0},
	        {MG_RUNTIME_JVM, UINT64_MAX, 0},
	        {MG_RUNTIME_PYPY, UINT64_C(1) << 50, 0},
	        {MG_RUNTIME__COUNT, 4 * GIB, 0},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t cap = mg_heap_cap(cases[i].rt, cases[i].share);
		if (cap != cases[i].want)
			fail_msg("cap(%s, %" PRIu64 ") = %" PRIu64 ", want %" PRIu64,
			         mg_runtime_name(cases[i].rt), cases[i].share, cap, cases[i].want);
		/* Whole MiB, never above the share. */
		assert_int_equal(cap % MIB, 0);
		assert_true(cap <= cases[i].share);
	}
}

static void test_heap_cap_monotonic(void **state)
{
	(void)state;
	for (int rt = MG_RUNTIME_PYPY; rt < MG_RUNTIME__COUNT; rt++) {
		uint64_t prev = 0;
		for (uint64_t share = 1 * MIB; share <= 64 * GIB; share += share / 8 + MIB) {
			uint64_t cap = mg_heap_cap((enum mg_runtime)rt, share);
			if (share / 4 >= MIB)
				assert_true(cap >= share / 4 - MIB);
			if (cap < prev)
				fail_msg("%s: cap drops at share %" PRIu64,
				         mg_runtime_name((enum mg_runtime)rt), share);
			assert_true(cap <= share);
			prev = cap;
		}
	}
}

struct heap_case {
	const char *what;
	enum mg_runtime rt;
	uint64_t share;
	const char *envp[8];
	const char *argv[12];
	struct {
		const char *name, *value;
	} want[MG_HEAP_SETTINGS_MAX];
};

static const struct heap_case heap_cases[] = {
        /* Each runtime at both reference shares, nothing set by the user. */
        {"pypy 256M",
         MG_RUNTIME_PYPY,
         256 * MIB,
         {"HOME=/root"},
         {"pypy3", "sim.py"},
         {{"PYPY_GC_MAX", "160MB"}}},
        {"pypy 4G", MG_RUNTIME_PYPY, 4 * GIB, {NULL}, {"pypy3"}, {{"PYPY_GC_MAX", "3760MB"}}},
        {"jvm 256M",
         MG_RUNTIME_JVM,
         256 * MIB,
         {NULL},
         {"java", "-jar", "a.jar"},
         {{"JAVA_TOOL_OPTIONS", "-Xmx144m"}, {"MALLOC_ARENA_MAX", "4"}}},
        {"jvm 4G",
         MG_RUNTIME_JVM,
         4 * GIB,
         {NULL},
         {"java", "Main"},
         {{"JAVA_TOOL_OPTIONS", "-Xmx3024m"}, {"MALLOC_ARENA_MAX", "4"}}},
        {"go 256M", MG_RUNTIME_GO, 256 * MIB, {NULL}, {"./sim"}, {{"GOMEMLIMIT", "214MiB"}}},
        {"go 4G", MG_RUNTIME_GO, 4 * GIB, {NULL}, {"go", "run", "."}, {{"GOMEMLIMIT", "3670MiB"}}},
        {"node 256M",
         MG_RUNTIME_NODE,
         256 * MIB,
         {NULL},
         {"node", "app.js"},
         {{"NODE_OPTIONS", "--max-old-space-size=96"}}},
        {"node 4G",
         MG_RUNTIME_NODE,
         4 * GIB,
         {NULL},
         {"node", "app.js"},
         {{"NODE_OPTIONS", "--max-old-space-size=2976"}}},
        {"dotnet 256M",
         MG_RUNTIME_DOTNET,
         256 * MIB,
         {NULL},
         {"dotnet", "a.dll"},
         {{"DOTNET_GCHeapHardLimit", "0xA000000"}}},
        {"dotnet 4G",
         MG_RUNTIME_DOTNET,
         4 * GIB,
         {NULL},
         {"dotnet", "a.dll"},
         {{"DOTNET_GCHeapHardLimit", "0xBE000000"}}},
        {"r 256M", MG_RUNTIME_R, 256 * MIB, {NULL}, {"Rscript", "fit.R"}, {{"R_MAX_VSIZE", "160M"}}},
        {"r 4G", MG_RUNTIME_R, 4 * GIB, {NULL}, {"R"}, {{"R_MAX_VSIZE", "3520M"}}},
        {"cpython", MG_RUNTIME_CPYTHON, 4 * GIB, {NULL}, {"python3"}, {{NULL, NULL}}},
        {"generic",
         MG_RUNTIME_GENERIC,
         4 * GIB,
         {NULL},
         {"./a.out"},
         {{"PYPY_GC_MAX", "3760MB"},
          {"GOMEMLIMIT", "3670MiB"},
          {"NODE_OPTIONS", "--max-old-space-size=2976"},
          {"DOTNET_GCHeapHardLimit", "0xBE000000"},
          {"R_MAX_VSIZE", "3520M"}}},
        {"no share", MG_RUNTIME_JVM, 0, {NULL}, {"java"}, {{NULL, NULL}}},

        /* A generic task (a shell, a wrapper script) gets each variable that
         * only its own runtime reads, at that runtime's cap: never
         * MALLOC_ARENA_MAX or JAVA_TOOL_OPTIONS, which other programs read. */
        {"generic sh -c",
         MG_RUNTIME_GENERIC,
         256 * MIB,
         {"HOME=/root", "JAVA_TOOL_OPTIONS=-Dx=1"},
         {"sh", "-c", "cd case_$MEMGUARD_TASK && exec pypy3 sim.py"},
         {{"PYPY_GC_MAX", "160MB"},
          {"GOMEMLIMIT", "214MiB"},
          {"NODE_OPTIONS", "--max-old-space-size=96"},
          {"DOTNET_GCHeapHardLimit", "0xA000000"},
          {"R_MAX_VSIZE", "160M"}}},
        {"generic script behind wrappers, small share",
         MG_RUNTIME_GENERIC,
         64 * MIB,
         {NULL},
         {"nice", "-n", "5", "env", "A=1", "./run_one.sh", "--", "-Xmx2g"},
         {{"PYPY_GC_MAX", "16MB"},
          {"GOMEMLIMIT", "41MiB"},
          {"NODE_OPTIONS", "--max-old-space-size=16"},
          {"DOTNET_GCHeapHardLimit", "0x1400000"},
          {"R_MAX_VSIZE", "16M"}}},
        {"generic: each of the user's own wins, even empty",
         MG_RUNTIME_GENERIC,
         256 * MIB,
         {"PYPY_GC_MAX=1GB", "GOMEMLIMIT=", "NODE_OPTIONS=--max_old_space_size=512",
          "DOTNET_GCHeapHardLimitPercent=0x32", "R_MAX_VSIZE="},
         {"./run_one.sh"},
         {{NULL, NULL}}},
        {"generic: the others still come",
         MG_RUNTIME_GENERIC,
         256 * MIB,
         {"GOMEMLIMIT=off", "NODE_OPTIONS=--enable-source-maps", "MALLOC_ARENA_MAX=8"},
         {"sh", "-c", "exec ./sim"},
         {{"PYPY_GC_MAX", "160MB"},
          {"NODE_OPTIONS", "--enable-source-maps --max-old-space-size=96"},
          {"DOTNET_GCHeapHardLimit", "0xA000000"},
          {"R_MAX_VSIZE", "160M"}}},
        {"generic: an env wrapper's assignments are the user's",
         MG_RUNTIME_GENERIC,
         256 * MIB,
         {"NODE_OPTIONS=-r x"},
         {"env", "PYPY_GC_MAX=2GB", "NODE_OPTIONS=--enable-source-maps", "R_MAX_VSIZE=1G", "bash", "job.sh"},
         {{"GOMEMLIMIT", "214MiB"}, {"DOTNET_GCHeapHardLimit", "0xA000000"}}},
        {"generic no share", MG_RUNTIME_GENERIC, 0, {NULL}, {"sh"}, {{NULL, NULL}}},
        {"generic no real limit", MG_RUNTIME_GENERIC, UINT64_C(1) << 50, {NULL}, {"sh"}, {{NULL, NULL}}},

        /* The user's own settings win: set, even empty, means theirs. */
        {"pypy user", MG_RUNTIME_PYPY, 4 * GIB, {"PYPY_GC_MAX=1GB"}, {"pypy3"}, {{NULL, NULL}}},
        {"pypy empty", MG_RUNTIME_PYPY, 4 * GIB, {"PYPY_GC_MAX="}, {"pypy3"}, {{NULL, NULL}}},
        {"pypy other var",
         MG_RUNTIME_PYPY,
         4 * GIB,
         {"PYPY_GC_MAXX=1", "XPYPY_GC_MAX=1"},
         {"pypy3"},
         {{"PYPY_GC_MAX", "3760MB"}}},
        {"pypy env wrapper",
         MG_RUNTIME_PYPY,
         4 * GIB,
         {NULL},
         {"env", "PYPY_GC_MAX=2GB", "pypy3"},
         {{NULL, NULL}}},
        {"pypy env -S wrapper",
         MG_RUNTIME_PYPY,
         4 * GIB,
         {NULL},
         {"nice", "env", "-S", "PYPY_GC_MAX=2GB pypy3 -u", "x.py"},
         {{NULL, NULL}}},
        {"go user", MG_RUNTIME_GO, 4 * GIB, {"GOMEMLIMIT=1GiB"}, {"./sim"}, {{NULL, NULL}}},
        {"go empty", MG_RUNTIME_GO, 4 * GIB, {"GOMEMLIMIT="}, {"./sim"}, {{NULL, NULL}}},
        {"r user", MG_RUNTIME_R, 4 * GIB, {"R_MAX_VSIZE=1G"}, {"R"}, {{NULL, NULL}}},
        {"dotnet user",
         MG_RUNTIME_DOTNET,
         4 * GIB,
         {"DOTNET_GCHeapHardLimit=0x10000000"},
         {"dotnet"},
         {{NULL, NULL}}},
        {"dotnet percent",
         MG_RUNTIME_DOTNET,
         4 * GIB,
         {"DOTNET_GCHeapHardLimitPercent=0x32"},
         {"dotnet"},
         {{NULL, NULL}}},
        {"dotnet complus",
         MG_RUNTIME_DOTNET,
         4 * GIB,
         {"COMPlus_GCHeapHardLimitSOH=0x10000000"},
         {"dotnet"},
         {{NULL, NULL}}},
        {"dotnet case",
         MG_RUNTIME_DOTNET,
         4 * GIB,
         {"dotnet_gcheaphardlimit=0x10000000"},
         {"dotnet"},
         {{NULL, NULL}}},
        {"dotnet other",
         MG_RUNTIME_DOTNET,
         4 * GIB,
         {"DOTNET_gcServer=1"},
         {"dotnet"},
         {{"DOTNET_GCHeapHardLimit", "0xBE000000"}}},

        /* JVM: append to the user's options; theirs for the heap win. */
        {"jvm append",
         MG_RUNTIME_JVM,
         256 * MIB,
         {"JAVA_TOOL_OPTIONS=-Dfile.encoding=UTF-8"},
         {"java", "Main"},
         {{"JAVA_TOOL_OPTIONS", "-Dfile.encoding=UTF-8 -Xmx144m"}, {"MALLOC_ARENA_MAX", "4"}}},
        {"jvm empty list",
         MG_RUNTIME_JVM,
         256 * MIB,
         {"JAVA_TOOL_OPTIONS="},
         {"java", "Main"},
         {{"JAVA_TOOL_OPTIONS", "-Xmx144m"}, {"MALLOC_ARENA_MAX", "4"}}},
        {"jvm xmx in tool options",
         MG_RUNTIME_JVM,
         256 * MIB,
         {"JAVA_TOOL_OPTIONS=-Dx=1  -Xmx1g"},
         {"java", "Main"},
         {{"MALLOC_ARENA_MAX", "4"}}},
        {"jvm percentage",
         MG_RUNTIME_JVM,
         256 * MIB,
         {"_JAVA_OPTIONS=-XX:MaxRAMPercentage=50"},
         {"java", "Main"},
         {{"MALLOC_ARENA_MAX", "4"}}},
        {"jvm jdk options",
         MG_RUNTIME_JVM,
         256 * MIB,
         {"JDK_JAVA_OPTIONS=-XX:MaxRAM=1g"},
         {"java", "Main"},
         {{"MALLOC_ARENA_MAX", "4"}}},
        {"jvm argv xmx",
         MG_RUNTIME_JVM,
         256 * MIB,
         {NULL},
         {"java", "-cp", "lib/*", "-Xmx2g", "Main"},
         {{"MALLOC_ARENA_MAX", "4"}}},
        {"jvm argv heapsize",
         MG_RUNTIME_JVM,
         256 * MIB,
         {NULL},
         {"taskset", "-c", "0", "java", "@opts", "-XX:MaxHeapSize=1g", "-jar", "a.jar"},
         {{"MALLOC_ARENA_MAX", "4"}}},
        {"jvm program arg",
         MG_RUNTIME_JVM,
         256 * MIB,
         {NULL},
         {"java", "-jar", "a.jar", "-Xmx2g"},
         {{"JAVA_TOOL_OPTIONS", "-Xmx144m"}, {"MALLOC_ARENA_MAX", "4"}}},
        {"jvm main class arg",
         MG_RUNTIME_JVM,
         256 * MIB,
         {NULL},
         {"java", "Main", "-Xmx2g"},
         {{"JAVA_TOOL_OPTIONS", "-Xmx144m"}, {"MALLOC_ARENA_MAX", "4"}}},
        {"jvm script arg",
         MG_RUNTIME_JVM,
         256 * MIB,
         {NULL},
         {"./run-java.sh", "-Xmx2g"},
         {{"JAVA_TOOL_OPTIONS", "-Xmx144m"}, {"MALLOC_ARENA_MAX", "4"}}},
        {"jvm big xms",
         MG_RUNTIME_JVM,
         256 * MIB,
         {NULL},
         {"java", "-Xms4g", "Main"},
         {{"MALLOC_ARENA_MAX", "4"}}},
        {"jvm small xms",
         MG_RUNTIME_JVM,
         256 * MIB,
         {"JAVA_TOOL_OPTIONS=-Xms64m"},
         {"java", "Main"},
         {{"JAVA_TOOL_OPTIONS", "-Xms64m -Xmx144m"}, {"MALLOC_ARENA_MAX", "4"}}},
        {"jvm big initial percent",
         MG_RUNTIME_JVM,
         256 * MIB,
         {"JAVA_TOOL_OPTIONS=-XX:InitialRAMPercentage=90"},
         {"java", "Main"},
         {{"MALLOC_ARENA_MAX", "4"}}},
        {"jvm arena user",
         MG_RUNTIME_JVM,
         256 * MIB,
         {"MALLOC_ARENA_MAX=8"},
         {"java", "Main"},
         {{"JAVA_TOOL_OPTIONS", "-Xmx144m"}}},
        {"jvm arena empty",
         MG_RUNTIME_JVM,
         256 * MIB,
         {"MALLOC_ARENA_MAX="},
         {"java", "Main"},
         {{"JAVA_TOOL_OPTIONS", "-Xmx144m"}}},
        {"jvm arena tunable",
         MG_RUNTIME_JVM,
         256 * MIB,
         {"GLIBC_TUNABLES=glibc.malloc.arena_max=2"},
         {"java", "Main"},
         {{"JAVA_TOOL_OPTIONS", "-Xmx144m"}}},
        {"jvm wrapper replaces list",
         MG_RUNTIME_JVM,
         256 * MIB,
         {"JAVA_TOOL_OPTIONS=-Da=1"},
         {"env", "JAVA_TOOL_OPTIONS=-Db=2", "java", "Main"},
         {{"MALLOC_ARENA_MAX", "4"}}},

        /* Node: the same, with V8's '-'/'_' spellings. */
        {"node append",
         MG_RUNTIME_NODE,
         256 * MIB,
         {"NODE_OPTIONS=--enable-source-maps"},
         {"node", "a.js"},
         {{"NODE_OPTIONS", "--enable-source-maps --max-old-space-size=96"}}},
        {"node user options",
         MG_RUNTIME_NODE,
         256 * MIB,
         {"NODE_OPTIONS=--max-old-space-size=512"},
         {"node", "a.js"},
         {{NULL, NULL}}},
        {"node user underscore",
         MG_RUNTIME_NODE,
         256 * MIB,
         {"NODE_OPTIONS=-r x --max_old_space_size=512"},
         {"node", "a.js"},
         {{NULL, NULL}}},
        {"node argv",
         MG_RUNTIME_NODE,
         256 * MIB,
         {NULL},
         {"node", "-r", "ts-node/register", "--max_old-space_size=100", "a.js"},
         {{NULL, NULL}}},
        {"node argv heap",
         MG_RUNTIME_NODE,
         256 * MIB,
         {NULL},
         {"node", "--max-heap-size=100", "a.js"},
         {{NULL, NULL}}},
        {"node script arg",
         MG_RUNTIME_NODE,
         256 * MIB,
         {NULL},
         {"node", "a.js", "--max-old-space-size=100"},
         {{"NODE_OPTIONS", "--max-old-space-size=96"}}},

};

static void test_heap_settings(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(heap_cases) / sizeof(heap_cases[0]); i++) {
		const struct heap_case *tc = &heap_cases[i];
		struct mg_env_setting out[MG_HEAP_SETTINGS_MAX];
		int want_n = 0, n;

		memset(out, 0x5a, sizeof(out));
		while (want_n < MG_HEAP_SETTINGS_MAX && tc->want[want_n].name)
			want_n++;
		n = mg_heap_settings(tc->rt, tc->share, (char *const *)tc->envp, (char *const *)tc->argv,
		                     out);
		if (n != want_n)
			fail_msg("%s: %d settings, want %d (first: %s=%s)", tc->what, n, want_n,
			         n > 0 ? out[0].name : "-", n > 0 ? out[0].value : "-");
		for (int j = 0; j < n; j++) {
			if (strcmp(out[j].name, tc->want[j].name) != 0 ||
			    strcmp(out[j].value, tc->want[j].value) != 0)
				fail_msg("%s: setting %d is %s=%s, want %s=%s", tc->what, j, out[j].name,
				         out[j].value, tc->want[j].name, tc->want[j].value);
		}
	}
}

static void test_heap_settings_long_value_boundary(void **state)
{
	/* The user's value plus " -Xmx144m" (9 bytes) must fit in 255 chars. */
	char env[300], *envp[] = {env, NULL};
	char *argv[] = {(char *)"java", (char *)"Main", NULL};
	struct mg_env_setting out[MG_HEAP_SETTINGS_MAX];
	const size_t prefix = strlen("JAVA_TOOL_OPTIONS=");

	(void)state;
	for (size_t user_len = 240; user_len <= 250; user_len++) {
		memcpy(env, "JAVA_TOOL_OPTIONS=", prefix);
		memset(env + prefix, 'd', user_len);
		env[prefix] = '-';
		env[prefix + user_len] = '\0';
		int n = mg_heap_settings(MG_RUNTIME_JVM, 256 * MIB, envp, argv, out);
		bool fits = user_len + 9 <= 255;
		assert_int_equal(n, fits ? 2 : 1);
		if (fits) {
			assert_string_equal(out[0].name, "JAVA_TOOL_OPTIONS");
			assert_int_equal(strlen(out[0].value), user_len + 9);
			assert_string_equal(out[0].value + user_len, " -Xmx144m");
		} else {
			assert_string_equal(out[0].name, "MALLOC_ARENA_MAX");
		}
	}
}

static void test_heap_settings_null_inputs(void **state)
{
	struct mg_env_setting out[MG_HEAP_SETTINGS_MAX];

	(void)state;
	assert_int_equal(mg_heap_settings(MG_RUNTIME_GO, 4 * GIB, NULL, NULL, out), 1);
	assert_string_equal(out[0].value, "3670MiB");
	assert_int_equal(mg_heap_settings(MG_RUNTIME_GO, 4 * GIB, NULL, NULL, NULL), 0);
	assert_int_equal(mg_heap_settings(MG_RUNTIME__COUNT, 4 * GIB, NULL, NULL, out), 0);
	/* An argv that is only a wrapper still lets the environment decide. */
	char *argv[] = {(char *)"env", (char *)"GOMEMLIMIT=1GiB", NULL};
	assert_int_equal(mg_heap_settings(MG_RUNTIME_GO, 4 * GIB, NULL, argv, out), 0);
}

/* The summary's and --explain's words for what a generic task got. */
static void test_heap_describe(void **state)
{
	static const struct mg_env_setting all[] = {
	        {"PYPY_GC_MAX", "160MB"},
	        {"GOMEMLIMIT", "214MiB"},
	        {"NODE_OPTIONS", "--max-old-space-size=96"},
	        {"DOTNET_GCHeapHardLimit", "0xA000000"},
	        {"R_MAX_VSIZE", "160M"},
	};
	/* Out of order, with what is not the generic set's (RLIMIT_AS's arena
	 * cap, a pool's variable): those have lines of their own. */
	static const struct mg_env_setting some[] = {
	        {"MALLOC_ARENA_MAX", "2"},
	        {"R_MAX_VSIZE", "160M"},
	        {"CELERY_WORKER_MAX_MEMORY_PER_CHILD", "1"},
	        {"GOMEMLIMIT", "214MiB"},
	};
	static const struct {
		const char *what;
		enum mg_runtime rt;
		const char *argv[8];
		const struct mg_env_setting *set;
		size_t n, size;
		const char *want;
	} cases[] = {
	        {"sh -c, all five",
	         MG_RUNTIME_GENERIC,
	         {"sh", "-c", "exec pypy3 sim.py"},
	         all,
	         5,
	         256,
	         "sh: PYPY_GC_MAX, GOMEMLIMIT, NODE_OPTIONS, DOTNET_GCHeapHardLimit, R_MAX_VSIZE set for any "
	         "runtime the task starts"},
	        {"a script behind wrappers",
	         MG_RUNTIME_GENERIC,
	         {"env", "A=1", "nice", "./cases/run_one.sh", "7"},
	         some,
	         4,
	         256,
	         "run_one.sh: GOMEMLIMIT, R_MAX_VSIZE set for any runtime the task starts"},
	        {"none (--no-heap-flags, all the user's)",
	         MG_RUNTIME_GENERIC,
	         {"./a.out"},
	         NULL,
	         0,
	         256,
	         "a.out: no heap flag"},
	        {"only what is not the generic set's",
	         MG_RUNTIME_GENERIC,
	         {"sh"},
	         some,
	         1,
	         256,
	         "sh: no heap flag"},
	        {"no command", MG_RUNTIME_GENERIC, {NULL}, NULL, 0, 256, "?: no heap flag"},
	        {"control characters",
	         MG_RUNTIME_GENERIC,
	         {"./a\nb\x1b"},
	         NULL,
	         0,
	         256,
	         "a?b?: no heap flag"},
	        {"cut", MG_RUNTIME_GENERIC, {"sh"}, all, 5, 24, "sh: PYPY_GC_MAX, GOM..."},
	        {"another runtime says nothing", MG_RUNTIME_PYPY, {"pypy3"}, all, 1, 256, ""},
	        {"the JVM too", MG_RUNTIME_JVM, {"java"}, NULL, 0, 256, ""},
	};
	char buf[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(buf, 0x5a, sizeof(buf));
		size_t len = mg_heap_describe(cases[i].rt, (char *const *)cases[i].argv, cases[i].set,
		                              cases[i].n, buf, cases[i].size);
		if (strcmp(buf, cases[i].want) != 0)
			fail_msg("%s: \"%s\", want \"%s\"", cases[i].what, buf, cases[i].want);
		assert_int_equal(len, strlen(cases[i].want));
	}
	assert_int_equal(mg_heap_describe(MG_RUNTIME_GENERIC, NULL, all, 5, NULL, 10), 0);
	assert_int_equal(mg_heap_describe(MG_RUNTIME_GENERIC, NULL, all, 5, buf, 0), 0);
	assert_int_equal(mg_heap_describe(MG_RUNTIME_GENERIC, NULL, all, 5, buf, 1), 0);
	assert_string_equal(buf, "");
}

/* Worker pools: which command is one, and the limit it gets. */
struct pool_case {
	const char *what;
	uint64_t share;
	const char *envp[4];
	const char *argv[16];
	enum mg_pool pool;
	const char *env_name, *env_value; /* NULL: none */
	const char *arg;                  /* NULL: none */
};

static const struct pool_case pool_cases[] = {
        {"dask worker",
         200 * MIB,
         {NULL},
         {"dask", "worker", "tcp://127.0.0.1:8786", "--nworkers", "1", "--nthreads", "1"},
         MG_POOL_DASK,
         NULL,
         NULL,
         "--memory-limit=209715200"},
        {"dask default nworkers",
         4 * GIB,
         {NULL},
         {"/usr/bin/dask", "worker", "tcp://h:8786"},
         MG_POOL_DASK,
         NULL,
         NULL,
         "--memory-limit=4294967296"},
        {"dask-worker, 2 processes, wrapped",
         200 * MIB,
         {NULL},
         {"env", "A=1", "nice", "-n", "5", "dask-worker", "tcp://h:1", "--nworkers=2"},
         MG_POOL_DASK,
         NULL,
         NULL,
         "--memory-limit=104857600"},
        {"dask --nprocs",
         300 * MIB,
         {NULL},
         {"dask-worker", "tcp://h:1", "--nprocs", "3"},
         MG_POOL_DASK,
         NULL,
         NULL,
         "--memory-limit=104857600"},
        {"dask python -m",
         200 * MIB,
         {NULL},
         {"python3", "-u", "-m", "distributed.cli.dask_worker", "tcp://h:1"},
         MG_POOL_DASK,
         NULL,
         NULL,
         "--memory-limit=209715200"},
        {"dask user limit",
         200 * MIB,
         {NULL},
         {"dask", "worker", "tcp://h:1", "--memory-limit", "1GB"},
         MG_POOL_DASK,
         NULL,
         NULL,
         NULL},
        {"dask user limit =",
         200 * MIB,
         {NULL},
         {"dask", "worker", "tcp://h:1", "--memory-limit=0"},
         MG_POOL_DASK,
         NULL,
         NULL,
         NULL},
        {"dask nworkers auto",
         200 * MIB,
         {NULL},
         {"dask", "worker", "tcp://h:1", "--nworkers", "auto"},
         MG_POOL_DASK,
         NULL,
         NULL,
         NULL},
        {"dask nworkers negative",
         200 * MIB,
         {NULL},
         {"dask", "worker", "tcp://h:1", "--nworkers=-1"},
         MG_POOL_DASK,
         NULL,
         NULL,
         NULL},
        {"dask --: appending would be an argument",
         200 * MIB,
         {NULL},
         {"dask", "worker", "tcp://h:1", "--", "x"},
         MG_POOL_DASK,
         NULL,
         NULL,
         NULL},
        {"dask scheduler is no pool",
         200 * MIB,
         {NULL},
         {"dask", "scheduler"},
         MG_POOL_NONE,
         NULL,
         NULL,
         NULL},
        {"dask no share", 0, {NULL}, {"dask", "worker", "tcp://h:1"}, MG_POOL_DASK, NULL, NULL, NULL},
        {"dask no real limit",
         UINT64_C(1) << 50,
         {NULL},
         {"dask", "worker", "tcp://h:1"},
         MG_POOL_DASK,
         NULL,
         NULL,
         NULL},
        {"celery prefork, 1 child",
         200 * MIB,
         {NULL},
         {"celery", "-A", "app", "worker", "--concurrency", "1", "--pool", "prefork"},
         MG_POOL_CELERY,
         "CELERY_WORKER_MAX_MEMORY_PER_CHILD",
         "113664",
         NULL},
        {"celery 4 GiB, 4 children",
         4 * GIB,
         {NULL},
         {"celery", "--app=app", "-q", "worker", "-c4"},
         MG_POOL_CELERY,
         "CELERY_WORKER_MAX_MEMORY_PER_CHILD",
         "901120",
         NULL},
        {"celery tiny share: a quarter",
         64 * MIB,
         {NULL},
         {"celery", "-A", "app", "worker", "-c", "1"},
         MG_POOL_CELERY,
         "CELERY_WORKER_MAX_MEMORY_PER_CHILD",
         "16384",
         NULL},
        {"celery python -m, processes pool",
         200 * MIB,
         {NULL},
         {"python3", "-m", "celery", "-b", "worker", "worker", "-P", "processes", "--concurrency=2"},
         MG_POOL_CELERY,
         "CELERY_WORKER_MAX_MEMORY_PER_CHILD",
         "56832",
         NULL},
        {"celery concurrency from click's variable",
         200 * MIB,
         {"CELERY_WORKER_CONCURRENCY=2", NULL},
         {"celery", "-A", "app", "worker"},
         MG_POOL_CELERY,
         "CELERY_WORKER_MAX_MEMORY_PER_CHILD",
         "56832",
         NULL},
        {"celery no concurrency",
         200 * MIB,
         {NULL},
         {"celery", "-A", "app", "worker"},
         MG_POOL_CELERY,
         NULL,
         NULL,
         NULL},
        {"celery solo",
         200 * MIB,
         {NULL},
         {"celery", "-A", "app", "worker", "-c", "1", "-P", "solo"},
         MG_POOL_CELERY,
         NULL,
         NULL,
         NULL},
        {"celery threads from the variable",
         200 * MIB,
         {"CELERY_WORKER_POOL=threads", NULL},
         {"celery", "-A", "app", "worker", "-c", "1"},
         MG_POOL_CELERY,
         NULL,
         NULL,
         NULL},
        {"celery autoscale",
         200 * MIB,
         {NULL},
         {"celery", "-A", "app", "worker", "-c", "1", "--autoscale=4,1"},
         MG_POOL_CELERY,
         NULL,
         NULL,
         NULL},
        {"celery user flag",
         200 * MIB,
         {NULL},
         {"celery", "-A", "app", "worker", "-c", "1", "--max-memory-per-child", "50000"},
         MG_POOL_CELERY,
         NULL,
         NULL,
         NULL},
        {"celery user variable, even empty",
         200 * MIB,
         {"CELERY_WORKER_MAX_MEMORY_PER_CHILD=", NULL},
         {"celery", "-A", "app", "worker", "-c", "1"},
         MG_POOL_CELERY,
         NULL,
         NULL,
         NULL},
        {"celery user variable in an env wrapper",
         200 * MIB,
         {NULL},
         {"env", "CELERY_WORKER_MAX_MEMORY_PER_CHILD=9", "celery", "-A", "app", "worker", "-c", "1"},
         MG_POOL_CELERY,
         NULL,
         NULL,
         NULL},
        {"celery beat is no pool",
         200 * MIB,
         {NULL},
         {"celery", "-A", "app", "beat"},
         MG_POOL_NONE,
         NULL,
         NULL,
         NULL},
        {"celery -A worker beat: worker is a value",
         200 * MIB,
         {NULL},
         {"celery", "-A", "worker", "beat"},
         MG_POOL_NONE,
         NULL,
         NULL,
         NULL},
        {"python script", 200 * MIB, {NULL}, {"python3", "celery", "worker"}, MG_POOL_NONE, NULL, NULL, NULL},
        {"python -c",
         200 * MIB,
         {NULL},
         {"python3", "-c", "-m", "celery", "worker"},
         MG_POOL_NONE,
         NULL,
         NULL,
         NULL},
        {"other module", 200 * MIB, {NULL}, {"python3", "-m", "http.server"}, MG_POOL_NONE, NULL, NULL, NULL},
        {"java", 200 * MIB, {NULL}, {"java", "-m", "celery", "worker"}, MG_POOL_NONE, NULL, NULL, NULL},
        {"empty", 200 * MIB, {NULL}, {NULL}, MG_POOL_NONE, NULL, NULL, NULL},
};

static void test_pool_settings(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(pool_cases) / sizeof(pool_cases[0]); i++) {
		const struct pool_case *tc = &pool_cases[i];
		struct mg_pool_settings out;
		enum mg_pool pool = mg_pool_detect((char *const *)tc->argv);
		int n, want_n = (tc->env_name != NULL) + (tc->arg != NULL);

		if (pool != tc->pool)
			fail_msg("%s: pool %s, want %s", tc->what, mg_pool_name(pool),
			         mg_pool_name(tc->pool));
		memset(&out, 0x5a, sizeof(out));
		n = mg_pool_settings(tc->pool, tc->share, (char *const *)tc->envp, (char *const *)tc->argv,
		                     &out);
		if (n != want_n)
			fail_msg("%s: %d changes, want %d", tc->what, n, want_n);
		if (strcmp(out.env.name, tc->env_name ?: "") != 0 ||
		    (tc->env_name && strcmp(out.env.value, tc->env_value) != 0))
			fail_msg("%s: variable %s=%s, want %s=%s", tc->what, out.env.name,
			         out.env.name[0] ? out.env.value : "", tc->env_name ?: "",
			         tc->env_value ?: "");
		if (strcmp(out.arg, tc->arg ?: "") != 0)
			fail_msg("%s: appended \"%s\", want \"%s\"", tc->what, out.arg, tc->arg ?: "");
	}
}

static void test_pool_settings_edges(void **state)
{
	const char *argv[MG_CMD_TOKENS_MAX + 2] = {"dask", "worker"};
	struct mg_pool_settings out;

	(void)state;
	assert_string_equal(mg_pool_name(MG_POOL_CELERY), "celery");
	assert_string_equal(mg_pool_name(MG_POOL__COUNT), "invalid");
	assert_int_equal(mg_pool_detect(NULL), MG_POOL_NONE);
	assert_int_equal(mg_pool_settings(MG_POOL_DASK, 200 * MIB, NULL, (char *const *)argv, NULL), 0);
	/* The pool asked for must be the command's. */
	assert_int_equal(mg_pool_settings(MG_POOL_CELERY, 200 * MIB, NULL, (char *const *)argv, &out), 0);
	assert_int_equal(mg_pool_settings(MG_POOL_DASK, 200 * MIB, NULL, (char *const *)argv, &out), 1);
	/* Past the tokens memguard reads, a --memory-limit could hide: nothing. */
	for (size_t i = 2; i < MG_CMD_TOKENS_MAX + 1; i++)
		argv[i] = "--nthreads=1";
	assert_int_equal(mg_pool_settings(MG_POOL_DASK, 200 * MIB, NULL, (char *const *)argv, &out), 0);
	assert_string_equal(out.arg, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_heap_cap),
	        cmocka_unit_test(test_heap_cap_monotonic),
	        cmocka_unit_test(test_heap_settings),
	        cmocka_unit_test(test_heap_settings_long_value_boundary),
	        cmocka_unit_test(test_heap_settings_null_inputs),
	        cmocka_unit_test(test_heap_describe),
	        cmocka_unit_test(test_pool_settings),
	        cmocka_unit_test(test_pool_settings_edges),
	};

	return cmocka_run_group_tests_name("heapflags", tests, NULL, NULL);
}
