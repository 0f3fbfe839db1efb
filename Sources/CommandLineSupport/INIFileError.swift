/// Why an INI file (``INIFile``) cannot be used: its path, the line, what is wrong and what to do.
///
/// The project's one error shape (swift-service-lifecycle's `ServiceGroupError`): an opaque
/// ``code`` over a private enum and a ``message`` a person can act on.
public struct INIFileError: Error, CustomStringConvertible, Sendable {
    /// What kind of problem this is. Compare with the static members (`error.code == .syntax`).
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case unreadable
            case syntax
            case setting
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// The file cannot be read, is not a regular file, is too large or is not UTF-8 text.
        public static let unreadable = Code(.unreadable)
        /// A line is not a `[section]`, a `key = value`, a comment or blank, or a key is set twice.
        public static let syntax = Code(.syntax)
        /// A section or key the program does not know.
        public static let setting = Code(.setting)

        /// The code's name, as in logs: `syntax`.
        public var description: String { base.rawValue }
    }

    /// The kind of problem.
    public let code: Code
    /// `<path>[:<line>]: what is wrong[; what to do]`.
    public let message: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of problem.
    ///   - message: The file (and line), what is wrong and what to do.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
