import FoundationEssentials

@testable import LifecycleDaemon

/// App manifests (`<data dir>/applifecycle/apps/<id>.json`): the input is the file.
///
/// Through `ManifestStore.read` (the bounded read, the JSON decoder, the field checks and the
/// mapping of decoder errors), then, for a manifest that loads, the property that it writes and
/// reads back as the same manifest.
enum ManifestFuzzing {
    static let target = FuzzTarget(name: "manifest", summary: "app manifest JSON (ManifestStore.read)") { bytes in
        let path = ScratchDirectory.write(bytes, to: "org.example.Fuzz.json")
        guard let manifest = try? ManifestStore.read(path) else { return }
        let encoded: Data
        do {
            encoded = try JSONEncoder().encode(manifest)
        } catch {
            FuzzTarget.fail("a loaded manifest does not encode: \(error)")
        }
        let again = ScratchDirectory.write(Array(encoded), to: "org.example.Fuzz.json")
        do {
            let reread = try ManifestStore.read(again)
            guard reread == manifest else {
                FuzzTarget.fail("manifest changed on a round trip: \(manifest) → \(reread)")
            }
        } catch {
            FuzzTarget.fail("a loaded manifest, written back, does not load: \(error)")
        }
    }
}
