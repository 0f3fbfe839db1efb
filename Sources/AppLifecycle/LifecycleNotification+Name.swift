extension LifecycleNotification {
    /// The name of a notification: for UIKit's lifecycle notifications UIKit's raw string
    /// (`UIApplicationDidBecomeActiveNotification`), for AppLifecycle's own ones the same style.
    ///
    /// AppLifecycle's stand-in for Foundation's `Notification.Name`, which lives in full Foundation
    /// (and pulls in ICU); the core needs only FoundationEssentials. It has the same shape: a
    /// raw-value string, `Hashable`, and constructible from a string or a literal, so code written
    /// against `Notification.Name` reads the same. Convert with `Notification.Name(name.rawValue)`
    /// and `LifecycleNotification.Name(foundationName.rawValue)`.
    public struct Name: RawRepresentable, Hashable, Sendable, Comparable, ExpressibleByStringLiteral,
        CustomStringConvertible
    {
        /// The name's string, UIKit's raw string for UIKit's notifications.
        public let rawValue: String

        /// Creates a name from its string.
        ///
        /// - Parameters:
        ///   - rawValue: The name, for example `UIApplicationDidBecomeActiveNotification`.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Creates a name from its string, as `LifecycleNotification.Name("…")` does.
        ///
        /// - Parameters:
        ///   - rawValue: The name.
        public init(_ rawValue: String) { self.rawValue = rawValue }

        /// Creates a name from a string literal.
        ///
        /// - Parameters:
        ///   - value: The name.
        public init(stringLiteral value: String) { self.rawValue = value }

        /// The raw string.
        public var description: String { rawValue }

        /// Orders names by their strings.
        public static func < (lhs: Name, rhs: Name) -> Bool { lhs.rawValue < rhs.rawValue }
    }
}
