extension LifecycleDaemon {
    /// Why the daemon could not start; `lifecycled` prints ``description`` and exits with status 1.
    ///
    /// The project's one error shape (swift-service-lifecycle's `ServiceGroupError`): an opaque
    /// ``code`` over a private enum, a message for the user, and the error underneath (the bus's,
    /// the event loop's) when there is one.
    struct StartError: Error, CustomStringConvertible {
        /// What kind of failure this is. Compare with the static members (`error.code == .nameTaken`).
        struct Code: Sendable, Hashable, CustomStringConvertible {
            private enum Base: String, Sendable, Hashable {
                case alreadyStarted = "already-started"
                case eventLoop = "event-loop"
                case busUnavailable = "bus-unavailable"
                case nameTaken = "name-taken"
                case serveFailed = "serve-failed"
                case stateDirectory = "state-directory"
            }

            private let base: Base

            private init(_ base: Base) { self.base = base }

            /// ``LifecycleDaemon/start()`` was called a second time.
            static let alreadyStarted = Code(.alreadyStarted)
            /// The event loop's thread or sd-event could not be set up.
            static let eventLoop = Code(.eventLoop)
            /// The bus could not be reached.
            static let busUnavailable = Code(.busUnavailable)
            /// Another process owns `org.applifecycle.Lifecycled1` on the bus.
            static let nameTaken = Code(.nameTaken)
            /// Subscribing, exporting the interface or requesting the name failed.
            static let serveFailed = Code(.serveFailed)
            /// The state directory cannot be made or written: nothing acknowledged could be kept.
            static let stateDirectory = Code(.stateDirectory)

            /// The code's name, as in logs: `name-taken`.
            var description: String { base.rawValue }
        }

        /// The kind of failure.
        let code: Code
        /// What went wrong and, where it helps, what to do.
        let message: String
        /// The error underneath (a `BusError`), if any.
        let underlying: (any Error)?

        /// Creates an error.
        ///
        /// - Parameters:
        ///   - code: The kind of failure.
        ///   - message: What went wrong.
        ///   - underlying: The error underneath, if any.
        init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
            self.code = code
            self.message = message
            self.underlying = underlying
        }

        /// The message for the user, followed by the error underneath.
        var description: String { underlying.map { "\(message): \($0)" } ?? message }
    }
}
