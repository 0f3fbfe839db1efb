import DesktopIntegration
import FoundationEssentials

/// `mimeapps.list` with the desktop entries it names: the input is split at lines of `--` into a
/// `mimeapps.list` (in `$XDG_CONFIG_HOME`) and up to four desktop entries (`a.desktop`,
/// `b.desktop`, `sub/c.desktop`, `d.desktop` in `$XDG_DATA_HOME/applications`); then `MIMEApps`
/// reads the tree as a session would and every MIME type the files mention is looked up.
enum MIMEAppsFuzzing {
    static let entryPaths = ["a.desktop", "b.desktop", "sub/c.desktop", "d.desktop"]

    static let target = FuzzTarget(name: "mimeapps", summary: "mimeapps.list and the entries it names") { bytes in
        ScratchDirectory.empty()
        let text = String(decoding: bytes, as: UTF8.self)
        var parts = text.split(separator: "\n--\n", omittingEmptySubsequences: false).map(String.init)
        let config = ScratchDirectory.makeDirectory("config")
        let data = ScratchDirectory.makeDirectory("data")
        ScratchDirectory.makeDirectory("data/applications/sub")
        ScratchDirectory.write(Array(parts.removeFirst().utf8), to: "config/mimeapps.list")
        for (part, path) in zip(parts, entryPaths) {
            ScratchDirectory.write(Array(part.utf8), to: "data/applications/" + path)
        }
        let apps = MIMEApps(environment: [
            "HOME": ScratchDirectory.path, "XDG_CONFIG_HOME": config, "XDG_DATA_HOME": data,
            "XDG_CONFIG_DIRS": "/nonexistent", "XDG_DATA_DIRS": "/nonexistent",
        ])
        var types: Set<String> = ["x-scheme-handler/https", "text/plain"]
        for line in text.split(separator: "\n") {
            if let equals = line.firstIndex(of: "=") { types.insert(String(line[..<equals])) }
            if line.hasPrefix("MimeType=") { types.formUnion(DesktopEntry.list(String(line.dropFirst(9)))) }
        }
        for type in types.sorted() {
            if let entry = apps.defaultApplication(for: type) { DesktopEntryFuzzing.exercise(entry) }
        }
        _ = apps.handler(for: URL(string: "https://example.net/")!)
        for path in entryPaths { _ = apps.entry(path.replacing("/", with: "-")) }
    }
}
