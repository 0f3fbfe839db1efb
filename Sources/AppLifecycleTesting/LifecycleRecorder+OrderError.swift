extension LifecycleRecorder {
    /// An order check that failed.
    ///
    /// The project's one error shape (swift-service-lifecycle's `ServiceGroupError`): an opaque
    /// ``code`` over a private enum and a message that says what was expected, with the timeline.
    public struct OrderError: Error, Sendable, CustomStringConvertible {
        /// Which check failed. Compare with the static members (`error.code == .outOfOrder`).
        public struct Code: Sendable, Hashable, CustomStringConvertible {
            private enum Base: String, Sendable, Hashable {
                case outOfOrder = "out-of-order"
                case notConsecutive = "not-consecutive"
                case recorded
            }

            private let base: Base

            private init(_ base: Base) { self.base = base }

            /// ``LifecycleRecorder/verifyOrder(_:)``: a name is missing, or not after the one before it.
            public static let outOfOrder = Code(.outOfOrder)
            /// ``LifecycleRecorder/verifyConsecutive(_:)``: the names do not appear one right after another.
            public static let notConsecutive = Code(.notConsecutive)
            /// ``LifecycleRecorder/verifyAbsent(_:)``: the name was recorded.
            public static let recorded = Code(.recorded)

            /// The code's name: `out-of-order`.
            public var description: String { base.rawValue }
        }

        /// Which check failed.
        public let code: Code
        /// What was expected, and what was recorded.
        public let message: String

        /// Creates an error.
        ///
        /// - Parameters:
        ///   - code: Which check failed.
        ///   - message: What was expected, and what was recorded.
        public init(_ code: Code, _ message: String) {
            self.code = code
            self.message = message
        }

        /// What was expected, and what was recorded.
        public var description: String { message }
    }
}
