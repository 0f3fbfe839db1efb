extension LifecycledProtocol {
    /// One argument or result of a member: its name (for introspection) and D-Bus signature.
    public struct Argument: Sendable, Hashable {
        /// The name, as introspection shows it.
        public var name: String
        /// One complete D-Bus type.
        public var signature: String

        /// Creates an argument.
        public init(_ name: String, _ signature: String) {
            self.name = name
            self.signature = signature
        }
    }
}
