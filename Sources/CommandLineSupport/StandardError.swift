import Glibc

/// Standard error for the programs' own messages, written with one `write(2)` per line so lines
/// from several threads never interleave (and without Foundation's `FileHandle`).
public enum StandardError {
    /// Writes `line` and a newline to standard error; a failed write is ignored, as `fputs` callers do.
    ///
    /// - Parameters:
    ///   - line: The message, without its newline.
    public static func write(line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
