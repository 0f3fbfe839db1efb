#!/bin/bash
# Builds the Debian packages with dpkg-deb from the release binaries, which carry the Swift
# runtime (--static-swift-stdlib), so they run on a Debian 12 without a Swift toolchain:
#
#   applifecycle_<version>_<arch>.deb           what `make install PREFIX=/usr` lays out
#                                               (scripts/install-tree.sh): lifecycled, lifecyclectl,
#                                               lifecycle-push-gateway with its system unit and
#                                               /etc/applifecycle/push-gateway.conf (a conffile), the
#                                               man pages, completions and the fleet's examples;
#   applifecycle-examples_<version>_<arch>.deb  the example app counter-app with its manifest and
#                                               desktop files (scripts/install-examples.sh).
#
# Each gets the DEP-5 copyright file and a changelog; Depends: is computed by dpkg-shlibdeps from
# the binaries themselves (libc6, libgcc-s1, libstdc++6, libsystemd0), not written by hand. The
# script fails if any file in a package names this checkout's directory (the dist build maps the
# compilers' source paths away, Makefile DIST_PREFIX_MAP).
#
# usage: package-deb.sh VERSION BINARIES_DIRECTORY OUTPUT_DIRECTORY
set -euo pipefail
version=$1
binaries=$2
output=$3
arch=$(dpkg --print-architecture)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
checkout=$(pwd -P)
date=$(date -R -d @"${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")

# Builds one package from the tree $work/<package>: strips the programs named, writes its doc
# directory, DEBIAN/control (from dist/debian/<control>), md5sums and conffiles, checks it for
# build paths, and prints the .deb's path.
build_package() {
    local package=$1 control=$2
    shift 2
    local tree="$work/$package"
    local programs=("$@")
    # No debugging symbols in the package (they are most of a static Swift binary's size).
    strip --strip-unneeded --remove-section=.comment "${programs[@]/#/$tree}"

    local doc="$tree/usr/share/doc/$package"
    install -d "$doc"
    install -m 0644 dist/debian/copyright "$doc/copyright"
    sed "s/@VERSION@/$version/; s/@DATE@/$date/" dist/debian/changelog \
        | gzip -9n >"$doc/changelog.gz"  # a native package (no Debian revision): changelog.gz

    install -d "$tree/DEBIAN"
    # dpkg-shlibdeps reads debian/control from the current directory.
    mkdir -p "$work/shlibs-$package/debian"
    printf 'Source: applifecycle\n\nPackage: %s\nArchitecture: any\n' "$package" \
        >"$work/shlibs-$package/debian/control"
    local depends
    depends=$(cd "$work/shlibs-$package" && dpkg-shlibdeps -O "${programs[@]/#/$tree}" \
        | sed -n 's/^shlibs:Depends=//p')
    [ -n "$depends" ] || { echo "dpkg-shlibdeps found no dependencies for $package" >&2; exit 1; }

    local named
    named=$(grep -rlaF "$checkout" "$tree" || true)
    if [ -n "$named" ]; then
        echo "these files of $package name the build directory $checkout:" >&2
        for file in $named; do echo "  ${file#"$tree"}: $(grep -caF "$checkout" "$file") lines" >&2; done
        exit 1
    fi

    local installed_size
    installed_size=$(du -sk --exclude=DEBIAN "$tree" | cut -f1)
    sed -e "s/@VERSION@/$version/g" -e "s/@ARCH@/$arch/" -e "s/@DEPENDS@/$depends/" \
        -e "s/@INSTALLED_SIZE@/$installed_size/" "dist/debian/$control" >"$tree/DEBIAN/control"
    (cd "$tree" && find usr -type f -exec md5sum {} + | sort -k2) >"$tree/DEBIAN/md5sums"
    chmod 0644 "$tree/DEBIAN/control" "$tree/DEBIAN/md5sums"
    if [ -d "$tree/etc" ]; then
        (cd "$tree" && find etc -type f | sed 's|^|/|' | sort) >"$tree/DEBIAN/conffiles"
        chmod 0644 "$tree/DEBIAN/conffiles"
    fi

    mkdir -p "$output"
    local deb="$output/${package}_${version}_${arch}.deb"
    dpkg-deb --root-owner-group --build "$tree" "$deb" >/dev/null
    echo "$deb"
}

scripts/install-tree.sh "$work/applifecycle" /usr "$binaries"
build_package applifecycle control /usr/bin/lifecycled /usr/bin/lifecyclectl /usr/bin/lifecycle-push-gateway

scripts/install-examples.sh "$work/applifecycle-examples" /usr "$binaries" >/dev/null
# The MIME cache is the desktop-file-utils trigger's to write, from every package's entries.
rm -f "$work/applifecycle-examples/usr/share/applications/mimeinfo.cache"
build_package applifecycle-examples control-examples /usr/lib/applifecycle/examples/counter-app
