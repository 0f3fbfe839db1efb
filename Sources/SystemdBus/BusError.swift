import CSystemd
import Glibc

/// An error from the bus, from sd-bus or from a peer, carrying the D-Bus error name.
///
/// Every failure in SystemdBus surfaces as a `BusError`. An error reply from a peer keeps
/// the peer's D-Bus error name (for example `org.freedesktop.DBus.Error.ServiceUnknown`) and
/// message. A negative errno returned by sd-bus is mapped through `sd_bus_error_set_errno`,
/// which yields the matching standard D-Bus error name (or `System.Error.E…`) and the
/// `strerror` text; ``errno`` then holds the positive errno value.
///
/// Throw a `BusError` from an exported method handler to send that error name and message
/// back to the caller as a D-Bus error reply.
public struct BusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The D-Bus error name, for example `org.freedesktop.DBus.Error.Failed`.
    public var name: String
    /// The human-readable message that came with the error (may be empty).
    public var message: String
    /// The positive errno this error corresponds to, or 0 when it came from a peer without one.
    public var errno: Int32

    /// Creates an error with a D-Bus error name and message.
    ///
    /// Use this to reply with an error from an exported method, or to describe a local failure.
    ///
    /// - Parameters:
    ///   - name: The D-Bus error name; must be a valid error name (`a.b.C`).
    ///   - message: The human-readable explanation.
    ///   - errno: The positive errno that goes with it, or 0.
    public init(name: String, message: String, errno: Int32 = 0) {
        self.name = name
        self.message = message
        self.errno = errno
    }

    /// Creates an error from an errno returned by sd-bus or a system call.
    ///
    /// The sign is ignored, so the negative return value of an sd-bus call can be passed as is.
    /// The D-Bus name is the one sd-bus maps that errno to (`sd_bus_error_set_errno`).
    ///
    /// - Parameters:
    ///   - errno: The (positive or negative) errno value.
    ///   - context: What was being done, prefixed to the message (for example `"sd_bus_call_async"`).
    public init(errno: Int32, context: String? = nil) {
        let code = errno < 0 ? -errno : errno
        var error = sd_bus_error()
        _ = sd_bus_error_set_errno(&error, code)
        let name = error.name.map { String(cString: $0) } ?? "System.Error.\(code)"
        var text = error.message.map { String(cString: $0) } ?? String(cString: strerror(code))
        sd_bus_error_free(&error)
        if let context { text = "\(context): \(text)" }
        self.init(name: name, message: text, errno: code)
    }

    /// Creates an error from an `sd_bus_error` (borrowed, not freed).
    init(_ error: UnsafePointer<sd_bus_error>, fallbackErrno: Int32 = 0) {
        let name = error.pointee.name.map { String(cString: $0) } ?? BusError.Name.failed
        let message = error.pointee.message.map { String(cString: $0) } ?? ""
        let code = sd_bus_error_get_errno(error)
        self.init(name: name, message: message, errno: code != 0 ? code : fallbackErrno)
    }

    /// A textual description: `name: message (errno N)`.
    public var description: String {
        var text = message.isEmpty ? name : "\(name): \(message)"
        if errno != 0 { text += " (errno \(errno))" }
        return text
    }

    /// Returns whether this error carries the given D-Bus error name.
    ///
    /// - Parameters:
    ///   - name: A D-Bus error name, for example ``Name/unknownMethod``.
    public func hasName(_ name: String) -> Bool { self.name == name }

    /// Well-known D-Bus error names, for matching and for replying.
    ///
    /// These are the names of the D-Bus specification and of sd-bus; the list is not closed,
    /// as peers may use their own names.
    public enum Name {
        /// `org.freedesktop.DBus.Error.Failed`: a generic failure.
        public static let failed = "org.freedesktop.DBus.Error.Failed"
        /// `org.freedesktop.DBus.Error.InvalidArgs`: the arguments were invalid.
        public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
        /// `org.freedesktop.DBus.Error.InvalidSignature`: the signature was invalid or unexpected.
        public static let invalidSignature = "org.freedesktop.DBus.Error.InvalidSignature"
        /// `org.freedesktop.DBus.Error.UnknownMethod`.
        public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
        /// `org.freedesktop.DBus.Error.UnknownObject`.
        public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
        /// `org.freedesktop.DBus.Error.UnknownInterface`.
        public static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
        /// `org.freedesktop.DBus.Error.UnknownProperty`.
        public static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
        /// `org.freedesktop.DBus.Error.PropertyReadOnly`.
        public static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
        /// `org.freedesktop.DBus.Error.ServiceUnknown`: no one owns the destination name.
        public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
        /// `org.freedesktop.DBus.Error.NameHasNoOwner`.
        public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
        /// `org.freedesktop.DBus.Error.NoReply`: the call timed out or the connection dropped.
        public static let noReply = "org.freedesktop.DBus.Error.NoReply"
        /// `org.freedesktop.DBus.Error.AccessDenied`.
        public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
        /// `org.freedesktop.DBus.Error.Disconnected`: the connection is closed.
        public static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
        /// `org.freedesktop.DBus.Error.NotSupported`.
        public static let notSupported = "org.freedesktop.DBus.Error.NotSupported"
        /// `org.freedesktop.DBus.Error.LimitsExceeded`: a limit was reached (too many calls pending, say).
        public static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"
    }

    /// The loop that should run this work has shut down.
    static let loopShutDown = BusError(
        name: Name.disconnected, message: "the event loop has shut down", errno: ESHUTDOWN)
    /// The connection is closed.
    static let notConnected = BusError(
        name: Name.disconnected, message: "the bus connection is closed", errno: ENOTCONN)

    /// Throws a `BusError` for a negative sd-bus return value; returns the value otherwise.
    @discardableResult
    static func check(_ result: Int32, _ context: @autoclosure () -> String) throws(BusError) -> Int32 {
        if result < 0 { throw BusError(errno: result, context: context()) }
        return result
    }
}
