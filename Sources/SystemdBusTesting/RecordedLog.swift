import Logging
import Synchronization

/// The messages a logger was given, in order, with their metadata: for tests that a component said
/// something (once), and with which fields (what `JournalLogHandler` makes journal fields of).
public final class RecordedLog: Sendable {
    /// One message and its metadata (the logger's, overridden by the call's), as text.
    public struct Entry: Sendable {
        /// The message.
        public var message: String
        /// The metadata by key, each value as text.
        public var metadata: [String: String]
    }

    private let lines = Mutex<[Entry]>([])

    /// An empty log.
    public init() {}

    /// Every message so far.
    public var messages: [String] { lines.withLock { $0.map(\.message) } }

    /// Every message so far, with its metadata.
    public var entries: [Entry] { lines.withLock { $0 } }

    /// How many messages match.
    public func count(_ predicate: (String) -> Bool) -> Int {
        lines.withLock { $0.filter { predicate($0.message) }.count }
    }

    /// A logger that records here (and nowhere else), from debug up.
    ///
    /// - Parameters:
    ///   - label: The logger's label.
    public func logger(label: String) -> Logger {
        Logger(label: label) { _ in Handler(log: self) }
    }

    private struct Handler: LogHandler {
        let log: RecordedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            let entry = Entry(message: event.message.description, metadata: merged.mapValues(\.description))
            log.lines.withLock { $0.append(entry) }
        }
    }
}
