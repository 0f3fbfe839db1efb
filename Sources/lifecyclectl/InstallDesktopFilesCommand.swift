import AppLifecycle
import ArgumentParser
import DesktopIntegration
import Foundation
import LifecycledProtocol
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

    @Flag(help: "Replace desktop entries and service files that lifecyclectl did not write.")
    var force = false

    func run() async throws { try await runOnStandardStreams() }

    /// The files for one manifest (`ListManifests` entry): the desktop entry and the service file.
    static func files(for manifest: UserInfo, lifecyclectl: String, address: String?) throws -> (
        id: String, desktop: String, service: String
    ) {
        guard let id = manifest["id"]?.stringValue, LifecycledProtocol.isValidAppID(id) else {
            throw ValidationError("a manifest has no valid id (reverse-DNS, like org.example.App)")
        }
        let schemes = manifest["urlSchemes"]?.arrayValue?.compactMap(\.stringValue) ?? []
        let items = manifest["shortcutItems"]?.arrayValue?.compactMap(ShortcutItem.init(propertyList:)) ?? []
        // The manifest rules lifecycled applies (a --manifest file was not read by it): anything
        // else could put a line break or a key into the files.
        func isLetter(_ scalar: Unicode.Scalar) -> Bool { ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) }
        for scheme in schemes {
            guard let first = scheme.unicodeScalars.first, isLetter(first),
                scheme.unicodeScalars.allSatisfy({
                    isLetter($0) || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0)
                })
            else { throw ValidationError("\(id): URL scheme '\(scheme)' is not valid (RFC 3986)") }
        }
        for item in items {
            guard !item.type.isEmpty, item.type.utf8.count <= 64,
                item.type.unicodeScalars.allSatisfy({
                    ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-"
                })
            else { throw ValidationError("\(id): quick action type '\(item.type)' is not a desktop action id") }
        }
        /// A desktop-entry string value: backslash and line breaks escaped.
        func escaped(_ text: String) -> String {
            text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
                .replacingOccurrences(of: "\r", with: "\\r")
        }
        /// An `Exec=` argument of a desktop entry: `%` doubled (field codes), quoted when needed with
        /// the specification's escapes, then the string escape of every value.
        func desktopArgument(_ argument: String) -> String {
            let percent = argument.replacingOccurrences(of: "%", with: "%%")
            guard !percent.allSatisfy({ $0.isLetter || $0.isNumber || "/._-+:=%,".contains($0) }) else {
                return percent
            }
            var quoted = "\""
            for character in percent {
                if "\"`$\\".contains(character) { quoted += "\\" }
                quoted.append(character)
            }
            return escaped(quoted + "\"")
        }
        /// An `Exec=` argument of a D-Bus service file (dbus-daemon splits it like a shell, no other escapes).
        func serviceArgument(_ argument: String) -> String {
            guard !argument.allSatisfy({ $0.isLetter || $0.isNumber || "/._-+:=%,".contains($0) }) else {
                return argument
            }
            return "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
        }
        let addressArguments = address.map { ["--address", $0] } ?? []
        let command = [lifecyclectl, "activate"] + addressArguments
        let run = command.map(desktopArgument).joined(separator: " ")
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
        let serviceRun = command.map(serviceArgument).joined(separator: " ")
        let service = """
            [D-BUS Service]
            Name=\(id)
            Exec=\(serviceRun) --background --wait-for-name \(id)

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
                try await client.call(LifecycledProtocol.Method.listManifests.name)
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
            let desktopPath = "\(applications)/\(files.id).desktop"
            let servicePath = "\(services)/\(files.id).service"
            // A file someone else wrote for the id (the app's own package) is not replaced unasked.
            if !force, let existing = try? String(contentsOfFile: desktopPath, encoding: .utf8),
                !existing.contains("\nX-AppLifecycle-Managed=true\n")
            {
                throw ValidationError("\(desktopPath) exists and was not written by lifecyclectl; --force replaces it")
            }
            if !force, let existing = try? String(contentsOfFile: servicePath, encoding: .utf8),
                !existing.contains(" activate ")
            {
                throw ValidationError("\(servicePath) exists and was not written by lifecyclectl; --force replaces it")
            }
            try Self.write(files.desktop, to: desktopPath)
            try Self.write(files.service, to: servicePath)
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
        for (id, file) in DesktopEntry.files(in: directory).files {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
            // The MimeType= line alone, as update-desktop-database reads it (an entry this parser
            // rejects for other reasons keeps its associations).
            guard let entry = try? DesktopEntry(parsing: text, id: id) else {
                let line = text.split(separator: "\n").first { $0.hasPrefix("MimeType=") }
                for type in DesktopEntry.list(line.map { String($0.dropFirst(9)) }) {
                    handlers[type, default: []].append(id)
                }
                continue
            }
            guard !entry.isHidden else { continue }
            for type in entry.mimeTypes { handlers[type, default: []].append(id) }
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
