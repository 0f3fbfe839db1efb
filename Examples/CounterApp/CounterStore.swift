import AppLifecycle
import Foundation

/// The counter's file: one decimal number, written atomically (temporary file, fsync, rename,
/// fsync of the directory), so a crash leaves either the old count or the new one.
struct CounterStore: Sendable {
    /// The directory that holds `count`.
    let directory: String

    /// The file's path.
    var path: String { directory + "/count" }

    /// The directory to use: the option, else `$STATE_DIRECTORY` (its first entry), else
    /// `$XDG_STATE_HOME/counter-app`, else `~/.local/state/counter-app`.
    static func directory(option: String?, environment: [String: String]) -> String {
        if let option, !option.isEmpty { return option }
        if let state = environment["STATE_DIRECTORY"]?.split(separator: ":").first, !state.isEmpty {
            return String(state)
        }
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") { return xdg + "/counter-app" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state/counter-app"
    }

    /// The stored count, or 0 when there is none or it is unreadable.
    func load() -> Int {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return 0 }
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    /// Writes the count atomically, with the core's ``AtomicFile``.
    ///
    /// - Throws: ``ApplicationError`` with code `io` naming the failed step.
    func save(_ count: Int) throws {
        try AtomicFile.write(Data("\(count)\n".utf8), to: URL(fileURLWithPath: path))
    }
}
