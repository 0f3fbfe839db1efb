import AppLifecycle
import ArgumentParser
import Foundation
import Testing

@testable import lifecyclectl

@Suite("lifecyclectl graph")
struct LifecycleCtlTests {
    @Test func graphHasEveryLegalEdgeLabelled() {
        let dot = StateGraph.dot()
        #expect(dot.hasPrefix("digraph "))
        #expect(dot.hasSuffix("}\n"))
        let edges = dot.split(separator: "\n").filter { $0.contains(" -> ") }
        #expect(edges.count == ApplicationState.legalTransitions.count)
        for (from, to) in ApplicationState.legalTransitions {
            let edge = edges.first { $0.contains("\"\(from.rawValue)\" -> \"\(to.rawValue)\"") }
            #expect(edge != nil, "missing edge \(from) -> \(to)")
            for callback in StateGraph.callbacks(from: from, to: to) {
                #expect(edge?.contains(callback) == true, "\(from) -> \(to) lacks \(callback)")
            }
        }
        #expect(dot.contains("\"active\" -> \"inactive\" [label=\"applicationWillResignActive(_:)\"]"))
        #expect(dot.contains("\"background\" -> \"suspended\" [label=\"(no callback)\", style=dashed]"))
    }

    @Test func everyCallbackingTransitionIsKnown() {
        // Only the three silent system transitions have no callback.
        let silent = ApplicationState.legalTransitions.filter { StateGraph.isSilent(from: $0.from, to: $0.to) }
        #expect(silent.map { "\($0.from)->\($0.to)" }.sorted() == ["background->suspended", "suspended->background", "suspended->not-running"])
    }

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

    @Test func builtBinaryPrintsTheGraphAndRejectsUnknownOptions() throws {
        let binary = try #require(productsDirectory().map { $0 + "/lifecyclectl" }, "lifecyclectl binary not found")
        let ok = try run(binary, ["graph"])
        #expect(ok.status == 0)
        #expect(ok.stdout == StateGraph.dot())
        let bad = try run(binary, ["graph", "--bogus"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("Unknown option '--bogus'"))
    }

    private func productsDirectory() -> String? {
        var candidates = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path]
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug").path)
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0 + "/lifecyclectl") }
    }

    private func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
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
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }
}
