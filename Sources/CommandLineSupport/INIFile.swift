import Glibc

/// A configuration file in the project's INI format: `lifecycled.conf` and `push-gateway.conf`.
///
/// ```ini
/// # a comment; so is ; at a line's start, or # and ; after a blank
/// [section]
/// key = value   # blanks around key and value are dropped; a value runs to the end of the line
/// ```
///
/// A key may be set once per section; a line that is none of these is a syntax error naming the
/// file and the line. What the sections and keys mean is the reader's business (lifecycled's
/// `FleetConfiguration`, the gateway's long options through ``ConfigurationFileArguments``).
public struct INIFile: Sendable, Equatable {
    /// One `key = value` line.
    public struct Entry: Sendable, Equatable {
        /// The value, without surrounding blanks.
        public var value: String
        /// The line it is on, from 1.
        public var line: Int
    }

    /// The largest file read: a configuration is a few lines, and a path to something endless is refused.
    public static let sizeLimit = 1 << 20

    /// The file the text came from, for messages.
    public var path: String
    /// The sections, by name; a section with no keys is present and empty.
    public var entries: [String: [String: Entry]]

    /// The keys and values of every section, without line numbers.
    public var sections: [String: [String: String]] { entries.mapValues { $0.mapValues(\.value) } }

    /// Parses `text`.
    ///
    /// - Parameters:
    ///   - text: The file's content.
    ///   - path: The file, for messages.
    /// - Throws: ``INIFileError`` (``INIFileError/Code/syntax``) naming the line and what is wrong with it.
    public init(parsing text: String, path: String) throws(INIFileError) {
        self.path = path
        entries = [:]
        var current: String?
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let location = "\(path):\(index + 1)"
            let trimmed = Self.withoutComment(rawLine).trimmedOfBlanks
            if trimmed.isEmpty { continue }
            if trimmed.hasPrefix("[") {
                guard trimmed.hasSuffix("]"), trimmed.count > 2 else {
                    throw INIFileError(.syntax, "\(location): '\(trimmed)' is not a [section]")
                }
                let name = String(trimmed.dropFirst().dropLast()).trimmedOfBlanks
                current = name
                entries[name] = entries[name] ?? [:]
                continue
            }
            guard let section = current else {
                throw INIFileError(.syntax, "\(location): a setting before any [section]")
            }
            guard let equals = trimmed.firstIndex(of: "=") else {
                throw INIFileError(.syntax, "\(location): '\(trimmed)' is not key = value")
            }
            let key = trimmed[..<equals].trimmedOfBlanks
            let value = trimmed[trimmed.index(after: equals)...].trimmedOfBlanks
            guard !key.isEmpty, !value.isEmpty else {
                throw INIFileError(.syntax, "\(location): '\(trimmed)' has an empty key or value")
            }
            guard entries[section]?[key] == nil else {
                throw INIFileError(.syntax, "\(location): '\(key)' is set twice in [\(section)]")
            }
            entries[section, default: [:]][key] = Entry(value: value, line: index + 1)
        }
    }

    /// Reads and parses the file at `path`: a regular file of at most ``sizeLimit`` bytes of UTF-8.
    ///
    /// - Parameters:
    ///   - path: The file.
    /// - Throws: ``INIFileError`` (``INIFileError/Code/unreadable`` or ``INIFileError/Code/syntax``).
    public init(contentsOf path: String) throws(INIFileError) {
        try self.init(parsing: Self.read(path), path: path)
    }

    /// The line without its comment: one starts at `#` or `;` at the line's start or after a blank.
    private static func withoutComment(_ line: Substring) -> Substring {
        var previous: Character = " "
        for index in line.indices {
            let character = line[index]
            if (character == "#" || character == ";") && (previous == " " || previous == "\t") {
                return line[..<index]
            }
            previous = character
        }
        return line
    }

    /// The file's text, read without blocking on a FIFO and with a bound.
    private static func read(_ path: String) throws(INIFileError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else { throw unreadable(path, errno: errno) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw unreadable(path, errno: errno) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw INIFileError(.unreadable, "\(path): not a regular file; point the option at the configuration file")
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count <= sizeLimit {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw unreadable(path, errno: errno)
            }
            if count == 0 {
                guard let text = String(validating: bytes, as: UTF8.self) else {
                    throw INIFileError(.unreadable, "\(path): not UTF-8 text; save it as UTF-8")
                }
                return text
            }
            bytes.append(contentsOf: buffer[0..<count])
        }
        throw INIFileError(.unreadable, "\(path): larger than \(sizeLimit) bytes; is it the configuration file?")
    }

    private static func unreadable(_ path: String, errno code: Int32) -> INIFileError {
        let reason = String(cString: strerror(code))
        switch code {
        case ENOENT:
            return INIFileError(.unreadable, "\(path): cannot read it: no such file; create it or name another one")
        case EACCES, EPERM:
            return INIFileError(
                .unreadable, "\(path): cannot read it: permission denied; make it readable by this user")
        default:
            return INIFileError(.unreadable, "\(path): cannot read it: \(reason)")
        }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces, tabs and carriage returns.
    fileprivate var trimmedOfBlanks: String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !blank($0) }), let last = lastIndex(where: { !blank($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
