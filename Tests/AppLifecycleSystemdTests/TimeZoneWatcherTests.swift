import AppLifecycle
import Foundation
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

    /// Handles readiness until the watcher reports something; nil (with an issue) if the hang guard expires.
    private func nextEvents(_ watcher: TimeZoneWatcher) throws -> [HostEvent]? {
        for _ in 0..<20 {
            guard let revents = waitForReadiness(watcher.fileDescriptor, events: watcher.pollEvents) else { return nil }
            let events = try watcher.handleReadiness(revents)
            if !events.isEmpty { return events }
        }
        Issue.record("no event after 20 readiness reports")
        return nil
    }

    private func timeZoneEvent(_ identifier: String) -> [HostEvent] {
        [.significantTimeChange(.init(reason: .timeZone, timeZoneIdentifier: identifier))]
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

    @Test func renamedSymlinkReportsTheNewZone() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try relink(directory, to: "/usr/share/zoneinfo/Europe/Berlin")
        let watcher = try TimeZoneWatcher(path: directory.appending("localtime"), environment: [:])
        defer { watcher.close() }
        #expect(watcher.currentIdentifier == "Europe/Berlin")

        try relink(directory, to: "/usr/share/zoneinfo/America/New_York")
        #expect(try nextEvents(watcher) == timeZoneEvent("America/New_York"))
        #expect(watcher.currentIdentifier == "America/New_York")

        // The watch follows the new link: a second replacement is seen too.
        try relink(directory, to: "../usr/share/zoneinfo/Asia/Tokyo")
        #expect(try nextEvents(watcher) == timeZoneEvent("Asia/Tokyo"))
    }

    @Test func relinkingTheSameZoneIsNotAChange() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try relink(directory, to: "/usr/share/zoneinfo/Europe/Berlin")
        let watcher = try TimeZoneWatcher(path: directory.appending("localtime"), environment: [:])
        defer { watcher.close() }

        try relink(directory, to: "/usr/share/zoneinfo/Europe/Berlin")
        guard let revents = waitForReadiness(watcher.fileDescriptor, events: watcher.pollEvents) else { return }
        #expect(try watcher.handleReadiness(revents) == [])
        // Whatever else the same-zone rename queued, the first event reported is the next real change.
        try relink(directory, to: "/usr/share/zoneinfo/Europe/Paris")
        #expect(try nextEvents(watcher) == timeZoneEvent("Europe/Paris"))
    }

    @Test func missingFileIsWatchedUntilCreated() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let watcher = try TimeZoneWatcher(path: directory.appending("localtime"), environment: [:])
        defer { watcher.close() }
        #expect(watcher.currentIdentifier == "UTC")

        try relink(directory, to: "/usr/share/zoneinfo/Australia/Sydney")
        #expect(try nextEvents(watcher) == timeZoneEvent("Australia/Sydney"))
    }

    @Test func rewrittenCopyWithOtherContentsIsAChange() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("localtime")
        let berlin = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/zoneinfo/Europe/Berlin"))
        let tokyo = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/zoneinfo/Asia/Tokyo"))
        try berlin.write(to: URL(fileURLWithPath: path))
        let watcher = try TimeZoneWatcher(path: path, environment: ["TZ": ":Asia/Tokyo"])
        defer { watcher.close() }

        // Rewriting identical bytes in place (IN_CLOSE_WRITE) changes nothing.
        try berlin.write(to: URL(fileURLWithPath: path))
        guard let revents = waitForReadiness(watcher.fileDescriptor, events: watcher.pollEvents) else { return }
        #expect(try watcher.handleReadiness(revents) == [])

        // Other bytes are a change; a copy has no name, so the identifier comes from $TZ.
        let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        try #require(fd >= 0)
        _ = tokyo.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        #expect(try nextEvents(watcher) == timeZoneEvent("Asia/Tokyo"))
    }

    @Test func missingDirectoryThrowsNotFound() {
        #expect {
            _ = try TimeZoneWatcher(path: "/nonexistent-applifecycle-dir/localtime", environment: [:])
        } throws: { error in
            (error as? HostSourceError)?.code == .notFound
        }
    }
}
