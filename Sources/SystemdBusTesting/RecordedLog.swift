import Logging
import Synchronization

/// The messages a logger was given, in order: for tests that a component said something (once).
public final class RecordedLog: Sendable {
    private let lines = Mutex<[String]>([])

    /// An empty log.
    public init() {}

    /// Every message so far.
    public var messages: [String] { lines.withLock { $0 } }

    /// How many messages match.
    public func count(_ predicate: (String) -> Bool) -> Int {
        lines.withLock { $0.filter(predicate).count }
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
            log.lines.withLock { $0.append(event.message.description) }
        }
    }
}
