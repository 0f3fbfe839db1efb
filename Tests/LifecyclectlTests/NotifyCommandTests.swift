import AppLifecycle
import ArgumentParser
import Foundation
import Testing

@testable import lifecyclectl

@Suite("lifecyclectl notify")
struct NotifyCommandTests {
    private func parse(_ arguments: [String]) throws -> NotifyCommand {
        try #require(try LifecycleCtl.parseAsRoot(["notify", "org.example.Notes"] + arguments) as? NotifyCommand)
    }

    @Test func aLocalTimeInAZoneFloatsAndAnInstantDoesNot() throws {
        let (floating, buttons) = try parse([
            "--at", "2030-07-01T08:00", "--time-zone", "America/New_York", "--repeat", "day", "--body", "Wake up",
            "--action", "snooze:Snooze", "--action", "+open:Open",
        ]).notification()
        #expect(floating.fireDate == ISO8601DateFormatter().date(from: "2030-07-01T12:00:00Z"))
        #expect(floating.wallClockFireDate?.description == "2030-07-01T08:00:00")
        #expect(floating.repeatInterval == .day && floating.alertBody == "Wake up")
        #expect(buttons.map(\.identifier) == ["snooze", "open"])
        #expect(buttons.map(\.activationMode) == [.background, .foreground])

        let (absolute, _) = try parse(["--at", "2030-07-01T08:00:00+02:00", "--body", "x"]).notification()
        #expect(absolute.fireDate == ISO8601DateFormatter().date(from: "2030-07-01T06:00:00Z"))
        #expect(absolute.timeZone == nil && absolute.wallClockFireDate == nil)

        let now = Date(timeIntervalSince1970: 2_000_000_000)
        let (soon, _) = try parse(["--in", "90", "--body", "x", "--id", "tea"]).notification(now: now)
        #expect(soon.fireDate == now.addingTimeInterval(90) && soon.identifier == "tea")
    }

    @Test func badOptionsAreUsageErrorsThatSayWhatIsWrong() throws {
        let cases: [([String], String)] = [
            (["--body", "x"], "exactly one of --in and --at"),
            (["--in", "5", "--at", "2030-01-01T00:00", "--body", "x"], "exactly one of --in and --at"),
            (["--in", "nan", "--body", "x"], "--in must be"),
            (["--at", "2030-02-30T08:00", "--body", "x"], "neither an ISO 8601 instant nor a local time"),
            (["--at", "2030-01-01T08:00", "--time-zone", "Mars/Olympus", "--body", "x"], "not a time zone name"),
            (["--in", "1", "--repeat", "fortnight", "--body", "x"], "--repeat must be one of"),
            (["--in", "1", "--action", "nolabel", "--body", "x"], "--action must be ID:LABEL"),
            (["--in", "1", "--body", String(repeating: "x", count: 9_000)], "alertBody is 9000 bytes"),
            (["--in", "1", "--body", "x", "--user-info", "[1]"], "--user-info"),
        ]
        for (arguments, message) in cases {
            #expect {
                _ = try parse(arguments).notification()
            } throws: { error in
                "\(error)".contains(message)
            }
        }
    }
}

@Suite("lifecyclectl install-desktop-files")
struct InstallDesktopFilesTests {
    @Test func filesQuoteAndEscapeAndRefuseWhatCouldInjectKeys() throws {
        let manifest: UserInfo = [
            "id": .string("org.example.Notes"), "name": .string("Notes\nX=1"), "urlSchemes": .array([.string("notes")]),
            "shortcutItems": .array([.dictionary(["type": .string("compose"), "localizedTitle": .string("New")])]),
        ]
        let files = try InstallDesktopFilesCommand.files(
            for: manifest, lifecyclectl: "/opt/my apps/lifecyclectl", address: "unix:path=/tmp/a%20b")
        #expect(files.desktop.contains("Name=Notes\\nX=1\n"), "\(files.desktop)")
        #expect(
            files.desktop.contains(
                #"Exec="/opt/my apps/lifecyclectl" activate --address unix:path=/tmp/a%%20b org.example.Notes %U"#),
            "\(files.desktop)")
        #expect(
            files.service.contains(
                "Exec='/opt/my apps/lifecyclectl' activate --address unix:path=/tmp/a%20b --background"),
            "\(files.service)")
        var bad = manifest
        bad["shortcutItems"] = .array([.dictionary(["type": .string("x]\nExec=evil"), "localizedTitle": .string("t")])])
        #expect(throws: ValidationError.self) {
            try InstallDesktopFilesCommand.files(for: bad, lifecyclectl: "/usr/bin/lifecyclectl", address: nil)
        }
        bad = manifest
        bad["urlSchemes"] = .array([.string("no\nway")])
        #expect(throws: ValidationError.self) {
            try InstallDesktopFilesCommand.files(for: bad, lifecyclectl: "/usr/bin/lifecyclectl", address: nil)
        }
    }
}
