#!/bin/bash
# Builds (or reuses) the Debian 12 root file system the real-host tier boots with systemd-nspawn.
#
# The tree lives outside the checkout, at $REALHOST_ROOT (default
# /var/cache/applifecycle/realhost-bookworm), and is rebuilt only when it is missing or when
# this recipe changes: the recipe's hash is written to .recipe inside the tree once the build
# has finished, and the new tree replaces the old one only then, so an interrupted build never
# leaves a half-made tree that a later run would take for a good one.
#
# A download that fails is retried once; a second failure ends the script with the reason on
# its last line.
set -euo pipefail

ROOT=${REALHOST_ROOT:-/var/cache/applifecycle/realhost-bookworm}
MIRROR=${REALHOST_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
# systemd as PID 1 with logind, timedated and the user manager; a session bus from
# dbus-user-session; PAM sessions for `systemd-run -p PAMName=login`; tzdata for
# `timedatectl set-timezone`; polkitd, without which logind refuses an unprivileged delay
# inhibitor (AccessDenied), as no desktop does; procps for the scenarios' process checks; man-db for `man -l`;
# sway with its shipped config.d (which hands WAYLAND_DISPLAY to the user manager), foot and a font
# for it, for the compositor scenario; Debian's mosquitto for the fleet scenario.
PACKAGES=systemd,systemd-sysv,dbus,dbus-user-session,libpam-systemd,polkitd,tzdata,procps,man-db,ca-certificates,python3-dbusmock,libmosquitto1,sway,foot,fonts-dejavu-core,mosquitto

recipe_hash() {
    { echo "$SUITE $MIRROR $PACKAGES"; cat "$0"; } | sha256sum | cut -d' ' -f1
}

want=$(recipe_hash)
if [ -f "$ROOT/.recipe" ] && [ "$(cat "$ROOT/.recipe")" = "$want" ]; then
    echo "real-host root file system: cached at $ROOT"
    exit 0
fi

mkdir -p "$(dirname "$ROOT")"
staging="$ROOT.staging.$$"
trap 'rm -rf "$staging"' EXIT

build() {
    rm -rf "$staging"
    debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$staging" "$MIRROR" \
        >"$staging.log" 2>&1
}

echo "real-host root file system: building $ROOT with debootstrap (a few minutes)"
if ! build; then
    echo "debootstrap failed once, retrying: $(tail -n 1 "$staging.log")"
    if ! build; then
        reason=$(grep -E 'E:|W: Failure|Couldn.t|Failed' "$staging.log" | tail -n 1)
        echo "real-host root file system: cannot download Debian $SUITE from $MIRROR: ${reason:-$(tail -n 1 "$staging.log")}"
        rm -f "$staging.log"
        exit 1
    fi
fi
rm -f "$staging.log"

# The machine's own configuration: a host name, an empty machine-id that systemd fills in at
# first boot, and a user for the login session (in systemd-journal, so `journalctl --user` reads
# the runtime journal of a volatile container).
echo realhost >"$staging/etc/hostname"
: >"$staging/etc/machine-id"
chroot "$staging" useradd --create-home --uid 1000 --groups systemd-journal --shell /bin/bash tester
# Quiet first boot: no getty on the console the test never reads.
chroot "$staging" systemctl mask console-getty.service getty@.service >/dev/null 2>&1 || true
echo "$want" >"$staging/.recipe"

rm -rf "$ROOT"
mv "$staging" "$ROOT"
trap - EXIT
echo "real-host root file system: ready at $ROOT"
