import AppLifecycle
import ArgumentParser
import Foundation
import SystemdBusTesting
import Testing

@testable import lifecyclectl

@Suite("lifecyclectl: the command line and the built binary")
struct LifecycleCtlTests {
    @Test func unknownOptionIsAUsageErrorWithExitStatus2() {
        #expect(throws: (any Error).self) { try LifecycleCtl.parseAsRoot(["graph", "--bogus"]) }
        do {
            _ = try LifecycleCtl.parseAsRoot(["graph", "--bogus"])
        } catch {
            #expect(LifecycleCtl.exitStatus(for: error) == 2)
            #expect(LifecycleCtl.fullMessage(for: error).contains("Unknown option '--bogus'"))
        }
        #expect(throws: Never.self) { try LifecycleCtl.parseAsRoot(["graph"]) }
    }

    /// `--address` before the verb is the verb's (`busctl --address=A list` habits); other
    /// arguments are left as they are.
    @Test func aLeadingAddressIsMovedAfterTheVerb() {
        #expect(
            LifecycleCtl.movingLeadingAddress(["--address", "unix:path=/b", "status"]) == [
                "status", "--address", "unix:path=/b",
            ])
        #expect(
            LifecycleCtl.movingLeadingAddress(["--address=unix:path=/b", "apps", "--json"]) == [
                "apps", "--address=unix:path=/b", "--json",
            ])
        #expect(LifecycleCtl.movingLeadingAddress(["status", "--address", "x"]) == ["status", "--address", "x"])
        #expect(LifecycleCtl.movingLeadingAddress(["--address"]) == ["--address"])
        #expect(LifecycleCtl.movingLeadingAddress(["--address", "x", "--bogus"]) == ["--address", "x", "--bogus"])
    }

    @Test func builtBinaryPrintsTheGraphAndRejectsUnknownOptions() throws {
        let binary = try #require(BuiltProducts.path(of: "lifecyclectl"), "lifecyclectl binary not found")
        let ok = try run(binary, ["graph"])
        #expect(ok.status == 0)
        #expect(ok.stdout == StateGraph.dot())
        let bad = try run(binary, ["graph", "--bogus"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("Unknown option '--bogus'"))
    }

    private func run(_ executable: String, _ arguments: [String]) throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self)
        )
    }
}
