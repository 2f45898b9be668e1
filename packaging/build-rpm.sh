#!/bin/bash
# Builds the memguard RPM (source and binary) from packaging/rpm/memguard.spec.
#
#   packaging/build-rpm.sh [OUTDIR]       default OUTDIR: build-rpm/ at the top of the tree
#
# Makes memguard-VERSION.tar.gz from the files git knows (what it tracks plus new files it does not
# ignore, as they are in the working tree; without git, everything but .git and build*/), then runs
# "rpmbuild -ba" in a private topdir under a temporary directory and moves the .rpm and .src.rpm files
# to OUTDIR. The package is built, not installed. On an rpm-based system (Rocky 9) rpmbuild checks the
# spec's BuildRequires; where rpm's database does not hold the system's packages (Debian's rpm), it
# cannot, and this passes --nodeps: the build itself then fails if a build dependency is missing.
# Needs: rpmbuild (Debian: apt-get install rpm; Rocky 9: dnf install rpm-build) and the
# BuildRequires of the spec.
set -euo pipefail

die() {
	echo "build-rpm.sh: $*" >&2
	exit 1
}

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=source-tree.sh
. "$top/packaging/source-tree.sh"
out=${1:-$top/build-rpm}
[[ $# -le 1 ]] || die "usage: packaging/build-rpm.sh [OUTDIR]"
spec=$top/packaging/rpm/memguard.spec
[[ -f $spec ]] || die "no $spec"
command -v rpmbuild >/dev/null || die "rpmbuild not found: apt-get install rpm (Debian) or dnf install rpm-build"

version=$(sed -n 's/^Version:[[:space:]]*//p' "$spec")
cmake_version=$(sed -n 's/^project(memguard VERSION \([0-9.]*\).*/\1/p' "$top/CMakeLists.txt")
[[ -n $version && $version == "$cmake_version" ]] ||
	die "the spec's Version ($version) is not CMakeLists.txt's project VERSION ($cmake_version)"

work=$(mktemp -d "${TMPDIR:-/tmp}/memguard-rpm.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/{BUILD,BUILDROOT,RPMS,SOURCES,SPECS,SRPMS} "$work/src/memguard-$version"
src=$work/src/memguard-$version

# The source tree, without build directories or caches.
copy_source_tree "$top" "$src"
# Owner and times fixed, so that the same tree gives the same tarball.
tar -C "$work/src" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - "memguard-$version" |
	gzip -n >"$work/SOURCES/memguard-$version.tar.gz"
cp "$spec" "$work/SPECS/"

nodeps=()
if ! rpm -q --quiet rpm 2>/dev/null; then
	echo "build-rpm.sh: rpm's database does not list this system's packages: BuildRequires not checked (--nodeps)"
	nodeps=(--nodeps)
fi
echo "build-rpm.sh: building memguard $version in $work"
jobs=$(nproc 2>/dev/null || echo 1)
rpmbuild -ba "${nodeps[@]}" --define "_topdir $work" --define "_smp_mflags -j$jobs" \
	"$work/SPECS/memguard.spec" || die "rpmbuild failed (missing build dependencies? see above)"

mkdir -p "$out"
shopt -s nullglob
results=("$work"/RPMS/*/*.rpm "$work"/SRPMS/*.rpm)
((${#results[@]})) || die "rpmbuild left no package in $work"
mv -f "${results[@]}" "$out/"
echo "build-rpm.sh: in $out:"
for f in "${results[@]}"; do
	echo "  ${f##*/}"
done
echo "inspect with: rpm -qlp $out/memguard-$version-*.rpm; rpmlint $out/*.rpm"
