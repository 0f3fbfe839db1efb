import Logging

extension Logger {
    /// A logger that drops everything: what an object holds until its owner hands it the real one
    /// (the host bridge before `start(logger:)`, an in-process host before the app runs), so that
    /// a library never logs to a logger it made up itself.
    package static let discarding = Logger(label: "discarding") { _ in SwiftLogNoOpLogHandler() }
}
