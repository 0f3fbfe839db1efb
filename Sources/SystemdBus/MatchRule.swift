/// Builds D-Bus match rule strings with correct quoting.
///
/// Values are quoted as the D-Bus specification requires: inside single quotes, and a single
/// quote itself is written as `'\''`.
public enum MatchRule {
    /// Quotes one match rule value.
    ///
    /// - Parameters:
    ///   - value: The raw value.
    public static func quote(_ value: String) -> String {
        "'" + value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }

    /// Builds a `type='signal'` rule from the given fields (`nil` fields are left out).
    ///
    /// - Parameters:
    ///   - sender: The sender (unique or well-known name).
    ///   - path: The object path.
    ///   - interface: Only signals of this interface; `nil` for any.
    ///   - member: The signal name.
    ///   - arg0: The required value of the first string argument.
    public static func build(
        sender: String? = nil, path: String? = nil, interface: String? = nil, member: String? = nil, arg0: String? = nil
    ) -> String {
        var parts = ["type='signal'"]
        if let sender { parts.append("sender=" + quote(sender)) }
        if let path { parts.append("path=" + quote(path)) }
        if let interface { parts.append("interface=" + quote(interface)) }
        if let member { parts.append("member=" + quote(member)) }
        if let arg0 { parts.append("arg0=" + quote(arg0)) }
        return parts.joined(separator: ",")
    }
}
