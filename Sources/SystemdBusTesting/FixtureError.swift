/// An error of a test fixture (a process that would not start, a command that failed).
public struct FixtureError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public var description: String

    /// Creates a fixture error.
    ///
    /// - Parameters:
    ///   - description: What went wrong.
    public init(_ description: String) { self.description = description }
}
