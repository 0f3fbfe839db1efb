import Glibc

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension BrokerConfiguration {
    /// The password a password file holds: its first line, without the newline (empty when the
    /// file starts with one). What lifecycled's `password-file`, the gateway's and lifecyclectl's
    /// `--password-file` read, so a secret never has to be on a command line.
    ///
    /// - Parameters:
    ///   - path: The file.
    /// - Throws: ``BrokerError`` with ``BrokerError/Code/invalidConfiguration`` when it cannot be
    ///   read or is not a regular file of at most ``maximumPasswordFileSize`` bytes.
    public static func password(fromFile path: String) throws(BrokerError) -> String {
        // Read with a bound on the descriptor itself (this module does not link AppLifecycle's
        // AtomicFile): a path to something endless (/dev/zero, a FIFO) is refused, not read forever.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else {
            throw BrokerError.system(.invalidConfiguration, "cannot read the password file \(path)", errno: errno)
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw BrokerError(.invalidConfiguration, "the password file \(path) is not a regular file")
        }
        var bytes = [UInt8](repeating: 0, count: maximumPasswordFileSize + 1)
        var count = 0
        while count < bytes.count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else {
                throw BrokerError.system(.invalidConfiguration, "cannot read the password file \(path)", errno: errno)
            }
            if n == 0 { break }
            count += n
        }
        guard count <= maximumPasswordFileSize else {
            throw BrokerError(
                .invalidConfiguration,
                "the password file \(path) is larger than \(maximumPasswordFileSize) bytes; it should hold one line")
        }
        let text = String(decoding: bytes[0..<count], as: UTF8.self)
        return String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }

    /// The largest password file read.
    public static let maximumPasswordFileSize = 4096
}
