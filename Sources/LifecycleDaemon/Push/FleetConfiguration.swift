import AppLifecycle
import BrokerLink
import CommandLineSupport
import FleetProtocol
import FoundationEssentials

/// lifecycled's push and fleet settings: `lifecycled.conf`, an INI file.
///
/// ```ini
/// [broker]
/// url = mqtts://broker.example.net:8883   # mqtt:// or mqtts://
/// username = …          # default: the device id (what an ACL's %u matches)
/// password-file = /etc/applifecycle/broker-password   # or password = …
/// ca-file = …           # TLS: the CA, and a client certificate and key if the broker wants one
/// certificate-file = …
/// key-file = …
/// device-id = …         # default: derived from /etc/machine-id (never the raw id)
/// client-id = …         # default: lifecycled-<device id>; stable, for the persistent session
/// keepalive = 30
///
/// [push]
/// endpoint-url = https://push.example.net   # the gateway's public URL; endpoints are <it>/push/<token>
///
/// [lifecycle]           # LifecycleSettings: how the windows move apps (no fleet needed)
/// foreground-mode = desktop   # or single (phones, kiosks)
/// freeze-delay = 10           # seconds before a plain program in the background is frozen
/// window-source = auto        # auto, wayland, x11 or off
/// ```
///
/// Read from `--config`, else `$XDG_CONFIG_HOME/applifecycle/lifecycled.conf` (default
/// `~/.config/…`), else `/etc/applifecycle/lifecycled.conf`. No file: no fleet, and the
/// distributor refuses registrations with `ACTION_REQUIRED`.
struct FleetConfiguration: Sendable, Equatable {
    /// A bad file: its path, line and what is wrong. The INI reader's error (codes `unreadable`,
    /// `syntax`, `setting`), so that the file's syntax and its settings fail alike.
    typealias Invalid = INIFileError

    /// The broker connection (client id, credentials, TLS, the Last Will are set by the fleet link).
    var broker: BrokerConfiguration
    /// The device's id: its topics' level, and the default MQTT user name.
    var deviceID: String
    /// The gateway's public base URL, without a trailing slash.
    var endpointURL: String
    /// The file it came from.
    var path: String

    /// The file to read: `explicit`, else the first that exists of the two defaults.
    static func locate(explicit: String?, environment: [String: String]) -> String? {
        if let explicit { return explicit }
        let configHome =
            environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"].map { $0 + "/.config" } ?? "/nonexistent")
        for candidate in [configHome + "/applifecycle/lifecycled.conf", "/etc/applifecycle/lifecycled.conf"]
        where FileManager.default.fileExists(atPath: candidate) {
            return candidate
        }
        return nil
    }

    /// The sections of a `lifecycled.conf`, read with a bound and checked against the known
    /// sections and keys (`[broker]`, `[push]`, and `[lifecycle]`: ``LifecycleSettings``).
    ///
    /// - Parameters:
    ///   - path: The file.
    /// - Throws: ``Invalid`` for a file that cannot be read, bad syntax, or an unknown section or key.
    static func readSections(path: String) throws(Invalid) -> [String: [String: String]] {
        let sections: [String: [String: String]]
        do {
            sections = try INIFile(contentsOf: path).sections
        } catch {
            throw Invalid(error.code == .unreadable ? .unreadable : .syntax, error.message)
        }
        let known: [String: Set<String>] = [
            "broker": [
                "url", "username", "password", "password-file", "ca-file", "certificate-file", "key-file", "device-id",
                "client-id", "keepalive",
            ],
            "push": ["endpoint-url"],
            "lifecycle": LifecycleSettings.keys,
        ]
        for (section, values) in sections {
            guard let keys = known[section] else { throw Invalid(.setting, "\(path): unknown section [\(section)]") }
            for key in values.keys where !keys.contains(key) {
                throw Invalid(.setting, "\(path): unknown key '\(key)' in [\(section)]")
            }
        }
        return sections
    }

    /// Reads and checks a file's fleet part (``load(sections:path:deriveDeviceID:)``).
    ///
    /// - Parameters:
    ///   - path: The file.
    static func load(path: String) throws(Invalid) -> FleetConfiguration? {
        try load(sections: readSections(path: path), path: path)
    }

    /// Reads and checks the fleet part of a file: `nil` when it has neither `[broker]` nor `[push]`
    /// (a file with only `[lifecycle]` settings configures no fleet).
    ///
    /// - Parameters:
    ///   - sections: The file's sections (``readSections(path:)``).
    ///   - path: The file, for messages.
    ///   - deriveDeviceID: The default device id (``DeviceIdentity/derived(applicationID:)``).
    static func load(
        sections: [String: [String: String]], path: String,
        deriveDeviceID: () throws -> String = { try DeviceIdentity.derived() }
    ) throws(Invalid) -> FleetConfiguration? {
        guard sections["broker"] != nil || sections["push"] != nil else { return nil }
        let broker = sections["broker"] ?? [:]
        guard let url = broker["url"] else { throw Invalid(.setting, "\(path): [broker] needs url") }
        guard let endpoint = sections["push"]?["endpoint-url"] else {
            throw Invalid(.setting, "\(path): [push] needs endpoint-url (the gateway's public URL)")
        }
        guard let endpointURL = URL(string: endpoint), ["http", "https"].contains(endpointURL.scheme ?? ""),
            endpointURL.host != nil, endpointURL.query == nil
        else {
            throw Invalid(.setting, "\(path): endpoint-url '\(endpoint)' is not an http(s) URL")
        }
        let deviceID: String
        if let explicit = broker["device-id"] {
            deviceID = explicit
        } else {
            do {
                deviceID = try deriveDeviceID()
            } catch {
                throw Invalid(.setting, "\(path): no device-id, and none can be derived: \(error)")
            }
        }
        guard DeviceIdentity.isValid(deviceID) else {
            throw Invalid(.setting, "\(path): device-id '\(deviceID)' is not a valid topic level")
        }
        var password = broker["password"]
        if let file = broker["password-file"] {
            guard password == nil else { throw Invalid(.setting, "\(path): password and password-file both set") }
            do {
                password = try BrokerConfiguration.password(fromFile: file)
            } catch {
                throw Invalid(.setting, "\(path): password-file: \(error.message)")
            }
        }
        var configuration: BrokerConfiguration
        do {
            configuration = try BrokerConfiguration(
                url: url, clientID: broker["client-id"] ?? "lifecycled-\(deviceID)",
                username: broker["username"] ?? deviceID, password: password)
        } catch {
            throw Invalid(.setting, "\(path): \(error)")
        }
        configuration.caFile = broker["ca-file"]
        configuration.certificateFile = broker["certificate-file"]
        configuration.keyFile = broker["key-file"]
        if let keepalive = broker["keepalive"] {
            guard let seconds = Int(keepalive), (5...3600).contains(seconds) else {
                throw Invalid(.setting, "\(path): keepalive must be 5…3600 seconds, not '\(keepalive)'")
            }
            configuration.keepAlive = seconds
        }
        configuration.cleanSession = false
        var base = endpoint
        while base.hasSuffix("/") { base.removeLast() }
        return FleetConfiguration(broker: configuration, deviceID: deviceID, endpointURL: base, path: path)
    }

    /// `[section]` and `key = value` lines (``INIFile``, the project's one INI parser).
    static func parse(_ text: String, path: String) throws(Invalid) -> [String: [String: String]] {
        do {
            return try INIFile(parsing: text, path: path).sections
        } catch {
            throw Invalid(.syntax, error.message)
        }
    }
}
