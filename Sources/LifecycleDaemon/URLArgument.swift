import FoundationEssentials
import LifecycledProtocol
import SystemdBus

/// A URL as a method argument (`s`): at most ``LifecycledProtocol/Limits/urlLength`` bytes,
/// parseable, with a valid scheme; otherwise `InvalidURL`.
struct URLArgument: BusArgument {
    /// The URL.
    let url: URL

    static var busSignature: String { "s" }

    init(busValue: BusValue) throws(BusError) {
        let text = try String(busValue: busValue)
        guard !text.isEmpty else { throw DaemonError.invalidURL("the URL is empty") }
        guard text.utf8.count <= LifecycledProtocol.Limits.urlLength else {
            throw DaemonError.invalidURL(
                "the URL is \(text.utf8.count) bytes, longer than \(LifecycledProtocol.Limits.urlLength)")
        }
        guard let url = URL(string: text), let scheme = url.scheme, AppManifest.isValidURLScheme(scheme) else {
            throw DaemonError.invalidURL("'\(text.prefix(80))' is not a URL with a scheme (RFC 3986)")
        }
        self.url = url
    }

    var busValue: BusValue { .string(url.absoluteString) }
}
