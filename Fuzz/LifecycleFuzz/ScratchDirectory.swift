import Glibc

/// A private directory for the targets whose decoders read files (manifests, the schedule file,
/// lifecycled.conf, mimeapps.list): made once per process in `/dev/shm` (memory, so writing the
/// input there each run costs little) and removed when the process exits normally.
enum ScratchDirectory {
    /// The directory's path.
    nonisolated(unsafe) private static var made: String?

    static var path: String {
        if let made { return made }
        let base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
        var template = Array("\(base)/lifecycle-fuzz-XXXXXX".utf8CString)
        guard let result = mkdtemp(&template) else {
            fatalError("LifecycleFuzz: cannot make a scratch directory in \(base)")
        }
        let path = String(cString: result)
        made = path
        atexit { ScratchDirectory.remove() }
        return path
    }

    /// Writes `bytes` to `name` in the directory (replacing it) and returns the file's path.
    @discardableResult
    static func write(_ bytes: [UInt8], to name: String) -> String {
        let file = path + "/" + name
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { fatalError("LifecycleFuzz: cannot write \(file)") }
        var written = 0
        bytes.withUnsafeBytes { buffer in
            while written < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + written, buffer.count - written)
                guard n > 0 else { fatalError("LifecycleFuzz: cannot write \(file)") }
                written += n
            }
        }
        close(fd)
        return file
    }

    /// Makes a directory below the scratch directory (and its parents); returns its path.
    @discardableResult
    static func makeDirectory(_ relative: String) -> String {
        var current = path
        for part in relative.split(separator: "/") {
            current += "/" + part
            mkdir(current, 0o700)
        }
        return current
    }

    /// Removes every file below the directory, keeping it.
    static func empty() {
        removeTree(path, keepingRoot: true)
    }

    private static func remove() {
        guard let made else { return }
        removeTree(made, keepingRoot: false)
    }

    private static func removeTree(_ directory: String, keepingRoot: Bool) {
        if let stream = opendir(directory) {
            while let entry = readdir(stream) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
                }
                if name == "." || name == ".." { continue }
                let child = directory + "/" + name
                var status = stat()
                if lstat(child, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
                    removeTree(child, keepingRoot: false)
                } else {
                    unlink(child)
                }
            }
            closedir(stream)
        }
        if !keepingRoot { rmdir(directory) }
    }
}
