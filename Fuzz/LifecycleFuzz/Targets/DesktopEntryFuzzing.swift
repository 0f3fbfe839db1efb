import DesktopIntegration
import FoundationEssentials

/// Desktop entries (`.desktop` files): the input is the file, parsed as the URL opener and the
/// MIME lookup parse it, then every accessor and `arguments(opening:)` for a web and a file URL.
enum DesktopEntryFuzzing {
    static let urls = [URL(string: "https://example.net/a%20b?q=1#f")!, URL(fileURLWithPath: "/tmp/a b.txt")]

    static let target = FuzzTarget(name: "desktop-entry", summary: "desktop entry (.desktop) files") { bytes in
        let text = String(decoding: bytes, as: UTF8.self)
        guard let entry = try? DesktopEntry(parsing: text, id: "org.example.Fuzz.desktop") else { return }
        exercise(entry)
    }

    /// Reads everything a launcher reads of an entry.
    static func exercise(_ entry: DesktopEntry) {
        _ = (entry.name, entry.isDBusActivatable, entry.isHidden, entry.mimeTypes, entry.actions, entry.busName)
        for url in urls {
            if let arguments = entry.arguments(opening: url), arguments.isEmpty {
                FuzzTarget.fail("an empty argument list for Exec=\(entry.exec ?? "")")
            }
        }
    }
}
