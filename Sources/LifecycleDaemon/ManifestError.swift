/// Why one app manifest file was rejected.
///
/// An extensible error struct with static codes (the swift-service-lifecycle idiom): match on
/// ``code``, show ``description`` to people. ``ManifestStore`` collects one per bad file and
/// keeps loading the others, so a broken manifest never takes the daemon or another app down.
package struct ManifestError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem it is.
    ///
    /// Codes are compared by their raw string, which also appears in ``description`` so a log
    /// line can be grepped for it.
    struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's stable name, for example `"invalid-url-scheme"`.
        var rawValue: String

        /// Creates a code from its stable name.
        ///
        /// - Parameters:
        ///   - rawValue: The name.
        init(rawValue: String) { self.rawValue = rawValue }

        /// The file or directory could not be read (permissions, I/O error, not a regular file, too large).
        static let unreadable = Code(rawValue: "unreadable")
        /// The file is not a JSON object.
        static let malformedJSON = Code(rawValue: "malformed-json")
        /// A required field (`id`, `executable`) is missing.
        static let missingField = Code(rawValue: "missing-field")
        /// A field has the wrong JSON type (for example `arguments` is not an array of strings).
        static let wrongType = Code(rawValue: "wrong-type")
        /// The object has a field this version does not know (usually a typo).
        static let unknownField = Code(rawValue: "unknown-field")
        /// `id` is not a reverse-DNS identifier.
        static let invalidIdentifier = Code(rawValue: "invalid-identifier")
        /// `id` differs from the file name (`<id>.json`).
        static let identifierMismatch = Code(rawValue: "identifier-mismatch")
        /// `executable` is not an absolute path.
        static let executableNotAbsolute = Code(rawValue: "executable-not-absolute")
        /// `executable` does not exist or is not a regular file.
        static let executableNotFound = Code(rawValue: "executable-not-found")
        /// `executable` exists but the daemon may not execute it.
        static let executableNotExecutable = Code(rawValue: "executable-not-executable")
        /// An entry of `arguments` cannot be passed to `execve` (it contains a NUL byte).
        static let invalidArgument = Code(rawValue: "invalid-argument")
        /// `name` is present but empty.
        static let invalidName = Code(rawValue: "invalid-name")
        /// An entry of `urlSchemes` is not an RFC 3986 scheme.
        static let invalidURLScheme = Code(rawValue: "invalid-url-scheme")
        /// A URL scheme is already claimed by another app.
        static let duplicateURLScheme = Code(rawValue: "duplicate-url-scheme")
        /// An entry of `backgroundModes` is not one of ``BackgroundMode``.
        static let unknownBackgroundMode = Code(rawValue: "unknown-background-mode")
        /// A quick action without a valid, unique `type` (a desktop action id) or with an empty title.
        static let invalidShortcutItem = Code(rawValue: "invalid-shortcut-item")

        /// The stable name.
        var description: String { rawValue }
    }

    /// What kind of problem it is.
    var code: Code
    /// The manifest file (or apps directory) the problem is in.
    var path: String
    /// A sentence for people: what is wrong and, where it helps, what was expected.
    var message: String

    /// Creates a manifest error.
    ///
    /// - Parameters:
    ///   - code: What kind of problem it is.
    ///   - path: The file the problem is in; empty while a manifest is validated outside a file.
    ///   - message: A sentence for people.
    init(_ code: Code, path: String = "", _ message: String) {
        self.code = code
        self.path = path
        self.message = message
    }

    /// `path: message [code]`.
    package var description: String {
        path.isEmpty ? "\(message) [\(code)]" : "\(path): \(message) [\(code)]"
    }
}
