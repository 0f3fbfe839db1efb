import SystemdBusTesting
import Testing

/// A daemon with counter-app's manifest under `id` (hosted through lifecycled, its log in
/// `counter.log`, its state in `counter-state`), pointed at the rig's broker: the one set-up of the
/// suites that drive the real example app through pushes.
@MainActor
func withHostedCounterApp(
    _ rig: FleetRig, id: String, _ body: (DaemonHarness) async throws -> Void
) async throws {
    let products = try #require(
        BuiltProducts.directory(containing: "counter-app"), "counter-app is not built; run `swift build` first")
    try await withDaemon(
        fleetConfiguration: rig.configurationPath,
        setUp: { dir in
            let launcher = try writeScript(
                dir, "counter.sh",
                "XDG_STATE_HOME=\(dir.path)/xdg exec \(products)/counter-app --host lifecycled --state-directory \(dir.path)/counter-state >>\(dir.path)/counter.log 2>&1"
            )
            try writeManifest(dir, id: id, executable: launcher)
        }, body)
}
