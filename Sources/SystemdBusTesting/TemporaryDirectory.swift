import Foundation
import Glibc

/// A fresh directory under `/tmp` for one test, removed with its contents by ``remove()``
/// (call it in a `defer`).
public struct TemporaryDirectory: Sendable {
    /// The directory's absolute path.
    public let path: String

    /// Creates the directory with `mkdtemp`.
    ///
    /// - Parameters:
    ///   - prefix: The start of the directory's name, to tell tests' leftovers apart.
    /// - Throws: ``FixtureError`` when `mkdtemp` fails.
    public init(prefix: String = "applifecycle-test") throws {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard let result = mkdtemp(&template) else {
            throw FixtureError("mkdtemp /tmp/\(prefix)-XXXXXX: \(String(cString: strerror(errno)))")
        }
        path = String(cString: result)
    }

    /// The path of `name` inside the directory.
    ///
    /// - Parameters:
    ///   - name: A file name (or a relative path).
    public func appending(_ name: String) -> String { path + "/" + name }

    /// Writes a file (creating parent directories) and returns its path.
    ///
    /// The file is opened close-on-exec, so a child that a parallel test spawns meanwhile does not
    /// inherit the write end (exec'ing the file as a script would then fail with `ETXTBSY`).
    ///
    /// - Parameters:
    ///   - relative: The file's path inside the directory.
    ///   - contents: The text to write.
    ///   - mode: The file's permission bits.
    /// - Throws: ``FixtureError`` when the file cannot be written.
    @discardableResult
    public func write(_ relative: String, _ contents: String, mode: mode_t = 0o644) throws -> String {
        let full = appending(relative)
        try FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let fd = open(full, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw FixtureError("open \(full): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array(contents.utf8)
        guard bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw FixtureError("write \(full): \(String(cString: strerror(errno)))")
        }
        fchmod(fd, mode)
        return full
    }

    /// Writes an executable `/bin/sh` script and returns its path.
    ///
    /// - Parameters:
    ///   - name: The script's file name.
    ///   - body: The script after its `#!/bin/sh` line.
    /// - Throws: ``FixtureError`` when the file cannot be written.
    public func script(_ name: String, _ body: String) throws -> String {
        try write(name, "#!/bin/sh\n" + body + "\n", mode: 0o755)
    }

    /// Creates a FIFO and returns its path.
    ///
    /// - Parameters:
    ///   - name: The FIFO's file name.
    /// - Throws: ``FixtureError`` when `mkfifo` fails.
    public func fifo(_ name: String) throws -> String {
        let full = appending(name)
        guard mkfifo(full, 0o600) == 0 else {
            throw FixtureError("mkfifo \(full): \(String(cString: strerror(errno)))")
        }
        return full
    }

    /// Removes the directory and everything in it; errors are ignored (the test is over).
    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
