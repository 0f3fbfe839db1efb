import AppLifecycle
import ArgumentParser
import Foundation
import LifecycledClient
import SystemdBus

/// `lifecyclectl install-desktop-files [--data-home DIR]`: for each manifest, a desktop entry
/// `<id>.desktop` (`DBusActivatable=true`, `MimeType=x-scheme-handler/<scheme>;` per claimed
/// scheme, `Actions=` from the quick actions) and a D-Bus service file `<id>.service` that starts
/// the app through lifecycled, so launchers, `gio launch` and `xdg-open` reach its delegate.
struct InstallDesktopFilesCommand: CtlCommand {
    static let configuration = CommandConfiguration(
        commandName: "install-desktop-files",
        abstract: "Write a desktop entry and a D-Bus service file for every app lifecycled knows.")

    @OptionGroup var daemon: DaemonOptions

    @Option(
        name: .customLong("data-home"),
        help: ArgumentHelp(
            "Where to write applications/ and dbus-1/services/ (default: $XDG_DATA_HOME, else ~/.local/share).",
            valueName: "dir"))
    var dataHome: String?

    @Option(help: ArgumentHelp("The lifecyclectl the files run (default: this one).", valueName: "path"))
    var lifecyclectl: String?

    @Option(
        name: .customLong("manifest"),
        help: ArgumentHelp(
            "Read this manifest file instead of asking lifecycled (repeatable; for packaging, as make install does).",
            valueName: "file"))
    var manifests: [String] = []

    func run() async throws { try await runOnStandardStreams() }

    /// The files for one manifest (`ListManifests` entry): the desktop entry and the service file.
    static func files(for manifest: UserInfo, lifecyclectl: String, address: String?) throws -> (
        id: String, desktop: String, service: String
    ) {
        guard let id = manifest["id"]?.stringValue, LifecycledProtocol.isValidAppID(id) else {
            throw ValidationError("lifecycled listed a manifest without a valid id")
        }
        func escaped(_ text: String) -> String {
            text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
        }
        func quoted(_ argument: String) -> String {
            argument.allSatisfy { $0.isLetter || $0.isNumber || "/._-+:=".contains($0) }
                ? argument
                : "\""
                    + argument.replacingOccurrences(of: "\\", with: "\\\\\\\\")
                    .replacingOccurrences(of: "\"", with: "\\\\\"").replacingOccurrences(of: "$", with: "\\\\$")
                    .replacingOccurrences(of: "`", with: "\\\\`") + "\""
        }
        let addressArguments = address.map { ["--address", $0] } ?? []
        let run = ([lifecyclectl, "activate"] + addressArguments).map(quoted).joined(separator: " ")
        let schemes = manifest["urlSchemes"]?.arrayValue?.compactMap(\.stringValue) ?? []
        let items = manifest["shortcutItems"]?.arrayValue?.compactMap(ShortcutItem.init(propertyList:)) ?? []
        var desktop = """
            [Desktop Entry]
            Type=Application
            Name=\(escaped(manifest["name"]?.stringValue ?? id))
            Exec=\(run) \(id) %U
            DBusActivatable=true
            X-AppLifecycle-Managed=true

            """
        if !schemes.isEmpty {
            desktop += "MimeType=" + schemes.map { "x-scheme-handler/\($0);" }.joined() + "\n"
        }
        if !items.isEmpty {
            desktop += "Actions=" + items.map { "\($0.type);" }.joined() + "\n"
            for item in items {
                desktop += """

                    [Desktop Action \(item.type)]
                    Name=\(escaped(item.localizedTitle))
                    Exec=\(run) --action \(item.type) \(id)

                    """
            }
        }
        let service = """
            [D-BUS Service]
            Name=\(id)
            Exec=\(run) --background --wait-for-name \(id)

            """
        return (id, desktop, service)
    }

    func execute(output: CtlOutput) async throws {
        let environment = ProcessInfo.processInfo.environment
        let home =
            dataHome ?? environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        guard home.hasPrefix("/") else { throw ValidationError("--data-home must be an absolute path") }
        let executable = lifecyclectl ?? (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        guard let executable, executable.hasPrefix("/") else {
            throw ValidationError("cannot tell where lifecyclectl is; pass --lifecyclectl")
        }
        var entries: [BusValue] = []
        if manifests.isEmpty {
            let reply = try await DaemonClient.with(daemon.busAddress) { client in
                try await client.call(LifecycledProtocol.Method.listManifests)
            }
            guard reply.count == 1, case .array(_, let listed) = reply[0] else {
                throw BusError(
                    name: BusError.Name.failed, message: "ListManifests returned \(BusValue.signature(of: reply))")
            }
            entries = listed
        } else {
            for path in manifests {
                let manifest: UserInfo
                do {
                    manifest = try UserInfo(json: String(contentsOfFile: path, encoding: .utf8))
                } catch {
                    throw ValidationError("--manifest \(path) is not a JSON object: \(error)")
                }
                entries.append(UserInfoBusCodec.encode(manifest))
            }
        }
        let applications = home + "/applications"
        let services = home + "/dbus-1/services"
        for directory in [applications, services] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        for entry in entries {
            let manifest = try UserInfoBusCodec.decodeUserInfo(entry)
            let files = try Self.files(for: manifest, lifecyclectl: executable, address: daemon.address)
            try Self.write(files.desktop, to: "\(applications)/\(files.id).desktop")
            try Self.write(files.service, to: "\(services)/\(files.id).service")
            output.out("installed \(applications)/\(files.id).desktop and \(services)/\(files.id).service")
        }
        if entries.isEmpty { output.out("no manifests: nothing installed") }
        try Self.updateMIMEInfoCache(in: applications)
        output.out("updated \(applications)/mimeinfo.cache")
    }

    /// Rewrites `mimeinfo.cache` from every desktop entry of the directory, as
    /// `update-desktop-database` does: GIO (`gio open`, GTK apps) finds `MimeType=` associations
    /// through it, not by reading each entry. Entries that do not parse are left out.
    static func updateMIMEInfoCache(in directory: String) throws {
        var handlers: [String: [String]] = [:]
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names.sorted() where name.hasSuffix(".desktop") {
            guard let text = try? String(contentsOfFile: directory + "/" + name, encoding: .utf8),
                let entry = try? DesktopEntry(parsing: text, id: name), !entry.isHidden
            else { continue }
            for type in entry.mimeTypes { handlers[type, default: []].append(name) }
        }
        var cache = "[MIME Cache]\n"
        for type in handlers.keys.sorted() { cache += "\(type)=" + handlers[type]!.map { "\($0);" }.joined() + "\n" }
        try write(cache, to: directory + "/mimeinfo.cache")
    }

    /// Replaces a file atomically, readable by everyone (launchers of other users read system-wide ones).
    static func write(_ text: String, to path: String) throws {
        try AtomicFile.write(Data(text.utf8), to: URL(fileURLWithPath: path))
        guard chmod(path, 0o644) == 0 else {
            throw BusError(
                name: BusError.Name.failed, message: "chmod 0644 \(path): \(String(cString: strerror(errno)))")
        }
    }
}
