import AppLifecycle
import FoundationEssentials

/// Every app manifest the daemon can find, loaded and validated, with the errors of the rest.
///
/// Directories are read in precedence order (``XDGDataDirectories/appsDirectories``); within
/// one directory, files are read in name order, and only `*.json` files not starting with a
/// dot count. The first *valid* manifest for an id wins: a later one for the same id is
/// recorded in ``shadowed`` and not parsed; an invalid file claims nothing, so a broken user
/// override is reported and the system's copy still loads. A URL scheme belongs to the first
/// app that claims it in that order; a later app claiming it is rejected as a whole with
/// ``ManifestError/Code/duplicateURLScheme``, naming both apps and both files, so what was
/// already loaded never changes. Each bad file yields one ``ManifestError`` in ``errors``;
/// nothing here traps.
package struct ManifestStore: Sendable {
    /// A loaded manifest and the file it came from.
    package struct Entry: Sendable, Hashable {
        /// The validated manifest.
        package let manifest: AppManifest
        /// The file it was loaded from.
        package let path: String
    }

    /// The files larger than this are rejected unread (a manifest is a few hundred bytes).
    static let maximumFileSize = 1 << 20

    /// The directories searched, most important first.
    let directories: [String]
    /// The loaded manifests by id.
    package private(set) var entries: [String: Entry] = [:]
    /// The errors, one per rejected file (or unreadable directory), in load order.
    package private(set) var errors: [ManifestError] = []
    /// Files not read because a more important directory already had a valid manifest for that id.
    private(set) var shadowed: [String] = []
    private var schemeOwners: [String: String] = [:]

    /// Loads the manifests from the XDG data directories of an environment.
    ///
    /// - Parameters:
    ///   - environment: The environment to read `XDG_DATA_HOME`, `XDG_DATA_DIRS` and `HOME` from.
    package init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.init(directories: XDGDataDirectories(environment: environment).appsDirectories)
    }

    /// Loads the manifests from the given apps directories.
    ///
    /// A missing directory is skipped silently (most of them do not exist); one that exists
    /// but cannot be listed is an ``ManifestError/Code/unreadable`` error.
    ///
    /// - Parameters:
    ///   - directories: The apps directories, most important first.
    package init(directories: [String]) {
        self.directories = directories
        for directory in directories { load(directory: directory) }
    }

    /// The manifests, sorted by id.
    var manifests: [AppManifest] {
        entries.keys.sorted().compactMap { entries[$0]?.manifest }
    }

    /// The manifest with an id.
    ///
    /// - Parameters:
    ///   - id: The app's reverse-DNS identifier.
    func manifest(id: String) -> AppManifest? { entries[id]?.manifest }

    /// The manifest of the app that opens a URL scheme (compared case-insensitively).
    ///
    /// - Parameters:
    ///   - scheme: The scheme, without the colon.
    func manifest(forURLScheme scheme: String) -> AppManifest? {
        schemeOwners[scheme.lowercased()].flatMap { entries[$0]?.manifest }
    }

    /// Every URL scheme a manifest claims, sorted.
    var claimedSchemes: [String] { schemeOwners.keys.sorted() }

    /// The manifest of the app that opens a URL, by its scheme.
    func manifest(for url: URL) -> AppManifest? {
        url.scheme.flatMap { manifest(forURLScheme: $0) }
    }

    // MARK: Loading

    private mutating func load(directory: String) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return
        } catch {
            var isDirectory = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else { return }
            errors.append(
                ManifestError(
                    .unreadable, path: directory, "cannot list the apps directory: \(error)"))
            return
        }
        for name in names.sorted() where name.hasSuffix(".json") && !name.hasPrefix(".") {
            load(file: directory + "/" + name, stem: String(name.dropLast(".json".count)))
        }
    }

    private mutating func load(file path: String, stem: String) {
        if entries[stem] != nil {
            shadowed.append(path)
            return
        }
        do throws(ManifestError) {
            let manifest = try Self.read(path)
            guard manifest.id == stem else {
                throw ManifestError(
                    .identifierMismatch,
                    "id '\(manifest.id)' does not match the file name (expected '\(manifest.id).json')")
            }
            for scheme in manifest.urlSchemes {
                if let owner = schemeOwners[scheme], let other = entries[owner] {
                    throw ManifestError(
                        .duplicateURLScheme,
                        "URL scheme '\(scheme)' of \(manifest.id) is already claimed by \(owner) (\(other.path)); \(manifest.id) is not loaded"
                    )
                }
            }
            entries[manifest.id] = Entry(manifest: manifest, path: path)
            for scheme in manifest.urlSchemes { schemeOwners[scheme] = manifest.id }
        } catch var error {
            error.path = path
            errors.append(error)
        }
    }

    /// Reads, decodes and validates one manifest file.
    ///
    /// - Parameters:
    ///   - path: The file.
    /// - Throws: ``ManifestError`` (without the path; the caller sets it).
    static func read(_ path: String) throws(ManifestError) -> AppManifest {
        let data: Data
        do throws(FileReadError) {
            // One bounded read: the size is checked on what is read, not on attributes whose
            // dictionary type differs between Foundation and FoundationEssentials.
            data = try AtomicFile.read(from: URL(fileURLWithPath: path), limit: maximumFileSize)
        } catch {
            switch error.code {
            case .notRegularFile: throw ManifestError(.unreadable, "not a regular file")
            case .tooLarge:
                throw ManifestError(
                    .unreadable, "the file is larger than the \(maximumFileSize)-byte limit; shorten it")
            default: throw ManifestError(.unreadable, "cannot read the file: \(error)")
            }
        }
        do {
            return try JSONDecoder().decode(AppManifest.self, from: data)
        } catch let error as ManifestError {
            throw error
        } catch let error as DecodingError {
            throw Self.manifestError(from: error)
        } catch {
            throw ManifestError(.malformedJSON, "cannot decode the file: \(error)")
        }
    }

    /// Maps a decoder error to a manifest error that names the field.
    private static func manifestError(from error: DecodingError) -> ManifestError {
        func field(_ path: [any CodingKey]) -> String {
            path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, _):
            return ManifestError(.missingField, "required field '\(key.stringValue)' is missing")
        case .typeMismatch(let type, let context):
            if context.codingPath.isEmpty {
                return ManifestError(.malformedJSON, "the file is not a JSON object")
            }
            return ManifestError(
                .wrongType, "field '\(field(context.codingPath))' has the wrong type (expected \(type))")
        case .valueNotFound(let type, let context):
            return ManifestError(.wrongType, "field '\(field(context.codingPath))' is null (expected \(type))")
        case .dataCorrupted(let context):
            return ManifestError(.malformedJSON, "the file is not valid JSON: \(context.debugDescription)")
        @unknown default:
            return ManifestError(.malformedJSON, "cannot decode the file: \(error)")
        }
    }
}
