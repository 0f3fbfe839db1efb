#!/bin/bash
# Builds applifecycle_<version>_<arch>.deb with dpkg-deb from the release binaries, which carry
# the Swift runtime (--static-swift-stdlib), so the package runs on a Debian 12 without a Swift
# toolchain. Depends: is computed by dpkg-shlibdeps from the binaries themselves (libsystemd0,
# libc6, libstdc++6, libgcc-s1), not written by hand.
#
# usage: package-deb.sh VERSION BINARIES_DIRECTORY OUTPUT_DIRECTORY
set -euo pipefail
version=$1
binaries=$2
output=$3
arch=$(dpkg --print-architecture)
package=applifecycle
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tree="$work/tree"

scripts/install-tree.sh "$tree" /usr "$binaries"
# No debugging symbols in the package (they are most of a static Swift binary's size).
strip --strip-unneeded "$tree/usr/bin/lifecycled" "$tree/usr/bin/lifecyclectl"

doc="$tree/usr/share/doc/$package"
install -d "$doc"
install -m 0644 dist/debian/copyright "$doc/copyright"
sed "s/@VERSION@/$version/; s/@DATE@/$(date -R -d @"${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")/" \
    dist/debian/changelog | gzip -9n >"$doc/changelog.Debian.gz"

install -d "$tree/DEBIAN"
# dpkg-shlibdeps reads debian/control from the current directory.
mkdir -p "$work/shlibs/debian"
printf 'Source: %s\n\nPackage: %s\nArchitecture: any\n' "$package" "$package" >"$work/shlibs/debian/control"
depends=$(cd "$work/shlibs" && dpkg-shlibdeps -O "$tree/usr/bin/lifecycled" "$tree/usr/bin/lifecyclectl" \
    | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "dpkg-shlibdeps found no dependencies" >&2; exit 1; }

installed_size=$(du -sk --exclude=DEBIAN "$tree" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@DEPENDS@/$depends/" \
    -e "s/@INSTALLED_SIZE@/$installed_size/" dist/debian/control >"$tree/DEBIAN/control"
(cd "$tree" && find usr -type f -exec md5sum {} + | sort -k2) >"$tree/DEBIAN/md5sums"
chmod 0644 "$tree/DEBIAN/control" "$tree/DEBIAN/md5sums"

mkdir -p "$output"
deb="$output/${package}_${version}_${arch}.deb"
dpkg-deb --root-owner-group --build "$tree" "$deb" >/dev/null
echo "$deb"
