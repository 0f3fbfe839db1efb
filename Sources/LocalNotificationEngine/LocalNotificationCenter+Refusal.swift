import DurableState

extension LocalNotificationCenter {
    /// Why a notification was not scheduled or cancelled.
    ///
    /// The project's one error shape (swift-service-lifecycle's `ServiceGroupError`): an opaque
    /// ``code`` over a private enum, a message that says why, and for ``Code/notSaved`` the
    /// writer's failure underneath. lifecycled answers each code with its D-Bus error name.
    package struct Refusal: Error, Sendable, CustomStringConvertible {
        /// What kind of refusal this is. Compare with the static members (`refusal.code == .invalid`).
        package struct Code: Sendable, Hashable, CustomStringConvertible {
            private enum Base: String, Sendable, Hashable {
                case invalid
                case limitsExceeded = "limits-exceeded"
                case notSaved = "not-saved"
                case unknownNotification = "unknown-notification"
            }

            private let base: Base

            private init(_ base: Base) { self.base = base }

            /// Not a notification the host may keep (``LocalNotificationCenter/admissionProblem(_:budget:)``).
            package static let invalid = Code(.invalid)
            /// Past the app's or the total budget (``LocalNotificationBudget``).
            package static let limitsExceeded = Code(.limitsExceeded)
            /// The file could not be written (``Refusal/failure``).
            package static let notSaved = Code(.notSaved)
            /// The app has no notification of that identifier scheduled, on screen or kept.
            package static let unknownNotification = Code(.unknownNotification)

            /// The code's name, as in logs: `limits-exceeded`.
            package var description: String { base.rawValue }
        }

        /// The kind of refusal.
        package let code: Code
        /// Why, in words: the problem with the notification, or which budget it is past.
        package let message: String
        /// For ``Code/notSaved``, the writer's failure (out of space or not, its errno).
        package let failure: GroupCommitFile.Failure?

        private init(_ code: Code, _ message: String, failure: GroupCommitFile.Failure? = nil) {
            self.code = code
            self.message = message
            self.failure = failure
        }

        /// Not a notification the host may keep; `problem` says why.
        package static func invalid(_ problem: String) -> Refusal { Refusal(.invalid, problem) }

        /// Past the app's or the total budget; `excess` says which.
        package static func limitsExceeded(_ excess: String) -> Refusal { Refusal(.limitsExceeded, excess) }

        /// The file could not be written.
        package static func notSaved(_ failure: GroupCommitFile.Failure) -> Refusal {
            Refusal(.notSaved, failure.description, failure: failure)
        }

        /// The app has no notification of that identifier scheduled, on screen or kept.
        package static var unknownNotification: Refusal {
            Refusal(.unknownNotification, "no notification of that identifier is scheduled, on screen or kept")
        }

        /// `code: message`.
        package var description: String { "\(code): \(message)" }
    }
}
