import AppLifecycle
import DesktopIntegration
import Foundation
import LifecycledClient
import SystemdBus
import SystemdBusTesting
import Testing

/// An XDG tree in a temporary directory: config home, one config dir, data home, one data dir.
private struct XDGTree {
    let root: TemporaryDirectory
    var environment: [String: String] {
        [
            "HOME": root.path, "XDG_CONFIG_HOME": root.path + "/config", "XDG_CONFIG_DIRS": root.path + "/etc-xdg",
            "XDG_DATA_HOME": root.path + "/data", "XDG_DATA_DIRS": root.path + "/usr-share",
            "XDG_CURRENT_DESKTOP": "KDE",
        ]
    }

    init() throws { root = try TemporaryDirectory(prefix: "mimeapps") }

    func entry(
        _ id: String, in directory: String = "usr-share", mime: String = "", exec: String = "viewer %u",
        extra: String = ""
    ) throws {
        try root.write(
            "\(directory)/applications/\(id)",
            "[Desktop Entry]\nType=Application\nName=\(id)\nExec=\(exec)\nMimeType=\(mime)\n\(extra)")
    }
}

@Suite("XDG MIME apps and desktop entries")
struct MIMEAppsTests {
    @Test func theDefaultFollowsTheSpecificationsOrder() throws {
        let tree = try XDGTree()
        defer { tree.root.remove() }
        try tree.entry("browser.desktop", mime: "x-scheme-handler/https;")
        try tree.entry("other-browser.desktop", mime: "x-scheme-handler/https;")
        try tree.entry("mailer.desktop", mime: "x-scheme-handler/mailto;")
        try tree.entry("gone.desktop", mime: "x-scheme-handler/gopher;", extra: "Hidden=true")
        // No list yet: the first entry (by id) whose MimeType has it.
        var apps = MIMEApps(environment: tree.environment)
        #expect(apps.handler(for: URL(string: "https://example.org")!)?.id == "browser.desktop")
        #expect(apps.handler(for: URL(string: "gopher://x")!) == nil, "a Hidden entry counts as deleted")
        #expect(apps.handler(for: URL(string: "irc://x")!) == nil)

        // A system default, overridden by the desktop-specific user list; a user removal hides the system one.
        try tree.root.write(
            "etc-xdg/mimeapps.list", "[Default Applications]\nx-scheme-handler/https=browser.desktop\n")
        try tree.root.write(
            "config/kde-mimeapps.list",
            "[Default Applications]\nx-scheme-handler/https=missing.desktop;other-browser.desktop;\n")
        apps = MIMEApps(environment: tree.environment)
        #expect(apps.handler(for: URL(string: "HTTPS://example.org")!)?.id == "other-browser.desktop")
        try tree.root.write(
            "config/kde-mimeapps.list", "[Removed Associations]\nx-scheme-handler/mailto=mailer.desktop\n")
        apps = MIMEApps(environment: tree.environment)
        #expect(apps.handler(for: URL(string: "https://example.org")!)?.id == "browser.desktop")
        #expect(apps.handler(for: URL(string: "mailto:a@b")!) == nil)
        #expect(apps.problems.isEmpty, "\(apps.problems)")
    }

    @Test func malformedFilesAreReportedAndSkippedWhileTheRestCounts() throws {
        let tree = try XDGTree()
        defer { tree.root.remove() }
        try tree.entry("good.desktop", mime: "x-scheme-handler/notes;")
        try tree.root.write("usr-share/applications/broken.desktop", "Name=No group\n[Desktop Entry]\n")
        try tree.root.write("usr-share/applications/nogroup.desktop", "[Something Else]\nType=Application\n")
        try tree.root.write(
            "config/mimeapps.list", "stray line\n[Default Applications]\nx-scheme-handler/notes=good.desktop\n")
        let apps = MIMEApps(environment: tree.environment)
        #expect(apps.handler(for: URL(string: "notes://1")!)?.id == "good.desktop")
        #expect(apps.problems.count == 3, "\(apps.problems)")
        #expect(apps.problems.contains { $0.contains("broken.desktop:1: a key before the first group") })
        #expect(apps.problems.contains { $0.contains("mimeapps.list:1: 'stray line' is not key=value") })
    }

    @Test func execLinesExpandFieldCodesAndQuotes() throws {
        let entry = try DesktopEntry(
            parsing: #"""
                [Desktop Entry]
                Type=Application
                Name=Viewer
                Exec="/opt/my viewer/bin" --title "a \"b\"" %U %i %%done
                Actions=compose;ghost;
                [Desktop Action compose]
                Name=New note
                """#, id: "org.example.Viewer.desktop")
        #expect(
            entry.arguments(opening: URL(string: "notes://x")!) == [
                "/opt/my viewer/bin", "--title", #"a "b""#, "notes://x", "%done",
            ])
        #expect(entry.actions.map(\.id) == ["compose"])
        #expect(entry.busName == "org.example.Viewer")
        #expect(throws: DesktopEntry.ParseError.self) {
            try DesktopEntry(parsing: "[Desktop Entry]\nType=Application\n", id: "x.desktop")
        }
    }

    @MainActor
    @Test func canOpenURLAnswersFromTheMIMEAppsFilesAndOpenStartsTheHandler() async throws {
        final class Delegate: ApplicationDelegate {}
        let tree = try XDGTree()
        defer { tree.root.remove() }
        let marker = tree.root.path + "/opened"
        let script = try tree.root.write(
            "bin/handler", "#!/bin/sh\nprintf '%s' \"$1\" > \(marker).tmp && mv \(marker).tmp \(marker)\n", mode: 0o755)
        try tree.entry("handler.desktop", mime: "x-scheme-handler/notes;", exec: "\(script) %u")
        let host = LifecycledHost(
            configuration: LifecycledHost.Configuration(
                appID: "org.example.Asker", busAddress: .address("unix:path=/nonexistent"),
                environment: tree.environment, handlesTerminationSignals: false))
        let app = Application(delegate: Delegate(), host: host)
        #expect(app.canOpenURL(URL(string: "notes://42")!))
        #expect(!app.canOpenURL(URL(string: "gopher://42")!))

        let opened = ValueRecorder<Bool>()
        app.open(URL(string: "notes://42")!) { opened.add($0) }
        #expect(try await opened.next("the completion") == true)
        #expect(
            await eventually { (try? String(contentsOfFile: marker, encoding: .utf8)) == "notes://42" },
            "the handler did not run with the URL")
        app.open(URL(string: "notes://43")!, options: [.universalLinksOnly: true]) { opened.add($0) }
        #expect(try await opened.next("the second completion") == false, "no hosted app claims notes:")
    }
}

@Suite("open(_:) through the OpenURI portal")
struct OpenURIPortalTests {
    @MainActor
    @Test func anUnclaimedURLGoesToThePortalWhenOneIsOnTheBus() async throws {
        final class Delegate: ApplicationDelegate {}
        let bus = try PrivateBus()
        defer { bus.stop() }
        // A stand-in from the portal's documented interface: OpenURI(s parent_window, s uri, a{sv}) → o handle.
        let portal = try DBusMock(
            name: "org.freedesktop.portal.Desktop", path: "/org/freedesktop/portal/desktop",
            interface: "org.freedesktop.portal.OpenURI", address: bus.address)
        defer { portal.stop() }
        try portal.addMethod(
            interface: "org.freedesktop.portal.OpenURI", name: "OpenURI", inSignature: "ssa{sv}", outSignature: "o",
            code: "ret = dbus.ObjectPath('/org/freedesktop/portal/desktop/request/1_1/t')")
        let host = LifecycledHost(
            configuration: LifecycledHost.Configuration(
                appID: "org.example.Asker", busAddress: .address(bus.address), environment: ["HOME": "/nonexistent"],
                handlesTerminationSignals: false))
        let app = Application(delegate: Delegate(), host: host)
        await host.prepare(app)
        defer { host.stop() }
        let opened = ValueRecorder<Bool>()
        app.open(URL(string: "https://example.org/a?b=c")!) { opened.add($0) }
        #expect(try await opened.next("the completion") == true)
        let calls = try portal.methodCalls("OpenURI")
        #expect(calls.contains("'https://example.org/a?b=c'"), "\(calls)")
        // With universalLinksOnly nothing but a hosted app may take it.
        app.open(URL(string: "https://example.org/b")!, options: [.universalLinksOnly: true]) { opened.add($0) }
        #expect(try await opened.next("the second completion") == false)
        #expect(try !portal.methodCalls("OpenURI").contains("example.org/b"))
    }
}

@Suite("XDG MIME apps, edge cases")
struct MIMEAppsEdgeTests {
    @Test func aHiddenUserEntryDeletesTheSystemOneAndLinkLoopsAreNotFollowed() throws {
        let root = try TemporaryDirectory(prefix: "mimeapps-edge")
        defer { root.remove() }
        let environment = [
            "HOME": root.path, "XDG_DATA_HOME": root.path + "/data", "XDG_DATA_DIRS": root.path + "/usr-share",
            "XDG_CONFIG_HOME": root.path + "/config", "XDG_CONFIG_DIRS": root.path + "/etc-xdg",
        ]
        try root.write(
            "usr-share/applications/viewer.desktop",
            "[Desktop Entry]\nType=Application\nName=Viewer\nExec=viewer %u\nMimeType=x-scheme-handler/notes;\n")
        try root.write(
            "data/applications/viewer.desktop", "[Desktop Entry]\nType=Application\nName=Viewer\nHidden=true\n")
        try FileManager.default.createSymbolicLink(
            atPath: root.path + "/usr-share/applications/loop",
            withDestinationPath: root.path + "/usr-share/applications")
        let apps = MIMEApps(environment: environment)
        #expect(apps.handler(for: URL(string: "notes://1")!) == nil, "the user's Hidden=true did not delete the id")
    }

    @Test func valuesUnescapeABackslashAndTheCacheSeesAChangedList() throws {
        let entry = try DesktopEntry(
            parsing: "[Desktop Entry]\nType=Application\nName=A\\\\B\nExec=x\n", id: "a.desktop")
        #expect(entry.name == "A\\B")
        let root = try TemporaryDirectory(prefix: "mimeapps-cache")
        defer { root.remove() }
        let environment = [
            "HOME": root.path, "XDG_DATA_HOME": root.path + "/data", "XDG_DATA_DIRS": root.path + "/none",
            "XDG_CONFIG_HOME": root.path + "/config", "XDG_CONFIG_DIRS": root.path + "/none",
        ]
        #expect(MIMEApps.current(environment: environment).handler(for: URL(string: "irc://x")!) == nil)
        try root.write(
            "data/applications/chat.desktop",
            "[Desktop Entry]\nType=Application\nName=Chat\nExec=chat %u\nMimeType=x-scheme-handler/irc;\n")
        #expect(MIMEApps.current(environment: environment).handler(for: URL(string: "irc://x")!)?.id == "chat.desktop")
    }
}
