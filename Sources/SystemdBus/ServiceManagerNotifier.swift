import CSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// Tells the service manager about the service's state with `sd_notify(3)`.
///
/// A thin wrapper over libsystemd: each call sends one datagram to the socket named by `$NOTIFY_SOCKET`
/// (`READY=1`, `STATUS=…`, `STOPPING=1`, `EXTEND_TIMEOUT_USEC=…`, `WATCHDOG=1`). When the variable is not set
/// (the process was not started by systemd with `Type=notify`), every call is a no-op that returns `false`.
/// The environment is read on each call and never unset, so the notifier is a stateless value that may be
/// used from any thread.
public struct ServiceManagerNotifier: Sendable {
    /// A failed `sd_notify` call, or a failed send of its datagram.
    ///
    /// The project's one error shape (swift-service-lifecycle's `ServiceGroupError`): an opaque
    /// ``code`` over a private enum, a message, and the `errno` of the failed call.
    public struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// What kind of failure this is. Compare with the static members (`error.code == .sendFailed`).
        public struct Code: Sendable, Hashable, CustomStringConvertible {
            private enum Base: String, Sendable, Hashable {
                case sendFailed = "send-failed"
                case invalidSocket = "invalid-socket"
            }

            private let base: Base

            private init(_ base: Base) { self.base = base }

            /// `sd_notify` or the datagram's `sendmsg` failed (the service manager is gone, the
            /// socket refuses it).
            public static let sendFailed = Code(.sendFailed)
            /// `$NOTIFY_SOCKET` names a socket that cannot be used: its path is too long, or no
            /// socket could be made for it.
            public static let invalidSocket = Code(.invalidSocket)

            /// The code's name, as in logs: `send-failed`.
            public var description: String { base.rawValue }
        }

        /// The kind of failure.
        public let code: Code
        /// The state string or call that failed.
        public let message: String
        /// The positive `errno` of the failed call.
        public let errno: Int32?

        /// Creates an error.
        ///
        /// - Parameters:
        ///   - code: The kind of failure.
        ///   - message: What failed.
        ///   - errno: The positive `errno`, if any.
        public init(_ code: Code, _ message: String, errno: Int32? = nil) {
            self.code = code
            self.message = message
            self.errno = errno
        }

        /// One log line.
        public var description: String {
            guard let errno else { return "sd_notify: \(message) [\(code)]" }
            return "sd_notify: \(message): \(String(cString: strerror(errno))) (errno \(errno)) [\(code)]"
        }
    }

    /// Creates a notifier.
    /// An explicit environment to read `$NOTIFY_SOCKET`, `$WATCHDOG_USEC` and `$WATCHDOG_PID`
    /// from, or `nil` for the process environment through libsystemd.
    private let environment: [String: String]?

    /// A notifier for the process's own service manager: libsystemd's `sd_notify` and
    /// `sd_watchdog_enabled`, reading the process environment.
    public init() { self.environment = nil }

    /// A notifier that reads its socket and watchdog settings from the given environment instead of
    /// the process's, and sends the datagram itself (the protocol `sd_notify` speaks: one
    /// `AF_UNIX` datagram to `$NOTIFY_SOCKET`, an abstract address when it starts with `@`).
    ///
    /// For embedders and tests that must not touch the process environment: changing it with
    /// `setenv` while other threads read it is a data race.
    ///
    /// - Parameters:
    ///   - environment: Where `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` are read.
    public init(environment: [String: String]) { self.environment = environment }

    /// Whether `$NOTIFY_SOCKET` is set, i.e. whether the service manager listens.
    public var isNotifySocketSet: Bool {
        if let environment { return environment["NOTIFY_SOCKET"] != nil }
        return getenv("NOTIFY_SOCKET") != nil
    }

    /// The watchdog interval systemd expects pings within, or `nil` if the watchdog is off for this process.
    ///
    /// From `sd_watchdog_enabled(3)`: `$WATCHDOG_USEC`, honoured only if `$WATCHDOG_PID` is unset or names
    /// this process. Ping at half this interval (``watchdog()``).
    public var watchdogInterval: Duration? {
        if let environment {
            if let pid = environment["WATCHDOG_PID"], Int32(pid) != getpid() { return nil }
            guard let text = environment["WATCHDOG_USEC"], let microseconds = UInt64(text), microseconds > 0 else {
                return nil
            }
            return .microseconds(Int64(clamping: microseconds))
        }
        var microseconds: UInt64 = 0
        let result = sd_watchdog_enabled(0, &microseconds)
        guard result > 0, microseconds > 0 else { return nil }
        return .microseconds(Int64(clamping: microseconds))
    }

    /// Sends a raw state string: newline-separated `KEY=VALUE` assignments.
    ///
    /// - Parameters:
    ///   - state: The assignments, e.g. `"READY=1\nSTATUS=Serving"`.
    /// - Returns: `true` if sent, `false` if `$NOTIFY_SOCKET` is not set.
    /// - Throws: ``Error`` if sending failed.
    @discardableResult
    public func notify(_ state: String) throws -> Bool {
        if let environment {
            guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty else { return false }
            try Self.send(state, to: path)
            return true
        }
        let result = sd_notify(0, state)
        if result < 0 { throw Error(.sendFailed, "send \(state.debugDescription)", errno: -result) }
        return result > 0
    }

    /// `READY=1`: start-up finished.
    ///
    /// - Returns: `true` if sent, `false` if `$NOTIFY_SOCKET` is not set.
    /// - Throws: ``Error`` if sending failed.
    @discardableResult
    public func ready() throws -> Bool { try notify("READY=1") }

    /// `STATUS=…`: a one-line status shown by `systemctl status`.
    ///
    /// Newlines in `text` would start new assignments, so they are replaced by spaces.
    ///
    /// - Parameters:
    ///   - text: The status text.
    /// - Returns: `true` if sent, `false` if `$NOTIFY_SOCKET` is not set.
    /// - Throws: ``Error`` if sending failed.
    @discardableResult
    public func status(_ text: String) throws -> Bool {
        let line = String(text.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
        return try notify("STATUS=\(line)")
    }

    /// `STOPPING=1`: the service is shutting down.
    ///
    /// - Returns: `true` if sent, `false` if `$NOTIFY_SOCKET` is not set.
    /// - Throws: ``Error`` if sending failed.
    @discardableResult
    public func stopping() throws -> Bool { try notify("STOPPING=1") }

    /// `EXTEND_TIMEOUT_USEC=…`: asks for this much more time for the current start-up or shutdown phase.
    ///
    /// - Parameters:
    ///   - duration: How long from now the service manager should wait at least.
    /// - Returns: `true` if sent, `false` if `$NOTIFY_SOCKET` is not set.
    /// - Throws: ``Error`` if sending failed.
    @discardableResult
    public func extendTimeout(by duration: Duration) throws -> Bool {
        try notify("EXTEND_TIMEOUT_USEC=\(duration.saturatingMicroseconds)")
    }

    /// `WATCHDOG=1`: the watchdog keep-alive ping.
    ///
    /// - Returns: `true` if sent, `false` if `$NOTIFY_SOCKET` is not set.
    /// - Throws: ``Error`` if sending failed.
    @discardableResult
    public func watchdog() throws -> Bool { try notify("WATCHDOG=1") }

    /// Sends one datagram to a notify socket path (`@name` for the abstract namespace).
    private static func send(_ state: String, to path: String) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Error(.invalidSocket, "socket for \(path)", errno: errno) }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            throw Error(.invalidSocket, "notify socket path \(path)", errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (bytes.first == 0 ? 0 : 1))
        let payload = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddr in
                payload.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), sockaddr, length) }
            }
        }
        guard sent == payload.count else {
            throw Error(.sendFailed, "send \(state.debugDescription) to \(path)", errno: errno)
        }
    }
}
