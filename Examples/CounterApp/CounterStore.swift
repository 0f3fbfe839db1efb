import Foundation

#if canImport(Glibc)
import Glibc
#endif

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
        if let state = environment["STATE_DIRECTORY"]?.split(separator: ":").first, !state.isEmpty { return String(state) }
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") { return xdg + "/counter-app" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state/counter-app"
    }

    /// The stored count, or 0 when there is none or it is unreadable.
    func load() -> Int {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return 0 }
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    /// Writes the count atomically.
    func save(_ count: Int) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let temporary = directory + "/.count.\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        let bytes = Array("\(count)\n".utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(fd) == 0 else {
            let code = errno
            close(fd)
            unlink(temporary)
            throw POSIXError(.init(rawValue: code) ?? .EIO)
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw POSIXError(.init(rawValue: code) ?? .EIO)
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
    }
}
