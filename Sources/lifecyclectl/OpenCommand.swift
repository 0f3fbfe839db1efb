import ArgumentParser
import Foundation
import LifecycledProtocol
import SystemdBus

/// `lifecyclectl open URL`: asks lifecycled to open a URL in the app that claims its scheme
/// (`OpenURL`), and prints that app's id.
struct OpenCommand: CtlCommand {
    static let configuration = CommandConfiguration(
        commandName: "open", abstract: "Open a URL in the app that claims its scheme; prints the app id.")

    @OptionGroup var daemon: DaemonOptions

    @Argument(help: "The URL, with a scheme (for example counter://increment).")
    var url: String

    func run() async throws { try await runOnStandardStreams() }

    /// The URL, checked: at most 8192 bytes, parseable, with a scheme.
    ///
    /// - Throws: ``ValidationError`` naming what is wrong.
    func validatedURL() throws -> URL {
        guard url.utf8.count <= LifecycledProtocol.Limits.urlLength else {
            throw ValidationError("the URL is longer than \(LifecycledProtocol.Limits.urlLength) bytes")
        }
        guard let parsed = URL(string: url), let scheme = parsed.scheme, !scheme.isEmpty,
            url.hasPrefix(scheme + ":")
        else {
            throw ValidationError("'\(url)' is not a URL with a scheme (like counter://increment)")
        }
        return parsed
    }

    func execute(output: CtlOutput) async throws {
        let url = try validatedURL()
        let reply = try await DaemonClient.with(daemon.busAddress) { client in
            try await client.call(LifecycledProtocol.Method.openURL.name, [.string(url.absoluteString), .vardict([:])])
        }
        guard let appID = reply.first?.stringValue else {
            throw BusError(
                name: BusError.Name.failed, message: "OpenURL replied \(BusValue.signature(of: reply)), expected s")
        }
        output.out(appID)
    }
}
