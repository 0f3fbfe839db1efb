import FoundationEssentials
import Glibc

/// A desktop entry (`.desktop` file, the freedesktop Desktop Entry Specification), read by the
/// project itself: what the URL opener and the desktop-file installer need of it.
public struct DesktopEntry: Sendable, Hashable {
    /// Why a file is not a usable desktop entry.
    ///
    /// The project's one error shape (swift-service-lifecycle's `ServiceGroupError`): an opaque
    /// ``code`` over a private enum, a message, and where in the file the problem is.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What kind of problem this is. Compare with the static members
        /// (`error.code == .malformedLine`).
        public struct Code: Sendable, Hashable, CustomStringConvertible {
            private enum Base: String, Sendable, Hashable {
                case malformedLine = "malformed-line"
                case duplicateGroup = "duplicate-group"
                case notADesktopEntry = "not-a-desktop-entry"
                case missingKey = "missing-key"
            }

            private let base: Base

            private init(_ base: Base) { self.base = base }

            /// A line is neither a group header, a `key=value`, a comment nor blank, or a key comes
            /// before the first group or is empty.
            public static let malformedLine = Code(.malformedLine)
            /// A group header appears twice.
            public static let duplicateGroup = Code(.duplicateGroup)
            /// The first group is not `[Desktop Entry]`.
            public static let notADesktopEntry = Code(.notADesktopEntry)
            /// A required key (`Type`, `Name`) is missing.
            public static let missingKey = Code(.missingKey)

            /// The code's name, as in logs: `malformed-line`.
            public var description: String { base.rawValue }
        }

        /// The kind of problem.
        public let code: Code
        /// The file, or `-` for text.
        public let path: String
        /// The 1-based line, or 0 for the file as a whole.
        public let line: Int
        /// What is wrong.
        public let message: String

        /// Creates an error.
        ///
        /// - Parameters:
        ///   - code: The kind of problem.
        ///   - path: The file, or `-` for text.
        ///   - line: The 1-based line, or 0 for the file as a whole.
        ///   - message: What is wrong.
        public init(_ code: Code, path: String, line: Int, _ message: String) {
            self.code = code
            self.path = path
            self.line = line
            self.message = message
        }

        /// `path:line: message`.
        public var description: String { "\(path):\(line): \(message)" }
    }

    /// The desktop-file id: the file's path below `applications/`, `/` replaced by `-`.
    public var id: String
    /// The `[Desktop Entry]` group's keys (localized keys such as `Name[de]` kept as they are).
    public var fields: [String: String]
    /// The other groups (`Desktop Action …`), by name.
    public var groups: [String: [String: String]]

    /// `Name`.
    public var name: String? { fields["Name"] }
    /// `Exec`.
    public var exec: String? { fields["Exec"] }
    /// `DBusActivatable=true`: launchers send `org.freedesktop.Application` calls to ``busName``.
    public var isDBusActivatable: Bool { fields["DBusActivatable"] == "true" }
    /// `Hidden=true`: the entry is deleted.
    public var isHidden: Bool { fields["Hidden"] == "true" }
    /// The MIME types of `MimeType=`.
    public var mimeTypes: [String] { Self.list(fields["MimeType"]) }
    /// The desktop actions of `Actions=` that have a group.
    public var actions: [(id: String, name: String)] {
        Self.list(fields["Actions"]).compactMap { id in groups["Desktop Action \(id)"]?["Name"].map { (id, $0) } }
    }
    /// The bus name of a D-Bus activatable entry: the id without `.desktop`.
    public var busName: String { id.hasSuffix(".desktop") ? String(id.dropLast(8)) : id }

    /// Parses a desktop entry.
    ///
    /// - Parameters:
    ///   - text: The file's contents.
    ///   - id: Its desktop-file id.
    ///   - path: Its path, for messages.
    /// - Throws: ``ParseError`` for a line that is neither a group, a key, a comment nor blank, a key
    ///   before the first group, a first group other than `[Desktop Entry]`, or a missing `Type`/`Name`.
    public init(parsing text: String, id: String, path: String = "-") throws(ParseError) {
        var groups: [String: [String: String]] = [:]
        var current: String?
        var order: [String] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmedOfBlanks
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]"), line.count > 2 else {
                    throw ParseError(.malformedLine, path: path, line: index + 1, "malformed group header '\(line)'")
                }
                let name = String(line.dropFirst().dropLast())
                guard groups[name] == nil else {
                    throw ParseError(.duplicateGroup, path: path, line: index + 1, "group [\(name)] appears twice")
                }
                groups[name] = [:]
                order.append(name)
                current = name
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw ParseError(.malformedLine, path: path, line: index + 1, "'\(line.prefix(80))' is not key=value")
            }
            guard let group = current else {
                throw ParseError(.malformedLine, path: path, line: index + 1, "a key before the first group")
            }
            let key = line[..<equals].trimmedOfBlanks
            guard !key.isEmpty else { throw ParseError(.malformedLine, path: path, line: index + 1, "an empty key") }
            groups[group]?[key] = Self.unescape(line[line.index(after: equals)...].trimmedOfBlanks)
        }
        guard order.first == "Desktop Entry", let main = groups.removeValue(forKey: "Desktop Entry") else {
            throw ParseError(.notADesktopEntry, path: path, line: 0, "the first group is not [Desktop Entry]")
        }
        guard main["Type"] != nil, main["Name"] != nil else {
            throw ParseError(.missingKey, path: path, line: 0, "Type= and Name= are required")
        }
        self.id = id
        self.fields = main
        self.groups = groups
    }

    /// The arguments to run for a URL: `Exec` split as the specification says (double quotes,
    /// backslash escapes), `%u %U %f %F` replaced by the URL (a local path for `%f %F` and a
    /// `file:` URL), `%%` by `%`, and the other field codes dropped.
    ///
    /// - Returns: `nil` when there is no `Exec` or it is malformed (an unclosed quote).
    public func arguments(opening url: URL) -> [String]? {
        guard let exec else { return nil }
        var words: [String] = []
        var word = ""
        var inWord = false
        var quoted = false
        var iterator = exec.makeIterator()
        while let character = iterator.next() {
            if quoted {
                if character == "\"" {
                    quoted = false
                } else if character == "\\", let next = iterator.next() {
                    word.append(next)
                } else {
                    word.append(character)
                }
            } else if character == "\"" {
                quoted = true
                inWord = true
            } else if character == " " || character == "\t" {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else {
                word.append(character)
                inWord = true
            }
        }
        guard !quoted else { return nil }
        if inWord { words.append(word) }
        let path = url.isFileURL ? url.path : url.absoluteString
        var result: [String] = []
        for word in words {
            switch word {
            case "%u", "%U": result.append(url.absoluteString)
            case "%f", "%F": result.append(path)
            case "%i", "%c", "%k", "%d", "%D", "%n", "%N", "%v", "%m": continue
            default: result.append(word.replacing("%%", with: "%"))
            }
        }
        return result.isEmpty ? nil : result
    }

    /// The `.desktop` files below an `applications` directory, sorted, with their desktop-file ids
    /// (a file in a subdirectory `dir/` has the id `dir-<name>`), and every directory visited.
    /// Links to directories are not followed (a link loop would recurse without end).
    ///
    /// - Parameters:
    ///   - directory: An `applications` directory.
    public static func files(in directory: String) -> (files: [(id: String, path: String)], directories: [String]) {
        var files: [(id: String, path: String)] = []
        var directories: [String] = []
        func scan(_ path: String, prefix: String) {
            directories.append(path)
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return }
            for name in names.sorted() {
                let file = path + "/" + name
                var status = stat()
                guard lstat(file, &status) == 0 else { continue }
                if status.st_mode & S_IFMT == S_IFDIR {
                    scan(file, prefix: prefix + name + "-")
                } else if name.hasSuffix(".desktop") {
                    files.append((prefix + name, file))
                }
            }
        }
        scan(directory, prefix: "")
        return (files, directories)
    }

    /// The elements of a `;`-separated list.
    public static func list(_ value: String?) -> [String] {
        (value ?? "").split(separator: ";").map { $0.trimmedOfBlanks }.filter { !$0.isEmpty }
    }

    /// The specification's escapes in values: `\s \n \t \r \\` (others, such as `\;` in lists,
    /// are kept for the list splitting to see).
    static func unescape(_ value: String) -> String {
        guard value.contains("\\") else { return value }
        var result = ""
        var iterator = value.makeIterator()
        while let character = iterator.next() {
            guard character == "\\", let next = iterator.next() else {
                result.append(character)
                continue
            }
            switch next {
            case "\\": result.append("\\")
            case "s": result.append(" ")
            case "n": result.append("\n")
            case "t": result.append("\t")
            case "r": result.append("\r")
            default:
                result.append("\\")
                result.append(next)
            }
        }
        return result
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (FoundationEssentials has no
    /// `trimmingCharacters(in:)`).
    var trimmedOfBlanks: String {
        var slice = self[...]
        while let first = slice.first, first == " " || first == "\t" || first == "\r" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" || last == "\r" { slice = slice.dropLast() }
        return String(slice)
    }
}
