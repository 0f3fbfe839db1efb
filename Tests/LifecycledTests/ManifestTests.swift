import Foundation
import Glibc
import SystemdBusTesting
import Testing

@testable import LifecycleDaemon

@Suite("App manifests")
struct ManifestTests {
    /// Writes `<dir>/<id>.json` with the given JSON.
    private func manifest(_ dir: TemporaryDirectory, _ sub: String, _ id: String, _ json: String) throws {
        try dir.write("\(sub)/\(id).json", json)
    }

    @Test func validManifestLoadsWithNormalizedSchemes() throws {
        let dir = try TemporaryDirectory(prefix: "lifecycled-tests")
        defer { dir.remove() }
        try manifest(
            dir, "a", "org.example.Notes",
            """
            {"id": "org.example.Notes", "name": "Notes", "executable": "/bin/sh", "arguments": ["-c", "true"],
             "urlSchemes": ["Notes", "x-notes+v1.2", "notes"], "backgroundModes": ["fetch", "remote-notification"]}
            """)
        let store = ManifestStore(directories: [dir.path + "/a"])
        #expect(store.errors.isEmpty, "\(store.errors)")
        let notes = try #require(store.manifest(id: "org.example.Notes"))
        #expect(notes.name == "Notes")
        #expect(notes.arguments == ["-c", "true"])
        #expect(notes.urlSchemes == ["notes", "x-notes+v1.2"])
        #expect(notes.backgroundModes == [.fetch, .remoteNotification])
        #expect(store.manifest(forURLScheme: "NOTES")?.id == "org.example.Notes")
        #expect(store.manifest(for: URL(string: "x-notes+v1.2://open/1")!)?.id == "org.example.Notes")
        #expect(store.manifest(forURLScheme: "mailto") == nil)
    }

    @Test(arguments: [
        (
            #"{"id": "notreversedns", "executable": "/bin/sh"}"#, "notreversedns", ManifestError.Code.invalidIdentifier,
            "reverse-DNS"
        ),
        (#"{"id": "org.9bad", "executable": "/bin/sh"}"#, "org.9bad", .invalidIdentifier, "reverse-DNS"),
        (#"{"id": "org.example.Other", "executable": "/bin/sh"}"#, "org.example.App", .identifierMismatch, "file name"),
        (#"{"id": "org.example.App", "executable": "bin/sh"}"#, "org.example.App", .executableNotAbsolute, "absolute"),
        (
            #"{"id": "org.example.App", "executable": "/nonexistent/app"}"#, "org.example.App", .executableNotFound,
            "does not exist"
        ),
        (
            #"{"id": "org.example.App", "executable": "/proc/self/status"}"#, "org.example.App",
            .executableNotExecutable, "not executable"
        ),
        (
            #"{"id": "org.example.App", "executable": "/bin"}"#, "org.example.App", .executableNotFound,
            "not a regular file"
        ),
        (
            #"{"id": "org.example.App", "executable": "/bin/sh", "urlSchemes": ["1http"]}"#, "org.example.App",
            .invalidURLScheme, "'1http'"
        ),
        (
            #"{"id": "org.example.App", "executable": "/bin/sh", "urlSchemes": ["my_scheme"]}"#, "org.example.App",
            .invalidURLScheme, "RFC 3986"
        ),
        (
            #"{"id": "org.example.App", "executable": "/bin/sh", "backgroundModes": ["fetch", "bluetooth"]}"#,
            "org.example.App", .unknownBackgroundMode, "'bluetooth'"
        ),
        (#"{"id": "org.example.App", "executable": "/bin/sh", "name": ""}"#, "org.example.App", .invalidName, "empty"),
        (
            #"{"id": "org.example.App", "executable": "/bin/sh", "urlScheme": ["x"]}"#, "org.example.App",
            .unknownField, "'urlScheme'"
        ),
        (#"{"id": "org.example.App"}"#, "org.example.App", .missingField, "'executable'"),
        (
            #"{"id": "org.example.App", "executable": "/bin/sh", "arguments": "-x"}"#, "org.example.App", .wrongType,
            "'arguments'"
        ),
        (
            #"{"id": "org.example.App", "executable": "/bin/sh", "arguments": [1]}"#, "org.example.App", .wrongType,
            "arguments"
        ),
        (#"["org.example.App"]"#, "org.example.App", .malformedJSON, "JSON object"),
        ("{not json", "org.example.App", .malformedJSON, "not valid JSON"),
    ])
    func invalidFieldGivesItsCode(json: String, fileID: String, code: ManifestError.Code, messagePart: String) throws {
        let dir = try TemporaryDirectory(prefix: "lifecycled-tests")
        defer { dir.remove() }
        try manifest(dir, "a", fileID, json)
        let store = ManifestStore(directories: [dir.path + "/a"])
        #expect(store.entries.isEmpty)
        let error = try #require(store.errors.first)
        #expect(store.errors.count == 1)
        #expect(error.code == code)
        #expect(error.path == "\(dir.path)/a/\(fileID).json")
        #expect(error.message.contains(messagePart), "\(error.message)")
        #expect(error.description.contains(code.description))
    }

    @Test func earlierDirectoryWinsForTheSameID() throws {
        let dir = try TemporaryDirectory(prefix: "lifecycled-tests")
        defer { dir.remove() }
        try manifest(
            dir, "home", "org.example.App", #"{"id": "org.example.App", "executable": "/bin/sh", "name": "Home"}"#)
        try manifest(
            dir, "system", "org.example.App", #"{"id": "org.example.App", "executable": "/bin/true", "name": "System"}"#
        )
        let store = ManifestStore(directories: [dir.path + "/home", dir.path + "/missing", dir.path + "/system"])
        #expect(store.errors.isEmpty)
        #expect(store.manifest(id: "org.example.App")?.name == "Home")
        #expect(store.shadowed == ["\(dir.path)/system/org.example.App.json"])
    }

    @Test func brokenOverrideDoesNotHideTheSystemCopy() throws {
        let dir = try TemporaryDirectory(prefix: "lifecycled-tests")
        defer { dir.remove() }
        try manifest(dir, "home", "org.example.App", #"{"id": "org.example.App", "executable": "relative"}"#)
        try manifest(
            dir, "system", "org.example.App", #"{"id": "org.example.App", "executable": "/bin/true", "name": "System"}"#
        )
        let store = ManifestStore(directories: [dir.path + "/home", dir.path + "/system"])
        #expect(store.manifest(id: "org.example.App")?.name == "System")
        #expect(store.errors.map(\.code) == [.executableNotAbsolute])
    }

    @Test func duplicateSchemeAcrossAppsNamesBoth() throws {
        let dir = try TemporaryDirectory(prefix: "lifecycled-tests")
        defer { dir.remove() }
        try manifest(
            dir, "home", "org.example.B", #"{"id": "org.example.B", "executable": "/bin/sh", "urlSchemes": ["mail"]}"#)
        try manifest(
            dir, "system", "org.example.A",
            #"{"id": "org.example.A", "executable": "/bin/sh", "urlSchemes": ["web", "MAIL"]}"#)
        let store = ManifestStore(directories: [dir.path + "/home", dir.path + "/system"])
        #expect(store.manifest(forURLScheme: "mail")?.id == "org.example.B")
        #expect(store.manifest(id: "org.example.A") == nil)
        #expect(store.manifest(forURLScheme: "web") == nil)
        let error = try #require(store.errors.first)
        #expect(error.code == .duplicateURLScheme)
        #expect(error.path == "\(dir.path)/system/org.example.A.json")
        #expect(error.message.contains("org.example.A") && error.message.contains("org.example.B"))
        #expect(error.message.contains("\(dir.path)/home/org.example.B.json"))
    }

    @Test func garbageAndUnreadableFilesDoNotStopTheOthers() throws {
        let dir = try TemporaryDirectory(prefix: "lifecycled-tests")
        defer { dir.remove() }
        try manifest(dir, "a", "org.example.A", #"{"id": "org.example.A", "executable": "/bin/sh"}"#)
        try dir.write("a/org.example.Garbage.json", "\u{0}\u{1}garbage")
        try FileManager.default.createDirectory(
            atPath: dir.path + "/a/org.example.Dir.json", withIntermediateDirectories: true)
        try manifest(dir, "a", "org.example.Z", #"{"id": "org.example.Z", "executable": "/bin/true"}"#)
        try dir.write("a/README.txt", "not a manifest")
        try dir.write("a/.org.example.A.json.swp", "editor junk")
        let store = ManifestStore(directories: [dir.path + "/a"])
        #expect(store.manifests.map(\.id) == ["org.example.A", "org.example.Z"])
        #expect(store.errors.map(\.code) == [.unreadable, .malformedJSON])
        #expect(
            store.errors.map { ($0.path as NSString).lastPathComponent } == [
                "org.example.Dir.json", "org.example.Garbage.json",
            ])
    }

    /// The 1 MiB limit holds on what is read (it once read a size attribute that was never an `Int`
    /// under FoundationEssentials, so no manifest was ever too large), and a FIFO does not block.
    @Test func aManifestOverTheLimitIsRefusedAndLifecycledCheckSaysSo() async throws {
        let dir = try TemporaryDirectory(prefix: "lifecycled-tests")
        defer { dir.remove() }
        let padding = String(repeating: " ", count: 2_000_000)
        try manifest(dir, "a", "org.example.Big", #"{"id": "org.example.Big", "executable": "/bin/sh"\#(padding)}"#)
        try manifest(dir, "a", "org.example.Fits", #"{"id": "org.example.Fits", "executable": "/bin/sh"}"#)
        #expect(mkfifo(dir.path + "/a/org.example.Fifo.json", 0o600) == 0)
        let store = ManifestStore(directories: [dir.path + "/a"])
        #expect(store.manifests.map(\.id) == ["org.example.Fits"])
        #expect(store.errors.map(\.code) == [.unreadable, .unreadable])
        #expect(store.errors.first?.description.contains("larger than the 1048576-byte limit") == true)
        #expect(store.errors.last?.description.contains("not a regular file") == true)

        let binary = try #require(BuiltProducts.path(of: "lifecycled"), "lifecycled is not built")
        let check = try await runTool(binary, ["--check", "--apps-directory", dir.path + "/a"])
        #expect(check.status == 1, "\(check.stdout) \(check.stderr)")
        #expect(check.stderr.contains("org.example.Big.json"), "\(check.stderr)")
        #expect(check.stdout.contains("org.example.Fits"))
    }

    /// `--check` reads lifecycled.conf as the daemon would and says what the daemon would leave out
    /// (it only logs that when it starts).
    @Test func lifecycledCheckReportsTheConfigurationFilesProblems() async throws {
        let dir = try TemporaryDirectory(prefix: "lifecycled-tests")
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.path + "/apps", withIntermediateDirectories: true)
        let binary = try #require(BuiltProducts.path(of: "lifecycled"), "lifecycled is not built")
        let cases: [(file: String?, status: Int32, message: String)] = [
            (
                "[broker\nurl = mqtt://x\n", 1,
                "/lifecycled.conf:1: '[broker' is not a [section]; lifecycled would start without any of the file's settings"
            ),
            (
                "[broker]\nurl = mqtt://x\n", 1,
                "[push] needs endpoint-url (the gateway's public URL); without it lifecycled starts with no fleet"
            ),
            ("[lifecycle]\nforeground-mode = sideways\n", 1, "without it the [lifecycle] settings are not applied"),
            ("[lifecycle]\nforeground-mode = single\n", 0, ""),
            (nil, 1, "does not exist: check --config"),
        ]
        for (index, entry) in cases.enumerated() {
            let path = dir.path + "/\(index)/lifecycled.conf"
            try FileManager.default.createDirectory(atPath: dir.path + "/\(index)", withIntermediateDirectories: true)
            if let file = entry.file { _ = FileManager.default.createFile(atPath: path, contents: Data(file.utf8)) }
            let check = try await runTool(
                binary, ["--check", "--apps-directory", dir.path + "/apps", "--config", path])
            #expect(check.status == entry.status, "\(index): \(check.stdout) \(check.stderr)")
            #expect(
                entry.message.isEmpty ? check.stderr.isEmpty : check.stderr.contains(entry.message),
                "\(index): \(check.stderr)")
            #expect(check.stdout.contains("configuration\t\(entry.status == 0 ? "good" : "has problems")\t(\(path))"))
        }
    }

    @Test func manifestRoundTripsThroughJSON() throws {
        let original = try AppManifest(
            id: "org.example.App", name: "App", executable: "/bin/sh", arguments: ["-c"], urlSchemes: ["app"],
            backgroundModes: [.audio, .voip])
        let decoded = try JSONDecoder().decode(AppManifest.self, from: JSONEncoder().encode(original))
        #expect(decoded == original)
    }

    @Test func xdgDirectoriesFollowTheSpec() {
        let defaults = XDGDataDirectories(environment: ["HOME": "/home/u"])
        #expect(defaults.directories == ["/home/u/.local/share", "/usr/local/share", "/usr/share"])
        #expect(defaults.appsDirectories.first == "/home/u/.local/share/applifecycle/apps")
        let custom = XDGDataDirectories(environment: [
            "HOME": "/home/u", "XDG_DATA_HOME": "/data/", "XDG_DATA_DIRS": "relative:/opt/share::/data",
        ])
        #expect(custom.directories == ["/data", "/opt/share"])
        let relativeHome = XDGDataDirectories(environment: [
            "HOME": "/home/u", "XDG_DATA_HOME": "rel", "XDG_DATA_DIRS": "",
        ])
        #expect(relativeHome.directories == ["/home/u/.local/share", "/usr/local/share", "/usr/share"])
    }

    @Test func storeReadsTheXDGEnvironment() throws {
        let dir = try TemporaryDirectory(prefix: "lifecycled-tests")
        defer { dir.remove() }
        try manifest(
            dir, "home/applifecycle/apps", "org.example.A", #"{"id": "org.example.A", "executable": "/bin/sh"}"#)
        try manifest(
            dir, "sys/applifecycle/apps", "org.example.B", #"{"id": "org.example.B", "executable": "/bin/sh"}"#)
        let store = ManifestStore(environment: [
            "XDG_DATA_HOME": dir.path + "/home", "XDG_DATA_DIRS": dir.path + "/sys",
        ])
        #expect(store.manifests.map(\.id) == ["org.example.A", "org.example.B"])
    }
}
