# shellcheck shell=bash
# Sourced by build-deb.sh and build-rpm.sh: the source tree a package is built from.

# Copies the tree at $1 into directory $2: what git tracks plus new files it does not ignore, as they
# are in the working tree; without git, everything but .git, build*/ and the VM cache.
copy_source_tree() {
	local top=$1 dest=$2
	if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$top" ls-files -z --cached --others --exclude-standard |
			while IFS= read -r -d '' f; do
				[[ -e $top/$f || -L $top/$f ]] && printf '%s\0' "$f"
			done |
			tar -C "$top" --null --files-from=- -cf - |
			tar -C "$dest" -xf -
	else
		tar -C "$top" --exclude=./.git --exclude='./build*' --exclude=./tests/vm/.cache -cf - . |
			tar -C "$dest" -xf -
	fi
}
