import AppLifecycle
import ArgumentParser
import Foundation
import LifecycledProtocol
import SystemdBus

/// `lifecyclectl post APP NAME [--user-info JSON]`: delivers a named notification into an
/// app's notification center (`Post`).
struct PostCommand: CtlCommand {
    static let configuration = CommandConfiguration(
        commandName: "post", abstract: "Post a named notification with a userInfo into an app's notification center.")

    @OptionGroup var daemon: DaemonOptions

    @Argument(help: "The app id (for example org.example.Counter).")
    var app: String

    @Argument(help: "The notification name (for example UIApplicationSignificantTimeChangeNotification).")
    var name: String

    @Option(name: .customLong("user-info"), help: ArgumentHelp("The userInfo as a JSON object.", valueName: "json"))
    var userInfo: String?

    func run() async throws { try await runOnStandardStreams() }

    /// The userInfo, parsed and checked against the protocol's limits.
    ///
    /// - Throws: ``ValidationError`` for JSON that is not an object of userInfo values, or too large.
    func validatedUserInfo() throws -> UserInfo {
        guard let userInfo else { return UserInfo() }
        let parsed: UserInfo
        do {
            parsed = try UserInfo(json: userInfo)
        } catch {
            throw ValidationError("--user-info is not a JSON object of userInfo values: \(userInfo)")
        }
        do {
            try LifecycledProtocol.validate(parsed)
        } catch {
            throw ValidationError("--user-info: \(error)")
        }
        return parsed
    }

    func execute(output: CtlOutput) async throws {
        let app = try validatedAppID(self.app)
        guard !name.isEmpty, name.utf8.count <= LifecycledProtocol.Limits.notificationNameLength else {
            throw ValidationError(
                "the notification name must have 1 to \(LifecycledProtocol.Limits.notificationNameLength) bytes")
        }
        let userInfo = try validatedUserInfo()
        _ = try await DaemonClient.with(daemon.busAddress) { client in
            try await client.call(
                LifecycledProtocol.Method.post.name, [.string(app), .string(name), UserInfoBusCodec.encode(userInfo)])
        }
        output.out("posted \(name) to \(app)")
    }
}
