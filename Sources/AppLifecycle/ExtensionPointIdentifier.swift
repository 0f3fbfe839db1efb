/// An app-extension point the delegate may refuse (`UIApplication.ExtensionPointIdentifier`).
public struct ExtensionPointIdentifier: RawRepresentable, Sendable, Hashable, Codable {
    /// The raw identifier.
    public var rawValue: String
    /// Creates an identifier.
    ///
    /// - Parameters:
    ///   - rawValue: The raw identifier.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Custom keyboards; on Linux, third-party input methods (IBus/Fcitx engines).
    public static let keyboard = ExtensionPointIdentifier(rawValue: "com.apple.keyboard-service")
}
