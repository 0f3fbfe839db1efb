/// The XDG base-directory data directories, in precedence order.
///
/// Per the XDG Base Directory Specification: `$XDG_DATA_HOME` (default `$HOME/.local/share`)
/// comes first, then each entry of `$XDG_DATA_DIRS` (default `/usr/local/share:/usr/share`).
/// Relative paths in either variable are invalid and ignored, as the specification requires;
/// an unset or empty variable takes its default. Repeated directories keep their first place.
struct XDGDataDirectories: Sendable, Hashable {
    /// The data directories, most important first.
    let directories: [String]

    /// Reads the directories from an environment.
    ///
    /// - Parameters:
    ///   - environment: The environment (`XDG_DATA_HOME`, `XDG_DATA_DIRS`, `HOME`).
    init(environment: [String: String]) {
        var result: [String] = []
        if let home = environment["XDG_DATA_HOME"], home.hasPrefix("/") {
            result.append(home)
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            result.append(Self.join(home, ".local/share"))
        }
        let dirs = environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share"
        result += dirs.split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        var seen = Set<String>()
        self.directories = result.map(Self.trimmed).filter { seen.insert($0).inserted }
    }

    /// The app-manifest directories: `<data dir>/applifecycle/apps` for each data directory.
    var appsDirectories: [String] {
        directories.map { Self.join($0, "applifecycle/apps") }
    }

    private static func join(_ base: String, _ component: String) -> String {
        base.hasSuffix("/") ? base + component : base + "/" + component
    }

    private static func trimmed(_ path: String) -> String {
        var path = path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }
}
