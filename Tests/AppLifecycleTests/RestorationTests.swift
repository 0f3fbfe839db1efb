import AppLifecycle
import AppLifecycleTesting
import Foundation
import Testing

@MainActor
@Suite("State preservation and restoration")
struct RestorationTests {
    func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent(
            "restoration-\(UUID().uuidString)", isDirectory: true)
    }

    @Test("state saved on entering the background is restored at the next launch, in order")
    func saveAndRestore() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = Application.Configuration(
            applicationIdentifier: "org.example.Notes", stateRestorationDirectory: directory)

        let first = Harness(FullDelegate(), configuration: configuration)
        first.launch()
        first.host.send(.foreground(false))
        try first.recorder.verifyOrder([
            "applicationDidEnterBackground(_:)", "application(_:shouldSaveApplicationState:)",
            "ApplicationShouldSaveApplicationStateNotification", "application(_:willEncodeRestorableStateWith:)",
        ])
        let archive = try #require(try RestorationArchive.load(from: directory))
        #expect(archive.values["openDocument"] == "note-42")
        #expect(archive.objectPaths == [["root", "editor"]])

        let delegate = FullDelegate()
        let second = Harness(delegate, configuration: configuration)
        second.launch()
        try second.recorder.verifyOrder([
            "application(_:willFinishLaunchingWithOptions:)", "application(_:shouldRestoreApplicationState:)",
            "application(_:restorableObjectWithIdentifierPath:coder:)", "application(_:didDecodeRestorableStateWith:)",
            "application(_:didFinishLaunchingWithOptions:)",
        ])
        #expect(delegate.restoredPaths == [["root", "editor"]])
    }

    @Test("a corrupt archive is skipped and left untouched")
    func corruptArchive() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent(RestorationArchive.fileName)
        try Data("{not json".utf8).write(to: file)
        #expect(throws: ApplicationError.self) { try RestorationArchive.load(from: directory) }
        let harness = Harness(FullDelegate(), configuration: .init(stateRestorationDirectory: directory))
        harness.launch()
        try harness.recorder.verifyAbsent("application(_:shouldRestoreApplicationState:)")
        #expect(try Data(contentsOf: file) == Data("{not json".utf8))
    }

    @Test("the atomic write leaves no temporary file behind and replaces the old contents")
    func atomicWrite() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("state.json")
        try AtomicFile.write(Data("one".utf8), to: file)
        try AtomicFile.write(Data("two".utf8), to: file)
        #expect(try String(contentsOf: file, encoding: .utf8) == "two")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["state.json"])
    }
}
