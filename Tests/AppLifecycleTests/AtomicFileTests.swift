import AppLifecycle
import Foundation
import Glibc
import Testing

@Suite("AtomicFile: temporary files that interrupted writes left behind")
struct AtomicFileTests {
    /// A fresh directory with `count.txt`'s leftovers: an abandoned temporary file and one that a
    /// live writer (another open file description with the lock) still holds.
    @Test func theNextWriteRemovesAbandonedTemporaryFilesAndLeavesALiveWritersOne() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "atomic-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let target = directory.appendingPathComponent("count.txt")
        let abandoned = directory.appendingPathComponent("count.txt.tmp-dead01").path
        let live = directory.appendingPathComponent("count.txt.tmp-live01").path
        let unrelated = directory.appendingPathComponent("other.txt.tmp-dead02").path
        for path in [abandoned, live, unrelated] {
            let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            #expect(fd >= 0)
            close(fd)
        }
        let liveWriter = open(live, O_WRONLY | O_CLOEXEC)
        #expect(flock(liveWriter, LOCK_EX | LOCK_NB) == 0)
        defer { close(liveWriter) }

        try AtomicFile.write(Data("7\n".utf8), to: target)

        let names = Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
        #expect(names == ["count.txt", "count.txt.tmp-live01", "other.txt.tmp-dead02"])
        #expect(try String(contentsOf: target, encoding: .utf8) == "7\n")
    }
}
