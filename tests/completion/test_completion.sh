#!/usr/bin/env bash
# Sources packaging/bash-completion/memguard in a non-interactive bash, asks for
# completions of a series of command lines and checks COMPREPLY; once without
# bash-completion's helpers and once with them when that package is installed.
# MEMGUARD_BIN / MEMGUARDD_BIN: built binaries whose --help lists the options
# the completion must offer (set by CMake; without them a fixed list is used).
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
completion=${MEMGUARD_COMPLETION:-$here/../../packaging/bash-completion/memguard}
bash_completion=${BASH_COMPLETION_SCRIPT:-/usr/share/bash-completion/bash_completion}

# The option column of a --help text: "  -n, --ntasks N  ..." gives -n and --ntasks.
help_options()
{
	sed -nE 's/^ +((-[a-zA-Z], )?--[a-z][a-z-]*).*/\1/p' | tr -d , | tr ' ' '\n' | sort -u
}

options_of()
{
	local bin=$1 fallback=$2
	if [[ -n $bin ]]; then
		if [[ ! -x $bin ]]; then
			echo "FAIL: $bin is not an executable (the binary named in the environment)" >&2
			return 1
		fi
		"$bin" --help | help_options
	else
		tr -s ' \t\n' '\n' <<<"$fallback" | sed '/^$/d' | sort -u
	fi
}

# Runs every check in the current shell; mode is "plain" or "bash-completion".
run_checks()
{
	local mode=$1 passed=0 failed=0
	tmp=$(mktemp -d) || exit 1
	trap 'rm -rf "$tmp"' EXIT

	if [[ $mode == bash-completion ]]; then
		# shellcheck disable=SC1090
		source "$bash_completion" || { echo "FAIL: cannot source $bash_completion"; exit 1; }
		declare -F _init_completion >/dev/null ||
			{ echo "FAIL: $bash_completion defines no _init_completion"; exit 1; }
	fi
	# shellcheck disable=SC1090
	source "$completion" || { echo "FAIL: cannot source $completion"; exit 1; }
	if [[ $mode == plain ]] && declare -F _init_completion >/dev/null; then
		echo "FAIL: plain mode sees bash-completion's _init_completion"
		exit 1
	fi

	# Asks for the completion of the last word of a command line: words as
	# arguments, the last one the word being completed ("" after a space).
	complete_words()
	{
		local func
		case $1 in
		memguard) func=_memguard ;;
		memguardd) func=_memguardd ;;
		esac
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		# As bash splits it: "--runtime=p" is the words "--runtime" "=" "p".
		local w prev_w=
		COMP_LINE=
		for w in "$@"; do
			[[ -n $COMP_LINE && $w != = && $prev_w != = ]] && COMP_LINE+=" "
			COMP_LINE+=$w
			prev_w=$w
		done
		COMP_POINT=${#COMP_LINE}
		COMPREPLY=()
		# compopt complains outside a real completion; anything else is shown.
		"$func" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" 2>"$tmp/stderr"
		grep -v 'compopt: not currently executing completion function' "$tmp/stderr" >&2
		# _filedir appends / to directories only in real completion; compare names.
		got=$(printf '%s\n' "${COMPREPLY[@]}" | sort -u | sed '/^$/d')
	}

	# expect NAME EXPECTED-WORDS -- WORDS...: COMPREPLY is exactly EXPECTED.
	expect()
	{
		local name=$1 want
		want=$(tr ' ' '\n' <<<"$2" | sort -u | sed '/^$/d')
		shift 3
		complete_words "$@"
		if [[ $got == "$want" ]]; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
			echo "FAIL [$mode] $name: \"$*\" completes to [${got//$'\n'/ }], expected [${want//$'\n'/ }]"
		fi
	}

	# expect_has NAME WORD -- WORDS...: COMPREPLY holds WORD.
	expect_has()
	{
		local name=$1 word=$2
		shift 3
		complete_words "$@"
		if grep -qxF -- "$word" <<<"$got"; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
			echo "FAIL [$mode] $name: \"$*\" completes to [${got//$'\n'/ }], which lacks $word"
		fi
	}

	# The same set of words, both ways, so neither side can drift.
	expect_set()
	{
		local name=$1 want=$2 missing extra
		missing=$(comm -23 <(echo "$want") <(echo "$got") | tr '\n' ' ')
		extra=$(comm -13 <(echo "$want") <(echo "$got") | tr '\n' ' ')
		if [[ -z $missing$extra ]]; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
			echo "FAIL [$mode] $name: missing from the completion [${missing% }]," \
				"offered but not in --help [${extra% }]"
		fi
	}

	mkdir -p "$tmp/tasks" "$tmp/bin"
	touch "$tmp/tasks/list.txt" "$tmp/tasks/lines.tsv" "$tmp/tasks/other"
	printf '#!/bin/sh\n' >"$tmp/bin/pythonfake"
	chmod +x "$tmp/bin/pythonfake"
	PATH=$tmp/bin:$PATH
	cd "$tmp/tasks" || exit 1

	expect "a long option" "--runtime" -- memguard --ru
	expect "runtime values" "pypy" -- memguard --runtime p
	expect "runtime aliases when no name fits" "python python3" -- memguard --runtime pyth
	expect "every runtime" "generic cpython pypy jvm go node dotnet r" -- memguard --runtime ""
	expect "rlimit-as values" "auto on off" -- memguard --rlimit-as ""
	expect "a value after =" "pypy" -- memguard --runtime = p
	expect "files after --tasks" "$tmp/tasks/list.txt $tmp/tasks/lines.tsv" -- memguard --tasks "$tmp/tasks/l"
	expect "files after --tasks, relative" "lines.tsv list.txt other" -- memguard -n 2 --tasks ""
	expect "files after --config" "list.txt" -- memguard --config lis
	expect "files after --report" "other" -- memguard --report ot
	expect "nothing for a number" "" -- memguard -n ""
	expect "the command after --" "pythonfake" -- memguard -n 4 -- pythonfa
	expect_has "the command after --" "pythonfake" -- memguard -n 4 -- pyth
	expect "the command without --" "pythonfake" -- memguard --strict pythonfa
	expect "a command's argument is a file" "list.txt" -- memguard -n 4 -- pythonfake lis
	expect "options after the command are its own" "" -- memguard -n 4 -- pythonfake --ru
	printf '#!/bin/sh\n' >"$tmp/bin/fakewithcomp"
	chmod +x "$tmp/bin/fakewithcomp"
	# shellcheck disable=SC2317 # called by the completion
	_fakewithcomp() { mapfile -t COMPREPLY < <(compgen -W "alpha beta" -- "$2"); }
	complete -F _fakewithcomp fakewithcomp
	expect "the command's own completion" "alpha" -- memguard -n 4 -- fakewithcomp a
	expect "the command's own completion, later words" "alpha beta" -- memguard -- fakewithcomp x ""
	expect "every value after =" "auto on off" -- memguard --rlimit-as = ""
	expect "after a value, the command" "pythonfake" -- memguard --runtime pypy pythonfa
	expect_has "report as the first word" "report" -- memguard repo
	expect "report's options" "--svg --help" -- memguard report -
	expect "a file after report --svg" "other" -- memguard report --svg ot
	expect "report's joblogs are files" "list.txt" -- memguard report --svg x.svg lis
	expect "report is a subcommand only first" "" -- memguard -n 4 -- report --s

	# Without built binaries, memguard --help's options as of this script.
	local fallback="-n --ntasks --tasks --mem-per-task --mem --reserve --runtime --no-heap-flags
		--rlimit-as --memory-high --strict --elastic --require-cgroups --no-cgroups --backend
		--step-cpus --share-job --grace --joblog --resume --resume-failed --retries --results
		--progress --explain --dry-run --report --metrics --config --cgroup-parent -q --quiet -v
		--verbose -h --help --version -j --jobs -k --keep-order --line-buffer -u --ungroup --tag
		--halt -C --colsep -a --arg-file --quote"
	complete_words memguard --
	got=$(grep -- '^--.' <<<"$got")
	expect_set "memguard --<TAB> is memguard --help" \
		"$(options_of "${MEMGUARD_BIN:-}" "$fallback" | grep -- '^--')"
	complete_words memguard -
	got=$(grep -v -- '^--$' <<<"$got")
	expect_set "memguard -<TAB> is memguard --help" "$(options_of "${MEMGUARD_BIN:-}" "$fallback")"

	complete_words memguardd -
	expect_set "memguardd -<TAB> is memguardd --help" "$(options_of "${MEMGUARDD_BIN:-}" \
		"-c --config -n --dry-run -s --status -v --verbose -h --help")"
	expect "memguardd --config files" "list.txt" -- memguardd --config lis
	expect "memguardd -c files" "other" -- memguardd -c ot

	echo "[$mode] $passed passed, $failed failed"
	((failed == 0))
}

case ${1:-} in
--mode=*)
	run_checks "${1#--mode=}"
	exit
	;;
esac

# Each mode in a fresh non-interactive bash, so bash-completion's functions do
# not leak into the plain run.
status=0 passed=0 failed=0
run_mode()
{
	local out
	out=$(bash "${BASH_SOURCE[0]}" --mode="$1") || status=1
	echo "$out"
	if [[ $(tail -n1 <<<"$out") =~ \]\ ([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		passed=$((passed + BASH_REMATCH[1]))
		failed=$((failed + BASH_REMATCH[2]))
	else
		failed=$((failed + 1))
		echo "FAIL [$1]: the checks stopped early"
	fi
}
[[ -n ${MEMGUARD_BIN:-} ]] || echo "note: MEMGUARD_BIN not set: options checked against a fixed list, not --help"
run_mode plain
if [[ -r $bash_completion ]]; then
	run_mode bash-completion
else
	echo "[bash-completion] skipped: $bash_completion not found (apt-get install bash-completion)"
fi
echo "$passed passed, $failed failed"
((status == 0 && failed == 0))
