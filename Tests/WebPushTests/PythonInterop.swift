import Foundation
import SystemdBusTesting
import Testing

/// Runs snippets of Python in the venv `scripts/webpush-venv.sh` makes, where pywebpush, http-ece
/// and py-vapid (independent implementations of RFC 8291 and RFC 8292) are installed.
enum PythonInterop {
    /// The package root: three levels above this file (`Tests/WebPushTests/PythonInterop.swift`).
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    /// `$WEBPUSH_PYTHON`, else the venv's interpreter, if it exists.
    static var interpreter: String? {
        let candidates = [
            ProcessInfo.processInfo.environment["WEBPUSH_PYTHON"], "\(packageRoot)/.build/webpush-venv/bin/python",
        ]
        return candidates.compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Helpers every snippet starts with: base64url in both directions, and errors reported on
    /// standard output (the pipe ChildProcess reads; stderr goes nowhere) with exit status 1.
    static let prelude = """
        import base64, json, sys, traceback
        def unb64(text): return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        def b64(data): return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

        """

    /// Runs `script` (after ``prelude``) with `arguments` in `sys.argv[1...]` and decodes the one
    /// JSON object of strings it prints.
    ///
    /// Records an issue that says to run `scripts/webpush-venv.sh` when there is no interpreter:
    /// the interop tests fail rather than skip, so a missing venv is never mistaken for a pass.
    static func run(
        _ script: String, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [String: String] {
        let python = try #require(
            interpreter,
            """
            No Python with pywebpush, http-ece and py-vapid: run scripts/webpush-venv.sh (it creates \
            \(packageRoot)/.build/webpush-venv), or set WEBPUSH_PYTHON to such an interpreter.
            """, sourceLocation: sourceLocation)
        let wrapped =
            prelude + "try:\n"
            + script.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }
            .joined(separator: "\n")
            + "\nexcept Exception:\n    traceback.print_exc(file=sys.stdout)\n    sys.exit(1)\n"
        let (status, output) = try ChildProcess.run(python, ["-c", wrapped] + arguments)
        try #require(status == 0, "python failed (\(status)):\n\(output)", sourceLocation: sourceLocation)
        let line = output.split(separator: "\n").last.map(String.init) ?? ""
        return try #require(
            try? JSONDecoder().decode([String: String].self, from: Data(line.utf8)),
            "python printed no JSON object:\n\(output)", sourceLocation: sourceLocation)
    }
}
