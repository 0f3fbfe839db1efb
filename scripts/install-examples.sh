#!/bin/bash
# Installs the example app counter-app under DESTDIR/PREFIX for lifecycled: the program in
# lib/applifecycle/examples, its manifest in share/applifecycle/apps, and the desktop entry,
# D-Bus service file and mimeinfo.cache that `lifecyclectl install-desktop-files` writes from that
# manifest (so `gio launch`, `xdg-open counter://increment` and a dock's quick actions reach it).
#
# usage: install-examples.sh DESTDIR PREFIX BINARIES_DIRECTORY
set -euo pipefail
destdir=$1
prefix=$2
binaries=$3
root="$destdir$prefix"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

install -d "$root/lib/applifecycle/examples" "$root/share/applifecycle/apps"
install -m 0755 "$binaries/counter-app" "$root/lib/applifecycle/examples/counter-app"
sed "s|@PREFIX@|$prefix|" dist/examples/org.example.Counter.json >"$work/org.example.Counter.json"
install -m 0644 "$work/org.example.Counter.json" "$root/share/applifecycle/apps/org.example.Counter.json"
"$binaries/lifecyclectl" install-desktop-files --manifest "$work/org.example.Counter.json" \
    --data-home "$root/share" --lifecyclectl "$prefix/bin/lifecyclectl"
