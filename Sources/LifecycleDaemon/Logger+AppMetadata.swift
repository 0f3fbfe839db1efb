import Logging

extension Logger.Metadata {
    /// The metadata of a line about one app: `app_id`, which the journal handler sends as the field
    /// `APP_ID`, so `journalctl --user -u lifecycled APP_ID=org.example.Counter` shows that app's lines.
    ///
    /// - Parameters:
    ///   - id: The app's id.
    static func app(_ id: String) -> Logger.Metadata { ["app_id": .string(id)] }
}
