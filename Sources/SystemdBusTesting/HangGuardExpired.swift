/// A test waited longer than its hang guard for something that never came.
///
/// Hang guards are generous bounds that keep a broken test from hanging the run; they are not
/// assertions on timing.
public struct HangGuardExpired: Error, CustomStringConvertible, Sendable {
    /// What the test was waiting for, and what it had seen by then.
    public var what: String

    /// Creates the error.
    ///
    /// - Parameters:
    ///   - what: What the test was waiting for, in words for the failure message.
    public init(what: String) { self.what = what }

    /// `hang guard expired waiting for …`.
    public var description: String { "hang guard expired waiting for \(what)" }
}
