import Foundation

/// Finds the executables this package builds (`lifecycled`, `lifecyclectl`, the examples), for
/// tests that run them as real processes.
public enum BuiltProducts {
    /// The path of a built executable, or `nil` when it is not built.
    ///
    /// Looks beside the running test bundle first (`swift test` runs it from the build's products
    /// directory, debug or release), then in the package's `.build/debug`.
    ///
    /// - Parameters:
    ///   - name: The product's name, for example `lifecycled`.
    public static func path(of name: String) -> String? {
        var candidates = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path]
        // This file is Sources/SystemdBusTesting/BuiltProducts.swift: three levels below the root.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug").path)
        return candidates.map { $0 + "/" + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The directory that holds a built executable, or `nil` when it is not built; for tests that
    /// need several products of one build.
    ///
    /// - Parameters:
    ///   - name: One product's name.
    public static func directory(containing name: String) -> String? {
        path(of: name).map { URL(fileURLWithPath: $0).deletingLastPathComponent().path }
    }
}
