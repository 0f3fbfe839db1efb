import AppLifecycle
import Foundation
import Logging
import SystemdBus
import SystemdBusTesting
import Testing

@testable import AppLifecycleSystemd

#if canImport(Glibc)
    import Glibc
#endif

@Suite("TimeZoneWatcher")
struct TimeZoneWatcherTests {
    /// Replaces `<dir>/localtime` by a symlink to `target`, the way timedated does: new link, then rename.
    private func relink(_ directory: TemporaryDirectory, to target: String) throws {
        let temporary = directory.appending(".#localtime\(UUID().uuidString.prefix(8))")
        try FileManager.default.createSymbolicLink(atPath: temporary, withDestinationPath: target)
        guard rename(temporary, directory.appending("localtime")) == 0 else {
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
    }

    /// Runs `body` with the watcher started on a loop of its own and a recorder of what it reports.
    private func watching(
        _ watcher: TimeZoneWatcher, _ body: (ValueRecorder<HostEvent>) async throws -> Void
    ) async throws {
        let loop = try EventLoop(name: "localtime")
        defer { loop.shutdown() }
        defer { watcher.close() }
        let reported = ValueRecorder<HostEvent>()
        try await watcher.start(on: loop, logger: Logger(label: "test")) { reported.add($0) }
        try await body(reported)
    }

    private func timeZoneEvent(_ identifier: String) -> HostEvent {
        .significantTimeChange(.init(reason: .timeZone, timeZoneIdentifier: identifier))
    }

    @Test func identifierFromLinkTarget() {
        #expect(TimeZoneWatcher.identifier(forLinkTarget: "/usr/share/zoneinfo/Europe/Berlin") == "Europe/Berlin")
        #expect(
            TimeZoneWatcher.identifier(forLinkTarget: "../usr/share/zoneinfo/America/Sao_Paulo") == "America/Sao_Paulo")
        #expect(TimeZoneWatcher.identifier(forLinkTarget: "/usr/share/zoneinfo/Etc/UTC") == "Etc/UTC")
        #expect(TimeZoneWatcher.identifier(forLinkTarget: "/etc/some-file") == nil)
        #expect(TimeZoneWatcher.identifier(forLinkTarget: "/usr/share/zoneinfo/") == nil)
        #expect(TimeZoneWatcher.identifier(forLinkTarget: "/usr/share/zoneinfo/../../etc/passwd") == nil)
    }

    @Test func renamedSymlinkReportsTheNewZone() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try relink(directory, to: "/usr/share/zoneinfo/Europe/Berlin")
        let watcher = try TimeZoneWatcher(path: directory.appending("localtime"), environment: [:])
        #expect(watcher.currentIdentifier == "Europe/Berlin")
        try await watching(watcher) { reported in
            try relink(directory, to: "/usr/share/zoneinfo/America/New_York")
            #expect(try await reported.next("the new zone") == timeZoneEvent("America/New_York"))
            #expect(watcher.currentIdentifier == "America/New_York")

            // The watch follows the new link: a second replacement is seen too.
            try relink(directory, to: "../usr/share/zoneinfo/Asia/Tokyo")
            #expect(try await reported.next("the second zone") == timeZoneEvent("Asia/Tokyo"))
        }
    }

    @Test func relinkingTheSameZoneIsNotAChange() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try relink(directory, to: "/usr/share/zoneinfo/Europe/Berlin")
        let watcher = try TimeZoneWatcher(path: directory.appending("localtime"), environment: [:])
        try await watching(watcher) { reported in
            try relink(directory, to: "/usr/share/zoneinfo/Europe/Berlin")
            // The same-zone rename reports nothing: the first event reported is the next real change.
            try relink(directory, to: "/usr/share/zoneinfo/Europe/Paris")
            #expect(try await reported.next("a change") == timeZoneEvent("Europe/Paris"))
        }
    }

    @Test func missingFileIsWatchedUntilCreated() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let watcher = try TimeZoneWatcher(path: directory.appending("localtime"), environment: [:])
        #expect(watcher.currentIdentifier == "UTC")
        try await watching(watcher) { reported in
            try relink(directory, to: "/usr/share/zoneinfo/Australia/Sydney")
            #expect(try await reported.next("the created zone") == timeZoneEvent("Australia/Sydney"))
        }
    }

    @Test func rewrittenCopyWithOtherContentsIsAChange() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("localtime")
        let berlin = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/zoneinfo/Europe/Berlin"))
        let tokyo = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/zoneinfo/Asia/Tokyo"))
        try berlin.write(to: URL(fileURLWithPath: path))
        let watcher = try TimeZoneWatcher(path: path, environment: ["TZ": ":Asia/Tokyo"])
        try await watching(watcher) { reported in
            // Rewriting identical bytes in place (IN_CLOSE_WRITE) changes nothing: the first event
            // reported is the one for other bytes. A copy has no name, so the identifier comes from $TZ.
            let same = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
            try #require(same >= 0)
            _ = berlin.withUnsafeBytes { write(same, $0.baseAddress, $0.count) }
            close(same)
            let other = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
            try #require(other >= 0)
            _ = tokyo.withUnsafeBytes { write(other, $0.baseAddress, $0.count) }
            close(other)
            #expect(try await reported.next("the rewritten zone") == timeZoneEvent("Asia/Tokyo"))
        }
    }

    @Test func missingDirectoryThrowsNotFound() {
        #expect {
            _ = try TimeZoneWatcher(path: "/nonexistent-applifecycle-dir/localtime", environment: [:])
        } throws: { error in
            (error as? HostSourceError)?.code == .notFound
        }
    }
}
