import CSystemd
import Glibc
import Logging

/// A swift-log handler that writes structured entries to the systemd journal.
///
/// Each entry carries `MESSAGE`, `PRIORITY` (syslog's, from the log level), `SYSLOG_IDENTIFIER`,
/// `CODE_FILE`, `CODE_LINE`, `CODE_FUNC`, `LOGGER` (the logger's label) and every metadata key as
/// a field of its own, upper-cased with anything but letters, digits and `_` turned into `_`, so
/// that `journalctl --user -u lifecycled APP_ID=org.example.Counter` shows one app's lines. The
/// journal stamps the entry itself: no second timestamp in the message.
///
/// By default it sends through libsystemd's `sd_journal_sendv` (the native protocol on
/// `/run/systemd/journal/socket`, with a memfd for large entries). With ``Destination/socket(_:)``
/// it speaks the same native protocol to another datagram socket: a journal in a container, or a
/// stand-in journald in a test.
///
/// Use ``bootstrap(identifier:logLevel:metadata:environment:)`` at the start of a program: it picks this handler
/// when the program runs under systemd with its output going to the journal, and a standard-error
/// stream otherwise.
public struct JournalLogHandler: LogHandler {
    /// Where the entries go.
    public enum Destination: Sendable, Equatable {
        /// journald, through `sd_journal_sendv`.
        case systemd
        /// A datagram socket at this path that speaks journald's native protocol.
        case socket(String)
    }

    /// The logger's label, sent as `LOGGER`.
    public let label: String
    /// The `SYSLOG_IDENTIFIER` of every entry (`journalctl -t` selects by it).
    public let identifier: String
    /// Where the entries go.
    public let destination: Destination
    /// The handler's own metadata, merged under each entry's.
    public var metadata: Logger.Metadata = [:]
    /// Adds metadata from task-local context to every entry.
    public var metadataProvider: Logger.MetadataProvider?
    /// The lowest level that is written.
    public var logLevel: Logger.Level = .info

    /// Creates a handler.
    ///
    /// - Parameters:
    ///   - label: The logger's label (swift-log passes it to the factory).
    ///   - identifier: The `SYSLOG_IDENTIFIER`, usually the program's name.
    ///   - destination: journald itself, or another socket speaking its native protocol.
    public init(label: String, identifier: String, destination: Destination = .systemd) {
        self.label = label
        self.identifier = identifier
        self.destination = destination
    }

    /// Gets or sets one key of the handler's own metadata.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes one entry. A journal that cannot take it (gone, full) drops it silently, as
    /// `sd_journal_sendv` callers do: logging must never stop the program.
    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let own = event.metadata { merged.merge(own) { _, new in new } }
        if let error = event.error { merged["error"] = "\(error)" }
        let fields = Self.fields(
            message: event.message.description, level: event.level, identifier: identifier, label: label,
            file: event.file, line: event.line, function: event.function, metadata: merged)
        switch destination {
        case .systemd: Self.sendThroughLibsystemd(fields)
        case .socket(let path): _ = Self.send(fields, toSocket: path)
        }
    }

    // MARK: Fields

    /// syslog's priority for a swift-log level (`PRIORITY=`): trace and debug are 7, info 6, notice 5,
    /// warning 4, error 3, critical 2.
    ///
    /// - Parameters:
    ///   - level: The swift-log level.
    public static func priority(of level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// A journal field name for a metadata key: upper-case ASCII letters, digits and `_`, no leading
    /// `_` (those fields are the journal's own, trusted ones) or digit, at most 64 bytes.
    ///
    /// - Parameters:
    ///   - key: A swift-log metadata key such as `app-id`.
    /// - Returns: The field name (`APP_ID`), or `nil` when nothing usable is left.
    public static func fieldName(for key: String) -> String? {
        var name = String(
            key.uppercased().unicodeScalars.map { scalar -> Character in
                switch scalar {
                case "A"..."Z", "0"..."9", "_": Character(scalar)
                default: "_"
                }
            })
        while name.first == "_" { name.removeFirst() }
        if let first = name.first, first.isNumber { name = "F_" + name }
        guard !name.isEmpty else { return nil }
        return String(name.prefix(64))
    }

    /// The fields of one entry, in the order they are sent.
    static func fields(
        message: String, level: Logger.Level, identifier: String, label: String, file: String, line: UInt,
        function: String, metadata: Logger.Metadata
    ) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = [
            ("MESSAGE", message), ("PRIORITY", "\(priority(of: level))"), ("SYSLOG_IDENTIFIER", identifier),
            ("LOGGER", label), ("CODE_FILE", file), ("CODE_LINE", "\(line)"), ("CODE_FUNC", function),
        ]
        let reserved = Set(fields.map(\.name))
        for key in metadata.keys.sorted() {
            guard let name = fieldName(for: key), !reserved.contains(name), let value = metadata[key] else { continue }
            fields.append((name, Self.text(of: value)))
        }
        return fields
    }

    /// Metadata as journal text: strings as they are, collections in swift-log's description.
    private static func text(of value: Logger.Metadata.Value) -> String {
        if case .string(let string) = value { return string }
        return value.description
    }

    /// The native protocol's encoding of one entry (systemd's `JOURNAL_NATIVE_PROTOCOL`): `NAME=value\n`,
    /// or, for a value with a newline, `NAME\n`, the value's length as 64-bit little endian, the value, `\n`.
    ///
    /// - Parameters:
    ///   - fields: The entry's fields.
    public static func nativeEncoding(of fields: [(name: String, value: String)]) -> [UInt8] {
        var bytes: [UInt8] = []
        for (name, value) in fields {
            bytes.append(contentsOf: name.utf8)
            if value.utf8.contains(UInt8(ascii: "\n")) {
                bytes.append(UInt8(ascii: "\n"))
                withUnsafeBytes(of: UInt64(value.utf8.count).littleEndian) { bytes.append(contentsOf: $0) }
            } else {
                bytes.append(UInt8(ascii: "="))
            }
            bytes.append(contentsOf: value.utf8)
            bytes.append(UInt8(ascii: "\n"))
        }
        return bytes
    }

    // MARK: Sending

    /// `sd_journal_sendv` with one `NAME=value` iovec per field (it takes binary-safe values as they are).
    private static func sendThroughLibsystemd(_ fields: [(name: String, value: String)]) {
        let buffers = fields.map { Array("\($0.name)=\($0.value)".utf8) }
        var vectors: [iovec] = []
        vectors.reserveCapacity(buffers.count)
        func send(_ index: Int) {
            if index == buffers.count {
                _ = sd_journal_sendv(vectors, Int32(vectors.count))
                return
            }
            buffers[index].withUnsafeBytes { raw in
                vectors.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress), iov_len: raw.count))
                send(index + 1)
            }
        }
        send(0)
    }

    /// Sends one entry as one datagram; `false` when the socket cannot be reached or refuses it.
    static func send(_ fields: [(name: String, value: String)], toSocket path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        guard pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in pathBytes.enumerated() { raw[index] = byte }
        }
        let datagram = nativeEncoding(of: fields)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                datagram.withUnsafeBytes { raw in
                    sendto(
                        fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL), socketAddress,
                        socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
        return sent == datagram.count
    }

    // MARK: Choosing the handler

    /// Whether this process's standard error is connected to the journal.
    ///
    /// systemd sets `$JOURNAL_STREAM` to the `device:inode` of the stream it connects a unit's
    /// output to; it is the journal only while standard error is still that very stream (a child
    /// whose stderr was redirected inherits the variable but not the stream).
    ///
    /// - Parameters:
    ///   - environment: The environment to read `$JOURNAL_STREAM` from.
    public static func standardErrorIsJournal(environment: [String: String]) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var status = stat()
        guard fstat(STDERR_FILENO, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }

    /// The journal's native socket, where `sd_journal_sendv` writes.
    public static let nativeSocketPath = "/run/systemd/journal/socket"

    /// Whether this process should log natively to the journal: its standard error is the journal
    /// (``standardErrorIsJournal(environment:)``), or it runs as a systemd unit (`$INVOCATION_ID`,
    /// set by the service manager for every unit it starts), the journal's native socket exists and
    /// standard error is not a terminal (a shell under `systemd-run --pty` or `machinectl shell`
    /// inherits `$INVOCATION_ID`; its user reads the terminal).
    ///
    /// - Parameters:
    ///   - environment: The process's environment (`$JOURNAL_STREAM`, `$INVOCATION_ID`).
    ///   - socketPath: The native socket to look for (a test's stand-in).
    public static func shouldLogToJournal(environment: [String: String], socketPath: String = nativeSocketPath)
        -> Bool
    {
        if standardErrorIsJournal(environment: environment) { return true }
        guard let invocation = environment["INVOCATION_ID"], !invocation.isEmpty, isatty(STDERR_FILENO) == 0 else {
            return false
        }
        var status = stat()
        return stat(socketPath, &status) == 0 && (status.st_mode & S_IFMT) == S_IFSOCK
    }

    /// Bootstraps swift-log: journal entries under systemd (``shouldLogToJournal(environment:socketPath:)``),
    /// otherwise lines on standard error (with swift-log's timestamp), at `logLevel` and above.
    ///
    /// Call it once, first thing in `main`. An app passes its id as `["app_id": "\(id)"]`, so its
    /// lines carry `APP_ID=` like lifecycled's lines about it.
    ///
    /// - Parameters:
    ///   - identifier: The `SYSLOG_IDENTIFIER`, usually the program's name.
    ///   - logLevel: The lowest level written.
    ///   - metadata: Metadata every entry carries (each key becomes a journal field).
    ///   - environment: The process's environment (`$JOURNAL_STREAM`, `$INVOCATION_ID`).
    /// - Returns: Whether the journal was chosen.
    @discardableResult
    public static func bootstrap(
        identifier: String, logLevel: Logger.Level = .info, metadata: Logger.Metadata = [:],
        environment: [String: String]
    ) -> Bool {
        let journal = shouldLogToJournal(environment: environment)
        LoggingSystem.bootstrap { label in
            if journal {
                var handler = JournalLogHandler(label: label, identifier: identifier)
                handler.logLevel = logLevel
                handler.metadata = metadata
                return handler
            }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = logLevel
            handler.metadata = metadata
            return handler
        }
        return journal
    }
}
