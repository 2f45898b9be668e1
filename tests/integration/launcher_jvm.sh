#!/usr/bin/env bash
# A JVM task honours the -Xmx memguard derives from its share: the heap the
# JVM actually sizes is the -Xmx in JAVA_TOOL_OPTIONS (rounded up to the JVM's
# 2 MiB heap alignment), not the JVM's own 25%-of-memory.max default. A user's own -Xmx is never overridden. (The
# command is wrapped in sh -c, which detection does not look into: --runtime.)
. "$(dirname "$0")/lib.sh"
command -v java >/dev/null || fail "java is not installed (scripts/deps.sh test installs default-jre-headless)"

"$memguard" -n 2 --mem 768M --runtime jvm -- sh -c \
	'echo "$JAVA_TOOL_OPTIONS" > '"$work"'/opts.$MEMGUARD_TASK; java -XX:+PrintFlagsFinal -version 2>/dev/null | grep -w MaxHeapSize > '"$work"'/heap.$MEMGUARD_TASK' \
	2>"$work/err" || { cat "$work/err"; fail "java task failed"; }
xmx_mib=$(sed -n 's/.*-Xmx\([0-9]*\)m.*/\1/p' "$work/opts.0")
[ -n "$xmx_mib" ] || fail "no -Xmx in JAVA_TOOL_OPTIONS: $(cat "$work/opts.0")"
heap=$(awk '{print $4}' "$work/heap.0")
note "JAVA_TOOL_OPTIONS=$(cat "$work/opts.0"), MaxHeapSize=$heap"
# An odd -Xmx239m becomes 240 MiB: the heap is a whole number of 2 MiB units.
assert_eq "$heap" "$(((xmx_mib + 1) / 2 * 2 * 1024 * 1024))" "MaxHeapSize"

# The user's own -Xmx wins.
JAVA_TOOL_OPTIONS=-Xmx64m "$memguard" -n 1 --mem 768M --runtime jvm -- sh -c \
	'echo "$JAVA_TOOL_OPTIONS" > '"$work"'/user.opts; java -XX:+PrintFlagsFinal -version 2>/dev/null | grep -w MaxHeapSize > '"$work"'/user.heap' \
	2>"$work/err" || { cat "$work/err"; fail "java task failed"; }
assert_eq "$(cat "$work/user.opts")" "-Xmx64m" "user's JAVA_TOOL_OPTIONS untouched"
assert_eq "$(awk '{print $4}' "$work/user.heap")" "$((64 * 1024 * 1024))" "user's MaxHeapSize"
assert_no_leftover
