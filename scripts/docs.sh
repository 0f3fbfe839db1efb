#!/bin/bash
# Builds the API documentation of each library with DocC, the compiler's symbol graphs and the
# catalogs in Sources/<Module>/<Module>.docc; fails on any DocC warning. No package plugin: the
# toolchain's docc and `swift package dump-symbol-graph` do it without a dependency.
#
# Output: .build/docs/<Module>.doccarchive (open with `docc preview`, or serve the static site
# under .build/docs/<Module> that --transform-for-static-hosting writes).
set -euo pipefail
SWIFT=${SWIFT:-swift}
MODULES=(AppLifecycle AppLifecycleSystemd AppLifecycleService SystemdBus LifecycledProtocol LifecycledClient DesktopIntegration InProcessHost AppLifecycleMain AppLifecycleTesting SystemdBusTesting WebPush Base64URLCoding BrokerLink FleetProtocol)
docc=$(dirname "$(readlink -f "$(command -v "$SWIFT")")")/docc
[ -x "$docc" ] || docc=$(command -v docc)

$SWIFT package dump-symbol-graph --minimum-access-level public >/dev/null
graphs=$($SWIFT build --show-bin-path)/../symbolgraph
graphs=$(cd "$graphs" && pwd)
out=.build/docs
rm -rf "$out"
mkdir -p "$out"
failed=0
for module in "${MODULES[@]}"; do
    own="$out/symbol-graphs/$module"
    mkdir -p "$own"
    cp "$graphs/$module.symbols.json" "$own/"
    cp "$graphs/$module"@*.symbols.json "$own/" 2>/dev/null || true
    log="$out/$module.log"
    if ! "$docc" convert "Sources/$module/$module.docc" --additional-symbol-graph-dir "$own" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.applifecycle.$module" \
        --output-path "$out/$module.doccarchive" --transform-for-static-hosting \
        --hosting-base-path "$module" --warnings-as-errors >"$log" 2>&1; then
        failed=1
        grep -E "(warning|error):" -A3 "$log" | head -60
        echo "docs: $module has DocC warnings (all of them in $log)"
    else
        echo "docs: $module → $out/$module.doccarchive"
    fi
done
exit $failed
