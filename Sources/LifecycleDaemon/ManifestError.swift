/// Why one app manifest file was rejected.
///
/// The project's one error shape (swift-service-lifecycle's `ServiceGroupError`): an opaque
/// ``code`` over a private enum to match on, and a message that says what to fix; show
/// ``description`` to people. ``ManifestStore`` collects one per bad file and
/// keeps loading the others, so a broken manifest never takes the daemon or another app down.
package struct ManifestError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem it is. Compare with the static members (`error.code == .unknownField`);
    /// the code's name appears in ``description`` so a log line can be grepped for it.
    struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case unreadable
            case malformedJSON = "malformed-json"
            case missingField = "missing-field"
            case wrongType = "wrong-type"
            case unknownField = "unknown-field"
            case invalidIdentifier = "invalid-identifier"
            case identifierMismatch = "identifier-mismatch"
            case executableNotAbsolute = "executable-not-absolute"
            case executableNotFound = "executable-not-found"
            case executableNotExecutable = "executable-not-executable"
            case invalidArgument = "invalid-argument"
            case invalidName = "invalid-name"
            case invalidURLScheme = "invalid-url-scheme"
            case duplicateURLScheme = "duplicate-url-scheme"
            case unknownBackgroundMode = "unknown-background-mode"
            case invalidShortcutItem = "invalid-shortcut-item"
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// The file or directory could not be read (permissions, I/O error, not a regular file, too large).
        static let unreadable = Code(.unreadable)
        /// The file is not a JSON object.
        static let malformedJSON = Code(.malformedJSON)
        /// A required field (`id`, `executable`) is missing.
        static let missingField = Code(.missingField)
        /// A field has the wrong JSON type (for example `arguments` is not an array of strings).
        static let wrongType = Code(.wrongType)
        /// The object has a field this version does not know (usually a typo).
        static let unknownField = Code(.unknownField)
        /// `id` is not a reverse-DNS identifier.
        static let invalidIdentifier = Code(.invalidIdentifier)
        /// `id` differs from the file name (`<id>.json`).
        static let identifierMismatch = Code(.identifierMismatch)
        /// `executable` is not an absolute path.
        static let executableNotAbsolute = Code(.executableNotAbsolute)
        /// `executable` does not exist or is not a regular file.
        static let executableNotFound = Code(.executableNotFound)
        /// `executable` exists but the daemon may not execute it.
        static let executableNotExecutable = Code(.executableNotExecutable)
        /// An entry of `arguments` cannot be passed to `execve` (it contains a NUL byte).
        static let invalidArgument = Code(.invalidArgument)
        /// `name` is present but empty.
        static let invalidName = Code(.invalidName)
        /// An entry of `urlSchemes` is not an RFC 3986 scheme.
        static let invalidURLScheme = Code(.invalidURLScheme)
        /// A URL scheme is already claimed by another app.
        static let duplicateURLScheme = Code(.duplicateURLScheme)
        /// An entry of `backgroundModes` is not one of ``BackgroundMode``.
        static let unknownBackgroundMode = Code(.unknownBackgroundMode)
        /// A quick action without a valid, unique `type` (a desktop action id) or with an empty title.
        static let invalidShortcutItem = Code(.invalidShortcutItem)

        /// The code's stable name, as in logs: `unreadable`.
        var description: String { base.rawValue }
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
