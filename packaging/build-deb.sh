#!/bin/bash
# Builds the memguard Debian package.
#
#   packaging/build-deb.sh [OUTDIR]       default OUTDIR: build-deb/ at the top of the tree
#
# The debian/ directory cannot live at the top of this tree, so this copies
# the source (what git tracks plus new files it does not ignore; without git,
# everything but .git and build*/) to a temporary directory, puts
# packaging/debian there as debian/, runs "dpkg-buildpackage -us -uc -b", and
# moves the .deb files, .buildinfo and .changes to OUTDIR. The package is
# built, not installed. Needs: dpkg-dev, debhelper and the Build-Depends of
# packaging/debian/control (apt-get install debhelper cmake pkg-config
# libsystemd-dev libinih-dev).
set -euo pipefail

die() {
	echo "build-deb.sh: $*" >&2
	exit 1
}

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=source-tree.sh
. "$top/packaging/source-tree.sh"
out=${1:-$top/build-deb}
[[ $# -le 1 ]] || die "usage: packaging/build-deb.sh [OUTDIR]"
for tool in dpkg-buildpackage dpkg-parsechangelog dh; do
	command -v "$tool" >/dev/null || die "$tool not found: apt-get install dpkg-dev debhelper"
done
[[ -f $top/packaging/debian/control ]] || die "no packaging/debian/control below $top"

version=$(dpkg-parsechangelog -l "$top/packaging/debian/changelog" -S Version)
work=$(mktemp -d "${TMPDIR:-/tmp}/memguard-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
src=$work/memguard-$version
mkdir "$src"

# The source tree, without build directories, caches or a debian/ of its own.
copy_source_tree "$top" "$src"
[[ ! -e $src/debian ]] || die "the source tree has a debian/ of its own: remove it, packaging/debian is used"
cp -a "$top/packaging/debian" "$src/debian"

echo "build-deb.sh: building memguard $version in $src"
jobs=$(nproc 2>/dev/null || echo 1)
(cd "$src" && DEB_BUILD_OPTIONS="parallel=$jobs ${DEB_BUILD_OPTIONS:-}" dpkg-buildpackage -us -uc -b) ||
	die "dpkg-buildpackage failed (missing build dependencies? see above)"

mkdir -p "$out"
shopt -s nullglob
results=("$work"/*.deb "$work"/*.ddeb "$work"/*.buildinfo "$work"/*.changes)
((${#results[@]})) || die "dpkg-buildpackage left no package in $work"
mv -f "${results[@]}" "$out/"
echo "build-deb.sh: in $out:"
for f in "${results[@]}"; do
	echo "  ${f##*/}"
done
echo "inspect with: dpkg-deb -c $out/memguard_${version}_*.deb; lintian $out/memguard_${version}_*.changes"
