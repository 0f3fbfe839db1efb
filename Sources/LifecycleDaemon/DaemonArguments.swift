import AppLifecycle
import AppLifecycleSystemd
import FoundationEssentials
import LifecycledProtocol
import SystemdBus

/// Reads and validates the arguments of the daemon's methods.
///
/// sd-bus has already checked each call's signature against the declared one, so these
/// functions check the *values*: app id syntax, URL length and scheme, notification name
/// length, states, and userInfo limits (``LifecycledProtocol/Limits``). A bad value becomes a
/// ``BusError`` (`InvalidArgs`, or `InvalidURL` for URLs) whose message names the argument;
/// nothing here traps.
enum DaemonArguments {
    /// The string at `index`, or `InvalidArgs`.
    ///
    /// - Parameters:
    ///   - arguments: The call's arguments.
    ///   - index: The position.
    ///   - name: The argument's name, for the message.
    static func string(_ arguments: [BusValue], _ index: Int, _ name: String) throws(BusError) -> String {
        guard index < arguments.count, let value = arguments[index].stringValue else {
            throw DaemonError.invalidArgs("argument \(index) (\(name)) must be a string")
        }
        return value
    }

    /// A valid app id at `index` (``LifecycledProtocol/isValidAppID(_:)``), or `InvalidArgs`.
    ///
    /// - Parameters:
    ///   - arguments: The call's arguments.
    ///   - index: The position.
    static func appID(_ arguments: [BusValue], _ index: Int = 0) throws(BusError) -> String {
        let id = try string(arguments, index, "app id")
        guard LifecycledProtocol.isValidAppID(id) else {
            let shown = id.utf8.count > 64 ? String(id.prefix(64)) + "…" : id
            throw DaemonError.invalidArgs(
                "'\(shown)' is not a valid app id (reverse-DNS like org.example.App, at most \(LifecycledProtocol.Limits.appIDLength) bytes)"
            )
        }
        return id
    }

    /// A URL at `index`: at most ``LifecycledProtocol/Limits/urlLength`` bytes, parseable, with a
    /// valid scheme; otherwise `InvalidURL`.
    ///
    /// - Parameters:
    ///   - arguments: The call's arguments.
    ///   - index: The position.
    static func url(_ arguments: [BusValue], _ index: Int = 0) throws(BusError) -> URL {
        let text = try string(arguments, index, "url")
        guard !text.isEmpty else { throw DaemonError.invalidURL("the URL is empty") }
        guard text.utf8.count <= LifecycledProtocol.Limits.urlLength else {
            throw DaemonError.invalidURL(
                "the URL is \(text.utf8.count) bytes, longer than \(LifecycledProtocol.Limits.urlLength)")
        }
        guard let url = URL(string: text), let scheme = url.scheme, AppManifest.isValidURLScheme(scheme) else {
            throw DaemonError.invalidURL("'\(text.prefix(80))' is not a URL with a scheme (RFC 3986)")
        }
        return url
    }

    /// A notification name at `index`: 1…``LifecycledProtocol/Limits/notificationNameLength`` bytes.
    ///
    /// - Parameters:
    ///   - arguments: The call's arguments.
    ///   - index: The position.
    static func notificationName(_ arguments: [BusValue], _ index: Int) throws(BusError) -> String {
        let name = try string(arguments, index, "notification name")
        guard !name.isEmpty, name.utf8.count <= LifecycledProtocol.Limits.notificationNameLength else {
            throw DaemonError.invalidArgs(
                "the notification name must be 1 to \(LifecycledProtocol.Limits.notificationNameLength) bytes, got \(name.utf8.count)"
            )
        }
        return name
    }

    /// A state name at `index` (``ApplicationState`` raw values), or `InvalidArgs`.
    ///
    /// - Parameters:
    ///   - arguments: The call's arguments.
    ///   - index: The position.
    static func state(_ arguments: [BusValue], _ index: Int) throws(BusError) -> ApplicationState {
        let text = try string(arguments, index, "state")
        guard let state = ApplicationState(rawValue: text) else {
            throw DaemonError.invalidArgs(
                "'\(text.prefix(64))' is not a state (one of \(ApplicationState.allCases.map(\.rawValue).joined(separator: ", ")))"
            )
        }
        return state
    }

    /// A userInfo at `index`, decoded (``UserInfoBusCodec``) and checked against the limits.
    ///
    /// - Parameters:
    ///   - arguments: The call's arguments.
    ///   - index: The position.
    ///   - name: The argument's name, for the message.
    static func userInfo(_ arguments: [BusValue], _ index: Int, _ name: String = "userInfo") throws(BusError)
        -> UserInfo
    {
        guard index < arguments.count else { throw DaemonError.invalidArgs("argument \(index) (\(name)) is missing") }
        do {
            let userInfo = try UserInfoBusCodec.decodeUserInfo(arguments[index])
            try LifecycledProtocol.validate(userInfo)
            return userInfo
        } catch {
            throw DaemonError.invalidArgs("\(name): \(error)")
        }
    }

    /// A `u` at `index`, or `InvalidArgs`.
    ///
    /// - Parameters:
    ///   - arguments: The call's arguments.
    ///   - index: The position.
    ///   - name: The argument's name, for the message.
    static func uint32(_ arguments: [BusValue], _ index: Int, _ name: String) throws(BusError) -> UInt32 {
        guard index < arguments.count, let value = arguments[index].uint32Value else {
            throw DaemonError.invalidArgs("argument \(index) (\(name)) must be an unsigned 32-bit integer")
        }
        return value
    }
}
