import FoundationEssentials
import Glibc
import Logging
import Synchronization

/// The desktop's default applications, from the XDG MIME-apps files and the desktop entries'
/// `MimeType=` lines (the "Association between MIME types and applications" specification),
/// read by the project rather than by running `xdg-mime` or `gio`.
///
/// Lookup order for a MIME type such as `x-scheme-handler/https`: in each `mimeapps.list` (in
/// order: `$XDG_CONFIG_HOME`, `$XDG_CONFIG_DIRS`, `$XDG_DATA_HOME/applications`,
/// `$XDG_DATA_DIRS/applications`; each directory's `<desktop>-mimeapps.list` for every desktop of
/// `$XDG_CURRENT_DESKTOP` before its `mimeapps.list`), the first `[Default Applications]` entry
/// that is installed and not removed; else the `[Added Associations]` in that order; else an
/// installed entry whose `MimeType=` lists the type. `[Removed Associations]` of a file hide the
/// associations of the files after it. A malformed file or entry is skipped and reported in
/// ``problems``; the rest still counts.
public struct MIMEApps: Sendable {
    /// The files and entries that could not be read, with the reason.
    public private(set) var problems: [String] = []
    private var lists: [(defaults: [String: [String]], added: [String: [String]], removed: [String: [String]])] = []
    private var entries: [String: DesktopEntry] = [:]
    private var entryOrder: [String] = []
    private var hidden: Set<String> = []

    /// The files' state when they were read: each path looked at and its modification time.
    private var fingerprint: [String: timespec] = [:]

    private static let cache = Mutex<(environment: [String: String], apps: MIMEApps)?>(nil)

    /// The associations as the files say now, read again only when a file or directory that
    /// counts changed since the last call (so `canOpenURL` does not parse every desktop entry each time).
    ///
    /// - Parameters:
    ///   - environment: As for ``init(environment:)``.
    public static func current(environment: [String: String]) -> MIMEApps {
        if let cached = cache.withLock({ $0 }), cached.environment == environment, !cached.apps.isStale {
            return cached.apps
        }
        let apps = MIMEApps(environment: environment)
        cache.withLock { $0 = (environment, apps) }
        return apps
    }

    /// Whether a file or directory read (or missing) then has another modification time now.
    var isStale: Bool {
        fingerprint.contains { path, then in
            let now = Self.modificationTime(path)
            return now.tv_sec != then.tv_sec || now.tv_nsec != then.tv_nsec
        }
    }

    /// `st_mtim` of a path, or zero when it does not exist.
    static func modificationTime(_ path: String) -> timespec {
        var status = stat()
        return stat(path, &status) == 0 ? status.st_mtim : timespec()
    }

    /// Reads every file now.
    ///
    /// - Parameters:
    ///   - environment: Where `HOME`, `XDG_CONFIG_HOME`, `XDG_CONFIG_DIRS`, `XDG_DATA_HOME`,
    ///     `XDG_DATA_DIRS` and `XDG_CURRENT_DESKTOP` are looked up.
    public init(environment: [String: String]) {
        let home = environment["HOME"] ?? "/"
        func dirs(_ key: String, _ fallback: String) -> [String] {
            (environment[key].flatMap { $0.isEmpty ? nil : $0 } ?? fallback).split(separator: ":").map(String.init)
                .filter { $0.hasPrefix("/") }
        }
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.config"
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.local/share"
        let dataDirs = [dataHome] + dirs("XDG_DATA_DIRS", "/usr/local/share:/usr/share")
        let listDirectories =
            [configHome] + dirs("XDG_CONFIG_DIRS", "/etc/xdg") + dataDirs.map { $0 + "/applications" }
        let desktops = (environment["XDG_CURRENT_DESKTOP"] ?? "").split(separator: ":").map { $0.lowercased() }
        for directory in listDirectories {
            for name in desktops.map({ "\($0)-mimeapps.list" }) + ["mimeapps.list"] {
                readList(directory + "/" + name)
            }
        }
        for directory in dataDirs { readEntries(directory + "/applications") }
    }

    /// The desktop entry of the default application for a MIME type, or `nil`.
    public func defaultApplication(for mimeType: String) -> DesktopEntry? {
        var removed: Set<String> = []
        for list in lists {
            for id in list.defaults[mimeType] ?? [] where !removed.contains(id) {
                if let entry = entries[id] { return entry }
            }
            removed.formUnion(list.removed[mimeType] ?? [])
        }
        removed = []
        for list in lists {
            for id in list.added[mimeType] ?? [] where !removed.contains(id) {
                if let entry = entries[id] { return entry }
            }
            removed.formUnion(list.removed[mimeType] ?? [])
        }
        let allRemoved = Set(lists.flatMap { $0.removed[mimeType] ?? [] })
        return entryOrder.lazy.compactMap { entries[$0] }.first {
            $0.mimeTypes.contains(mimeType) && !allRemoved.contains($0.id)
        }
    }

    /// The default application for a URL's scheme (`x-scheme-handler/<scheme>`), or `nil`.
    public func handler(for url: URL) -> DesktopEntry? {
        guard let scheme = url.scheme?.lowercased() else { return nil }
        return defaultApplication(for: "x-scheme-handler/\(scheme)")
    }

    /// An installed desktop entry by id.
    public func entry(_ id: String) -> DesktopEntry? { entries[id] }

    private mutating func readList(_ path: String) {
        fingerprint[path] = Self.modificationTime(path)
        guard let data = FileManager.default.contents(atPath: path) else { return }
        guard let text = String(data: data, encoding: .utf8) else {
            problems.append("\(path): not UTF-8; skipped")
            return
        }
        var list: (defaults: [String: [String]], added: [String: [String]], removed: [String: [String]]) = (
            [:], [:], [:]
        )
        var group: String?
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmedOfBlanks
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                group = String(line.dropFirst().dropLast())
                continue
            }
            guard let equals = line.firstIndex(of: "="), group != nil else {
                problems.append("\(path):\(index + 1): '\(line.prefix(80))' is not key=value in a group; skipped")
                continue
            }
            let type = line[..<equals].trimmedOfBlanks
            let ids = DesktopEntry.list(String(line[line.index(after: equals)...]))
            switch group {
            case "Default Applications": list.defaults[type, default: []] += ids
            case "Added Associations": list.added[type, default: []] += ids
            case "Removed Associations": list.removed[type, default: []] += ids
            default: continue
            }
        }
        lists.append(list)
    }

    private mutating func readEntries(_ directory: String) {
        let (files, directories) = DesktopEntry.files(in: directory)
        for visited in directories { fingerprint[visited] = Self.modificationTime(visited) }
        for (id, path) in files {
            // The first directory that has an id wins (user entries over system ones).
            guard entries[id] == nil, !hidden.contains(id) else { continue }
            guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
            else {
                problems.append("\(path): unreadable or not UTF-8; skipped")
                continue
            }
            do {
                let entry = try DesktopEntry(parsing: text, id: id, path: path)
                // A hidden entry deletes the id: the same id further down the path does not count.
                guard !entry.isHidden else {
                    hidden.insert(id)
                    continue
                }
                entries[id] = entry
                entryOrder.append(id)
            } catch {
                problems.append("\(error); skipped")
            }
        }
    }
}
