extension BrokerError {
    /// What went wrong with the connection to the broker at `url`, and what to check, for a person
    /// (lifecyclectl's `fleet` verbs print it; lifecycled and the gateway log it): a refused login, a
    /// broker that is not reachable, a TLS failure.
    ///
    /// - Parameters:
    ///   - url: The broker's URL, as configured.
    ///   - userOption: How the user name and password are given where this is read (`--username
    ///     and --password-file`, or `username and password-file in [fleet]`).
    public func explanation(broker url: String, userOption: String) -> String {
        if code == .connectionRefused {
            switch returnCode {
            case 4, 5:
                return """
                    the broker at \(url) refused the login (\(message)): check \(userOption), and that the \
                    broker's password file and ACL have this user
                    """
            case 2:
                return """
                    the broker at \(url) refused the client id (\(message)): another client may use the same one; \
                    give each a client id of its own
                    """
            default:
                return "the broker at \(url) refused the connection (\(message)); its log says why"
            }
        }
        let text = message.lowercased()
        if text.contains("tls") || text.contains("certificate") || text.contains("ssl") {
            return """
                the TLS handshake with the broker at \(url) failed (\(message)): check that the broker's \
                certificate is signed by the CA given as the CA file, and that its name matches the URL's host
                """
        }
        if text.contains("name or service") || text.contains("name resolution") || text.contains("lookup") {
            return "the broker's host in \(url) has no address (\(message)): check the URL's host name"
        }
        return """
            cannot reach the broker at \(url) (\(message)): check the URL and that the broker runs there \
            (`systemctl status mosquitto`)
            """
    }
}
