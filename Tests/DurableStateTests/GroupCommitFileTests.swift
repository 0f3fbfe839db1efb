import AppLifecycle
import Dispatch
import DurableState
import Foundation
import Glibc
import Logging
import SystemdBusTesting
import Testing

@Suite("GroupCommitFile: out of space is decided on errno", .serialized)
struct GroupCommitFileTests {
    /// `ENOSPC` and `EDQUOT` are out of space whatever the message says; another errno is not,
    /// even when the message has the words of `ENOSPC` in it (a path, or another locale's wording).
    @Test func outOfSpaceIsTheErrnoENOSPCOrEDQUOTNotTheMessagesWording() {
        let url = URL(fileURLWithPath: "/state/local-notifications.json")
        typealias Failure = GroupCommitFile.Failure
        #expect(Failure(saving: url, ApplicationError(.io, "write x: Plus de place", errno: ENOSPC)).isOutOfSpace)
        #expect(Failure(saving: url, ApplicationError(.io, "write x: quota", errno: EDQUOT)).isOutOfSpace)
        let enospcWords = String(cString: strerror(ENOSPC))
        #expect(!Failure(saving: url, ApplicationError(.io, "rename /\(enospcWords)/x: I/O", errno: EIO)).isOutOfSpace)
        #expect(!Failure(saving: url, ApplicationError(.io, "write x: \(enospcWords)")).isOutOfSpace)
        #expect(Failure(saving: url, ApplicationError(.io, "x", errno: ENOSPC)).description.hasPrefix("cannot save "))
    }

    /// A real full disk (a 64 KiB tmpfs; root mounts it, as the lifecycled durability tests do):
    /// `AtomicFile.write` throws with `ENOSPC`, and the writer says the disk is full.
    @Test func aFullFileSystemIsENOSPCFromTheWriteAndOutOfSpaceFromTheWriter() async throws {
        let directory = try TemporaryDirectory(prefix: "schedule-writer-full")
        defer { directory.remove() }
        let mount = try ChildProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", directory.path])
        try #require(mount.status == 0, "mount: \(mount.output)")
        defer {
            let unmount = try? ChildProcess.run("/bin/umount", [directory.path])
            if unmount?.status != 0 { Issue.record("umount \(directory.path): \(unmount?.output ?? "")") }
        }
        let big = URL(fileURLWithPath: directory.path + "/big")
        do {
            try AtomicFile.write(Data(repeating: 0x78, count: 256 * 1024), to: big)
            Issue.record("256 KiB were written to a 64 KiB file system")
        } catch let error as ApplicationError {
            #expect(error.code == .io)
            #expect(error.errno == ENOSPC, "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: big.path))

        // The writer on the same file system, once it is full.
        let fd = open(directory.path + "/filler", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        let chunk = [UInt8](repeating: 0, count: 4096)
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        close(fd)
        let failure = await GroupCommitFile.persistOnce(
            Data(repeating: 0x79, count: 16 * 1024), to: URL(fileURLWithPath: directory.path + "/schedule.json"))
        #expect(failure?.isOutOfSpace == true, "\(String(describing: failure))")
    }
}

extension GroupCommitFile {
    /// One write of `data` to `url` with a writer of its own.
    @MainActor
    static func persistOnce(_ data: Data, to url: URL) async -> GroupCommitFile.Failure? {
        let writer = GroupCommitFile(url: url, logger: Logger(label: "test"))
        return await writer.persist { .success(data) }
    }
}

@Suite("GroupCommitFile: a removal is ordered with the writes", .serialized)
struct GroupCommitFileRemovalTests {
    /// A write held on its way, then a removal: the removal runs after it, so the file is gone at
    /// the end (a removal beside the writer would be undone by the write's rename).
    @MainActor
    @Test func aRemovalAfterAWriteOnItsWayLeavesNoFile() async throws {
        let directory = try TemporaryDirectory(prefix: "group-commit-remove")
        defer { directory.remove() }
        let url = URL(fileURLWithPath: directory.path + "/state.json")
        let gate = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        let file = GroupCommitFile(url: url, logger: Logger(label: "test")) { data, url in
            entered.signal()
            gate.wait()
            try AtomicFile.write(data, to: url)
        }
        var contents: Data? = Data("{}".utf8)
        let write = Task { @MainActor in await file.persistOrRemove { .success(contents) } }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                entered.wait()
                continuation.resume()
            }
        }
        contents = nil
        let removal = Task { @MainActor in await file.persistOrRemove { .success(contents) } }
        gate.signal()
        #expect(await write.value == nil)
        #expect(await removal.value == nil)
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }
}
