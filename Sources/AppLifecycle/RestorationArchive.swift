import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// The file format of preserved app state: one JSON document per app.
///
/// ```json
/// {"format": "AppLifecycle.RestorationArchive", "version": 1,
///  "applicationIdentifier": "org.example.Notes", "savedAt": {"$date": "…"},
///  "values": {…}, "objectPaths": [["root", "detail"]]}
/// ```
///
/// It is written atomically (temporary file, fsync, rename, fsync of the directory) to
/// `restoration.json` in the app's state directory: `$STATE_DIRECTORY` (its first entry),
/// else `$XDG_STATE_HOME/<app id>`, else `~/.local/state/<app id>`.
public struct RestorationArchive: Sendable, Hashable, Codable {
    /// The format marker.
    public static let formatName = "AppLifecycle.RestorationArchive"
    /// The version this build writes and reads.
    public static let currentVersion = 1
    /// The archive's file name inside the state directory.
    public static let fileName = "restoration.json"

    /// The format marker (always ``formatName``).
    public var format: String = RestorationArchive.formatName
    /// The format version.
    public var version: Int = RestorationArchive.currentVersion
    /// The app the state belongs to.
    public var applicationIdentifier: String
    /// When the state was saved.
    public var savedAt: UserInfoValue
    /// The coder's entries.
    public var values: [String: UserInfoValue]
    /// The identifier paths of the restorable objects.
    public var objectPaths: [[String]]

    init(applicationIdentifier: String, savedAt: Date, values: [String: UserInfoValue], objectPaths: [[String]]) {
        self.applicationIdentifier = applicationIdentifier
        self.savedAt = .date(savedAt)
        self.values = values
        self.objectPaths = objectPaths
    }

    /// The state directory for an app, from the environment.
    ///
    /// - Parameters:
    ///   - applicationIdentifier: The app's identifier (used below `$XDG_STATE_HOME`).
    ///   - environment: The environment to read.
    public static func defaultDirectory(
        applicationIdentifier: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> URL {
        if let state = environment["STATE_DIRECTORY"]?.split(separator: ":").first, state.hasPrefix("/") {
            return URL(fileURLWithPath: String(state), isDirectory: true)
        }
        let base: String
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
            base = xdg
        } else {
            base = (environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path) + "/.local/state"
        }
        return URL(fileURLWithPath: base, isDirectory: true).appendingPathComponent(
            applicationIdentifier, isDirectory: true)
    }

    /// Reads the archive in a directory, or `nil` when there is none.
    ///
    /// - Parameters:
    ///   - directory: The state directory.
    /// - Throws: ``ApplicationError`` with code `invalidInput` when the file exists but is not a
    ///   valid archive of a version this build reads (the file is left untouched).
    public static func load(from directory: URL) throws -> RestorationArchive? {
        let url = directory.appendingPathComponent(fileName)
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        let archive: RestorationArchive
        do {
            archive = try JSONDecoder().decode(RestorationArchive.self, from: data)
        } catch {
            throw ApplicationError(.invalidInput, "\(url.path) is not a restoration archive: \(error)")
        }
        guard archive.format == formatName, archive.version == currentVersion else {
            throw ApplicationError(
                .invalidInput,
                "\(url.path) has format \(archive.format) version \(archive.version); this build reads \(formatName) version \(currentVersion)"
            )
        }
        return archive
    }

    /// Writes the archive atomically into a directory, creating the directory when needed.
    ///
    /// - Parameters:
    ///   - directory: The state directory.
    /// - Throws: ``ApplicationError`` with code `io` when a step fails; the previous archive is then intact.
    public func write(to directory: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(self)
        try AtomicFile.write(data, to: directory.appendingPathComponent(Self.fileName))
    }
}
