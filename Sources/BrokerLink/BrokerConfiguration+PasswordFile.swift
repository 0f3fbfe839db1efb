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
    /// - Throws: ``BrokerError`` with ``BrokerError/Code/invalidConfiguration`` when it cannot be read.
    public static func password(fromFile path: String) throws(BrokerError) -> String {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw BrokerError(.invalidConfiguration, "cannot read the password file \(path): \(error)")
        }
        let text = String(decoding: data, as: UTF8.self)
        return String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }
}
