import AppLifecycle
import Foundation
import Glibc
import Testing

/// A fresh directory for one test.
private func makeDirectory() throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "atomic-copy-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

@Suite("AtomicFile: copies kept beside a file")
struct AtomicFileKeepCopyTests {
    /// `keepCopy` never fails for a name an earlier copy took: the second copy in the same second
    /// gets `-2` (the names of this second and the next few are taken first, so the test does not
    /// depend on where in a second it runs), and both copies are hard links to the file as it was.
    @Test func aSecondCopyInTheSameSecondGetsANameOfItsOwn() throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("schedule.json")
        try AtomicFile.write(Data("first\n".utf8), to: file)
        let now = Int(Date().timeIntervalSince1970)
        var taken: Set<String> = []
        for second in now..<(now + 5) {
            let name = file.path + ".refused-\(second)"
            #expect(FileManager.default.createFile(atPath: name, contents: Data("older\n".utf8)))
            taken.insert(name)
        }

        let first = try #require(AtomicFile.keepCopy(file, reason: "refused"), "\(String(cString: strerror(errno)))")
        let second = try #require(AtomicFile.keepCopy(file, reason: "refused"), "\(String(cString: strerror(errno)))")
        #expect(first != second)
        #expect(!taken.contains(first) && !taken.contains(second))
        #expect(first.hasSuffix("-2") && second.hasSuffix("-3"), "\(first), \(second)")
        for copy in [first, second] {
            #expect(try String(contentsOfFile: copy, encoding: .utf8) == "first\n")
        }
        // A hard link: the next write replaces the file's name only, the copies keep what it held.
        try AtomicFile.write(Data("second\n".utf8), to: file)
        #expect(try String(contentsOfFile: first, encoding: .utf8) == "first\n")
        for name in taken { #expect(try String(contentsOfFile: name, encoding: .utf8) == "older\n") }
    }
}
