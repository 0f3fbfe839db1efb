import Glibc

/// Who a bus caller is when it is not a registered app: its executable's file name, what
/// `sourceApplication` says for a URL opened by `lifecyclectl`, `gdbus` or a launcher.
package enum CallerExecutable {
    /// The basename of `/proc/<pid>/exe` (without the ` (deleted)` of a replaced binary), or `nil`.
    ///
    /// - Parameters:
    ///   - pid: The caller's pid (from its bus credentials).
    package static func name(of pid: pid_t) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return name.hasSuffix(" (deleted)") ? String(name.dropLast(" (deleted)".count)) : name
    }
}
