import FoundationEssentials
import Glibc

/// Writes files the project owns atomically: temporary file, fsync, rename, fsync of the directory.
///
/// The temporary file is `<name>.tmp-XXXXXX` beside the target, created with `O_CREAT | O_EXCL |
/// O_CLOEXEC` in one call (what `mkostemp` does: no child spawned meanwhile inherits it) and held
/// under an exclusive `flock` while it is written. A writer killed before its rename leaves its
/// temporary file behind, but with no lock: the next write of the same target removes every such
/// abandoned file, and leaves alone one that another live writer still holds.
public enum AtomicFile {
    /// Replaces the file at `url` with `data` so that a crash leaves either the old or the new contents.
    ///
    /// - Parameters:
    ///   - data: The new contents.
    ///   - url: The file to replace; its directory is created (mode 0700) when missing.
    /// - Throws: ``ApplicationError`` with code `io`, naming the step, with the step's
    ///   ``ApplicationError/errno`` (`ENOSPC` on a full disk), when a step fails.
    public static func write(_ data: Data, to url: URL) throws {
        let directory = url.deletingLastPathComponent().path
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw ApplicationError(.io, "cannot create \(directory): \(error)")
        }
        removeAbandonedTemporaryFiles(of: url)
        let (fd, temporary) = try createTemporaryFile(for: url)
        var succeeded = false
        defer {
            if !succeeded { unlink(temporary) }
        }
        do {
            defer { close(fd) }
            try data.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw failure("write \(temporary)")
                    }
                    offset += written
                }
            }
            guard fsync(fd) == 0 else { throw failure("fsync \(temporary)") }
            guard rename(temporary, url.path) == 0 else { throw failure("rename \(temporary) to \(url.path)") }
            succeeded = true
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else { throw failure("open \(directory)") }
        defer { close(directoryFD) }
        guard fsync(directoryFD) == 0 else { throw failure("fsync \(directory)") }
    }

    /// Reads a whole file the project owns or trusts only so far, at most `limit` bytes.
    ///
    /// The size is checked on the open descriptor (`fstat`, so the file checked is the file read),
    /// and the read stops one byte past the limit, so a file that grows meanwhile is refused too.
    /// `O_NONBLOCK` keeps a FIFO planted at the path from blocking the caller.
    ///
    /// - Parameters:
    ///   - url: The file.
    ///   - limit: The most bytes accepted.
    /// - Returns: The contents.
    /// - Throws: ``FileReadError``.
    public static func read(from url: URL, limit: Int) throws(FileReadError) -> Data {
        let path = url.path
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else {
            throw errno == ENOENT ? .notFound(path: path) : .unreadable(path: path, errno: errno)
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw .unreadable(path: path, errno: errno) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .notRegularFile(path: path) }
        guard status.st_size <= limit else { throw .tooLarge(path: path, size: Int(status.st_size), limit: limit) }
        var contents = Data(capacity: Int(status.st_size))
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while contents.count <= limit {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, errno: errno)
            }
            if count == 0 { return contents }
            contents.append(contentsOf: buffer[0..<count])
        }
        throw .tooLarge(path: path, size: contents.count, limit: limit)
    }

    /// Renames a file that cannot be used (unreadable, corrupt, too large) to
    /// `<name>.<reason>-<unix time>`, so that the next write does not destroy what it held and a
    /// person can look at it; a second one in the same second gets `-2`, `-3`, ….
    ///
    /// - Parameters:
    ///   - url: The file.
    ///   - reason: The word in the new name.
    /// - Returns: The new path, or `nil` when the file could not be renamed (it is left in place).
    public static func setAside(_ url: URL, reason: String = "corrupt") -> String? {
        let stem = url.path + ".\(reason)-\(Int(Date().timeIntervalSince1970))"
        for attempt in 1...100 {
            let target = attempt == 1 ? stem : "\(stem)-\(attempt)"
            if access(target, F_OK) == 0 { continue }
            return rename(url.path, target) == 0 ? target : nil
        }
        return nil
    }

    /// Keeps a copy of a file as it is now, as `<name>.<reason>-<unix time>` beside it (a hard
    /// link: no bytes are copied, and the next ``write(_:to:)`` replaces the name only), so that a
    /// person can see what it held; a second one in the same second gets `-2`, `-3`, …, as
    /// ``setAside(_:reason:)`` names them.
    ///
    /// - Parameters:
    ///   - url: The file.
    ///   - reason: The word in the copy's name.
    /// - Returns: The copy's path, or `nil` when none could be made (the cause is in `errno`).
    public static func keepCopy(_ url: URL, reason: String) -> String? {
        let stem = url.path + ".\(reason)-\(Int(Date().timeIntervalSince1970))"
        for attempt in 1...100 {
            let target = attempt == 1 ? stem : "\(stem)-\(attempt)"
            // link() never replaces: a name taken (by an earlier copy in this second) is EEXIST.
            if link(url.path, target) == 0 { return target }
            if errno != EEXIST { return nil }
        }
        errno = EEXIST
        return nil
    }

    /// The temporary files of a target: `<name>.tmp-` and six characters.
    static func isTemporaryFile(_ name: String, of target: String) -> Bool {
        name.hasPrefix(target + ".tmp-") && name.utf8.count == target.utf8.count + 5 + 6
    }

    /// Creates and locks a new temporary file beside `url`, mode 0600, close-on-exec from the start.
    private static func createTemporaryFile(for url: URL) throws -> (fd: Int32, path: String) {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        for _ in 0..<100 {
            let suffix = String((0..<6).map { _ in alphabet.randomElement()! })
            let path = url.path + ".tmp-" + suffix
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            if fd < 0 {
                if errno == EEXIST || errno == EINTR { continue }
                throw failure("create a temporary file beside \(url.path)")
            }
            // Held until the fd closes (after the rename) or the process dies: a live writer's file
            // is never taken for an abandoned one.
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                let error = failure("lock \(path)")
                close(fd)
                unlink(path)
                throw error
            }
            return (fd, path)
        }
        throw ApplicationError(.io, "no free temporary file name beside \(url.path) after 100 tries")
    }

    /// Removes the temporary files of `url` that no live writer holds (their writer died before its
    /// rename). Best effort: a file that cannot be opened or locked is left alone.
    static func removeAbandonedTemporaryFiles(of url: URL) {
        let directory = url.deletingLastPathComponent().path
        let target = url.lastPathComponent
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where isTemporaryFile(name, of: target) {
            let path = directory + "/" + name
            let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            // Locked: a writer is at work on it. Unlocked: its writer is gone.
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { unlink(path) }
        }
    }

    /// An `io` error for a step that failed, with its `errno` (read first: nothing may change it before).
    private static func failure(_ step: String) -> ApplicationError {
        let code = errno
        return ApplicationError(.io, "\(step): \(String(cString: strerror(code)))", errno: code)
    }
}
