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

    /// Removes the directory and everything in it; errors are ignored (the test is over).
    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
