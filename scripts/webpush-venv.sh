#!/bin/bash
# Creates (once) the Python venv that WebPushTests' interop tests run: pywebpush, http-ece and
# py-vapid, independent implementations of RFC 8291 (aes128gcm) and RFC 8292 (VAPID), and
# prometheus-client, whose text-format parser reads the gateway's /metrics in its tests; pinned so a
# new release cannot change what the tests compare against. System site packages are visible (the
# Debian python3-cryptography is reused when it fits). Idempotent: a venv that already has the
# pinned versions is left alone.
#
# Usage: scripts/webpush-venv.sh          (from anywhere; the venv goes to <package root>/.build/webpush-venv)
#        WEBPUSH_VENV=/some/dir scripts/webpush-venv.sh
# Prints the venv's python path on stdout (progress goes to stderr); the tests find it there, or
# at $WEBPUSH_PYTHON.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${WEBPUSH_VENV:-$root/.build/webpush-venv}
pins=(pywebpush==2.5.0 http-ece==1.2.1 py-vapid==1.9.6 prometheus-client==0.26.0)
python=$venv/bin/python

installed() {
    "$python" - "${pins[@]}" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version, PackageNotFoundError
for pin in sys.argv[1:]:
    name, wanted = pin.split("==")
    try:
        if version(name) != wanted:
            sys.exit(1)
    except PackageNotFoundError:
        sys.exit(1)
PY
}

if [ ! -x "$python" ]; then
    mkdir -p "$(dirname "$venv")"
    /usr/bin/python3 -m venv --system-site-packages "$venv" >&2
fi
if ! installed; then
    "$python" -m pip install --disable-pip-version-check --quiet "${pins[@]}" >&2
    installed || { echo "webpush-venv: ${pins[*]} not importable in $venv" >&2; exit 1; }
fi
echo "$python"
