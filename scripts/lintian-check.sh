#!/bin/bash
# Runs lintian (errors, warnings and informational tags) on the packages and fails on any error,
# and on any other tag that KEPT does not list. KEPT holds one tag per line, `tag: why it stays`;
# blank lines and lines starting with # are ignored. Prints lintian's output either way.
#
# usage: lintian-check.sh KEPT DEB...
set -euo pipefail
kept_file=$1
shift
report=$(lintian --display-info --tag-display-limit 0 "$@" 2>&1) || true
echo "$report"
kept=$(sed -n 's/^\([a-z0-9][a-z0-9+.-]*\):.*/\1/p' "$kept_file")
failed=0
while IFS= read -r line; do
    [[ $line =~ ^([EWIP]):\ [^:]+:\ ([a-z0-9][a-z0-9+.-]*) ]] || continue
    severity=${BASH_REMATCH[1]}
    tag=${BASH_REMATCH[2]}
    if [ "$severity" = E ]; then
        echo "lintian error (never kept): $line" >&2
        failed=1
    elif ! grep -qxF "$tag" <<<"$kept"; then
        echo "lintian tag not explained in $kept_file: $line" >&2
        failed=1
    fi
done <<<"$report"
[ "$failed" = 0 ] && echo "lintian: no errors; every other tag is explained in $kept_file"
exit "$failed"
