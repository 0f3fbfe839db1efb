import AppLifecycle
import FoundationEssentials
import Glibc

/// What the daemon knows about one hosted app: the parsed, validated contents of
/// `<data dir>/applifecycle/apps/<id>.json`.
///
/// The file is a JSON object:
///
/// ```json
/// {
///   "id": "org.example.Notes",
///   "name": "Notes",
///   "executable": "/usr/bin/notes",
///   "arguments": ["--hosted"],
///   "urlSchemes": ["notes", "x-notes"],
///   "backgroundModes": ["fetch", "remote-notification"],
///   "allowsMeteredNetwork": false,
///   "shortcutItems": [{"type": "compose", "localizedTitle": "New note"}],
///   "startupWMClass": "Notes",
///   "adoptsLifecycle": true
/// }
/// ```
///
/// `id` and `executable` are required; the other fields default to empty or absent. Every
/// value of this type is valid: both initializers run ``validate()``, so an invalid manifest
/// cannot be constructed. The rules: `id` is reverse-DNS (two or more dot-separated elements
/// of `[A-Za-z_][A-Za-z0-9_-]*`, at most 255 bytes: the D-Bus application-id rules, so the id
/// can name the app on the bus); `executable` is an absolute path to an existing regular file
/// the daemon may execute; `arguments` contain no NUL byte; every URL scheme follows RFC 3986
/// (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`), is lowercased, and repeats within one
/// manifest are dropped; `backgroundModes` are names of ``BackgroundMode``; `name`, when
/// present, is not empty; `startupWMClass` (the desktop entry's `StartupWMClass`: the Wayland
/// app id or X11 `WM_CLASS` of its windows when it is not the app id), when present, is not
/// empty. `allowsMeteredNetwork` (default `false`) lets the app's background fetches run on a
/// metered network (NetworkManager's `Metered`); without it a due fetch waits for an unmetered
/// one. `adoptsLifecycle: false` hosts a program that does not use AppLifecycle (a terminal, a
/// GTK app): it never registers, gets no commands, and lifecycled freezes it itself when its
/// windows leave the foreground. Unknown fields are rejected so a typo (`urlScheme`) is reported
/// rather than silently ignored. Uniqueness of schemes across apps is checked by
/// ``ManifestStore``, which sees them all.
package struct AppManifest: Sendable, Hashable, Codable {
    /// The reverse-DNS identifier (`org.example.Notes`); also the file name without `.json`.
    package let id: String
    /// A display name, if the manifest gives one.
    let name: String?
    /// The absolute path of the program to run.
    package let executable: String
    /// The arguments after the program name.
    let arguments: [String]
    /// The URL schemes the app opens, lowercased, in manifest order, without repeats.
    package let urlSchemes: [String]
    /// The background modes the app declares.
    let backgroundModes: Set<BackgroundMode>
    /// The static quick actions (`UIApplicationShortcutItems`): the desktop entry's actions.
    let shortcutItems: [ShortcutItem]
    /// The app id or `WM_CLASS` its windows carry when it is not ``id`` (`XTerm`, `foot`), as the
    /// desktop entry's `StartupWMClass`: how a window without a pid is matched to the app.
    let startupWMClass: String?
    /// Whether the program uses AppLifecycle (registers and gets callbacks); `false` for any other
    /// Linux program, which lifecycled only freezes and thaws with its windows.
    let adoptsLifecycle: Bool
    /// Whether the app's background fetches may run on a metered network.
    let allowsMeteredNetwork: Bool

    /// Creates and validates a manifest.
    ///
    /// URL schemes are lowercased and de-duplicated before validation.
    ///
    /// - Parameters:
    ///   - id: The reverse-DNS identifier.
    ///   - name: A display name.
    ///   - executable: The absolute path of the program.
    ///   - arguments: The arguments after the program name.
    ///   - urlSchemes: The URL schemes the app opens.
    ///   - backgroundModes: The background modes the app declares.
    ///   - shortcutItems: The static quick actions.
    ///   - startupWMClass: The app id or `WM_CLASS` of its windows, when it is not `id`.
    ///   - adoptsLifecycle: Whether the program uses AppLifecycle.
    ///   - allowsMeteredNetwork: Whether background fetches may run on a metered network.
    /// - Throws: ``ManifestError`` (with an empty path) naming the first invalid field.
    init(
        id: String, name: String? = nil, executable: String, arguments: [String] = [],
        urlSchemes: [String] = [], backgroundModes: Set<BackgroundMode> = [], shortcutItems: [ShortcutItem] = [],
        startupWMClass: String? = nil, adoptsLifecycle: Bool = true, allowsMeteredNetwork: Bool = false
    ) throws(ManifestError) {
        self.adoptsLifecycle = adoptsLifecycle
        self.allowsMeteredNetwork = allowsMeteredNetwork
        self.shortcutItems = shortcutItems
        self.startupWMClass = startupWMClass
        self.id = id
        self.name = name
        self.executable = executable
        self.arguments = arguments
        self.urlSchemes = Self.normalized(urlSchemes)
        self.backgroundModes = backgroundModes
        try validate()
    }

    /// The manifest's field names; anything else in the file is an ``ManifestError/Code/unknownField``.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, name, executable, arguments, urlSchemes, backgroundModes, shortcutItems, startupWMClass,
            adoptsLifecycle, allowsMeteredNetwork
    }

    /// A key that accepts any field name, to find the unknown ones.
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Decodes and validates a manifest from JSON.
    ///
    /// Structural problems surface as `DecodingError` (``ManifestStore`` maps them to
    /// ``ManifestError/Code/missingField``, ``ManifestError/Code/wrongType`` and
    /// ``ManifestError/Code/malformedJSON``); semantic ones as ``ManifestError``.
    ///
    /// - Parameters:
    ///   - decoder: The decoder.
    /// - Throws: `DecodingError` or ``ManifestError``.
    package init(from decoder: any Decoder) throws {
        let all = try decoder.container(keyedBy: AnyKey.self)
        let known = Set(CodingKeys.allCases.map(\.rawValue))
        if let unknown = all.allKeys.map(\.stringValue).sorted().first(where: { !known.contains($0) }) {
            throw ManifestError(
                .unknownField,
                "unknown field '\(unknown)' (known: \(CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let modeNames = try container.decodeIfPresent([String].self, forKey: .backgroundModes) ?? []
        var modes = Set<BackgroundMode>()
        for modeName in modeNames {
            guard let mode = BackgroundMode(rawValue: modeName) else {
                throw ManifestError(
                    .unknownBackgroundMode,
                    "unknown background mode '\(modeName)' (allowed: \(BackgroundMode.allCases.map(\.rawValue).joined(separator: ", ")))"
                )
            }
            modes.insert(mode)
        }
        try self.init(
            id: container.decode(String.self, forKey: .id),
            name: container.decodeIfPresent(String.self, forKey: .name),
            executable: container.decode(String.self, forKey: .executable),
            arguments: container.decodeIfPresent([String].self, forKey: .arguments) ?? [],
            urlSchemes: container.decodeIfPresent([String].self, forKey: .urlSchemes) ?? [],
            backgroundModes: modes,
            shortcutItems: container.decodeIfPresent([ShortcutItem].self, forKey: .shortcutItems) ?? [],
            startupWMClass: container.decodeIfPresent(String.self, forKey: .startupWMClass),
            adoptsLifecycle: container.decodeIfPresent(Bool.self, forKey: .adoptsLifecycle) ?? true,
            allowsMeteredNetwork: container.decodeIfPresent(Bool.self, forKey: .allowsMeteredNetwork) ?? false)
    }

    /// Encodes the manifest in its file format (background modes sorted).
    ///
    /// - Parameters:
    ///   - encoder: The encoder.
    /// - Throws: What the encoder throws.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encodeIfPresent(name, forKey: .name)
        try container.encode(executable, forKey: .executable)
        try container.encode(arguments, forKey: .arguments)
        try container.encode(urlSchemes, forKey: .urlSchemes)
        try container.encode(backgroundModes.sorted(), forKey: .backgroundModes)
        if !shortcutItems.isEmpty { try container.encode(shortcutItems, forKey: .shortcutItems) }
        try container.encodeIfPresent(startupWMClass, forKey: .startupWMClass)
        if !adoptsLifecycle { try container.encode(adoptsLifecycle, forKey: .adoptsLifecycle) }
        if allowsMeteredNetwork { try container.encode(allowsMeteredNetwork, forKey: .allowsMeteredNetwork) }
    }

    /// Checks every field against the rules in the type's discussion.
    ///
    /// The executable check looks at the file system now: a manifest valid at load time can
    /// become unlaunchable later, which the launch reports.
    ///
    /// - Throws: ``ManifestError`` (empty path) for the first invalid field.
    func validate() throws(ManifestError) {
        guard Self.isValidIdentifier(id) else {
            throw ManifestError(
                .invalidIdentifier,
                "id '\(id)' is not a reverse-DNS identifier (two or more dot-separated elements of letters, digits, '_' or '-', not starting with a digit)"
            )
        }
        if let name, name.isEmpty {
            throw ManifestError(.invalidName, "name is empty (leave it out instead)")
        }
        if let startupWMClass, startupWMClass.isEmpty || startupWMClass.utf8.count > 255 {
            throw ManifestError(
                .invalidName, "startupWMClass must be 1 to 255 bytes (the app id or WM_CLASS of the app's windows)")
        }
        try Self.validateExecutable(executable)
        if let bad = arguments.firstIndex(where: { $0.utf8.contains(0) }) {
            throw ManifestError(.invalidArgument, "arguments[\(bad)] contains a NUL byte")
        }
        if let bad = urlSchemes.first(where: { !Self.isValidURLScheme($0) }) {
            throw ManifestError(
                .invalidURLScheme,
                "URL scheme '\(bad)' is not valid (RFC 3986: a letter, then letters, digits, '+', '-' or '.')")
        }
        var types = Set<String>()
        for item in shortcutItems {
            // Desktop action ids: [A-Za-z0-9-], since each becomes a `[Desktop Action <type>]` group.
            guard !item.type.isEmpty, item.type.utf8.count <= 64,
                item.type.unicodeScalars.allSatisfy({ Self.isASCIILetter($0) || Self.isASCIIDigit($0) || $0 == "-" })
            else {
                throw ManifestError(
                    .invalidShortcutItem,
                    "shortcut item type '\(item.type)' is not a desktop action id (1 to 64 letters, digits or '-')")
            }
            guard types.insert(item.type).inserted else {
                throw ManifestError(.invalidShortcutItem, "shortcut item type '\(item.type)' appears twice")
            }
            guard !item.localizedTitle.isEmpty, !item.localizedTitle.contains("\n") else {
                throw ManifestError(
                    .invalidShortcutItem, "shortcut item '\(item.type)' needs a one-line localizedTitle")
            }
        }
    }

    /// Whether a string is a reverse-DNS app identifier (the D-Bus application-id rules).
    ///
    /// - Parameters:
    ///   - id: The candidate identifier.
    static func isValidIdentifier(_ id: String) -> Bool {
        guard !id.isEmpty, id.utf8.count <= 255 else { return false }
        let elements = id.split(separator: ".", omittingEmptySubsequences: false)
        guard elements.count >= 2 else { return false }
        return elements.allSatisfy { element in
            guard let first = element.unicodeScalars.first, isASCIILetter(first) || first == "_" else { return false }
            return element.unicodeScalars.allSatisfy { isASCIILetter($0) || isASCIIDigit($0) || $0 == "_" || $0 == "-" }
        }
    }

    /// Whether a string is an RFC 3986 URL scheme: `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`.
    ///
    /// - Parameters:
    ///   - scheme: The candidate scheme, without the colon.
    static func isValidURLScheme(_ scheme: String) -> Bool {
        guard let first = scheme.unicodeScalars.first, isASCIILetter(first) else { return false }
        return scheme.unicodeScalars.allSatisfy {
            isASCIILetter($0) || isASCIIDigit($0) || $0 == "+" || $0 == "-" || $0 == "."
        }
    }

    /// Checks that a path is absolute and names an existing regular file this process may execute.
    ///
    /// - Parameters:
    ///   - path: The executable's path.
    /// - Throws: ``ManifestError`` with ``ManifestError/Code/executableNotAbsolute``,
    ///   ``ManifestError/Code/executableNotFound`` or ``ManifestError/Code/executableNotExecutable``.
    static func validateExecutable(_ path: String) throws(ManifestError) {
        guard path.hasPrefix("/"), !path.utf8.contains(0) else {
            throw ManifestError(.executableNotAbsolute, "executable '\(path)' is not an absolute path")
        }
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw ManifestError(
                .executableNotFound, "executable '\(path)' does not exist: \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw ManifestError(.executableNotFound, "executable '\(path)' is not a regular file")
        }
        // access(X_OK) alone is not enough as root, who passes it for a file with no x bit on some filesystems.
        guard info.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH) != 0 else {
            throw ManifestError(
                .executableNotExecutable, "executable '\(path)' is not executable: it has no execute permission bit")
        }
        guard access(path, X_OK) == 0 else {
            throw ManifestError(
                .executableNotExecutable, "executable '\(path)' is not executable: \(String(cString: strerror(errno)))")
        }
    }

    /// Lowercases schemes and drops repeats, keeping the first occurrence's position.
    private static func normalized(_ schemes: [String]) -> [String] {
        var seen = Set<String>()
        return schemes.map { $0.lowercased() }.filter { seen.insert($0).inserted }
    }

    private static func isASCIILetter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
    }

    private static func isASCIIDigit(_ scalar: Unicode.Scalar) -> Bool {
        ("0"..."9").contains(scalar)
    }
}
