/// The result of a background fetch (`UIBackgroundFetchResult`).
public enum BackgroundFetchResult: String, Sendable, Hashable, Codable, CaseIterable {
    /// New data was downloaded.
    case newData
    /// There was no new data.
    case noData
    /// The fetch failed.
    case failed
}
