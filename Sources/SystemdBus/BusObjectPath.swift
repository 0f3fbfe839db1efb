/// A D-Bus object path (`o`), such as `/org/freedesktop/login1`, as a typed argument: distinct from
/// a string (`s`) on the wire.
public struct BusObjectPath: BusArgument, Hashable, Comparable, CustomStringConvertible {
    /// The path.
    public var path: String

    /// Creates an object path; sd-bus checks its syntax when it is marshalled.
    ///
    /// - Parameters:
    ///   - path: The path, for example `/org/example/App`.
    public init(_ path: String) { self.path = path }

    public static var busSignature: String { "o" }
    public init(busValue: BusValue) throws(BusError) {
        guard case .objectPath(let path) = busValue else { throw Self.typeMismatch(busValue) }
        self.path = path
    }
    public var busValue: BusValue { .objectPath(path) }
    public var description: String { path }
    public static func < (lhs: BusObjectPath, rhs: BusObjectPath) -> Bool { lhs.path < rhs.path }
}
