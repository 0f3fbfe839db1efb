/// The identifier of a background task (`UIBackgroundTaskIdentifier`).
public struct BackgroundTaskIdentifier: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The raw identifier.
    public var rawValue: Int
    /// Creates an identifier.
    ///
    /// - Parameters:
    ///   - rawValue: The raw identifier.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// The identifier returned when no task could be begun (`UIBackgroundTaskInvalid`).
    public static let invalid = BackgroundTaskIdentifier(rawValue: 0)
    /// `task #<n>`.
    public var description: String { "task #\(rawValue)" }
}
