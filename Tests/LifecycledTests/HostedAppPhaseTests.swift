import AppLifecycle
import Testing

@testable import LifecycleDaemon

@Suite("HostedApp: one phase of the process, changed only by its transitions", .timeLimit(.minutes(1)))
struct HostedAppPhaseTests {
    @MainActor @Test func aLaunchRunsStopsIsWithdrawnTerminatesAndExits() async throws {
        let manifest = try testManifest("/bin/sleep", ["600"], id: "org.example.Phase")
        try await withApp(manifest) { process, exits, _ in
            let app = HostedApp(id: manifest.id, manifest: manifest, order: 0)
            #expect(app.phase == .notLaunched)
            app.requestStop()
            #expect(app.phase == .notLaunched, "a process the daemon did not launch is never stopped")

            _ = app.enqueue("sleeping", ["value": .bool(true)], limit: 2)
            var options = LaunchOptions()
            options.launchedInBackground = true
            app.launched(process, launchID: 7, manifest: manifest, options: options)
            #expect(app.phase == .running && app.launchID == 7 && !app.foreground)
            #expect(app.pendingCommands.isEmpty, "a new launch starts with nothing queued from an earlier one")

            let first = app.enqueue("a", [:], limit: 2)
            let second = app.enqueue("b", [:], limit: 2)
            let third = app.enqueue("c", [:], limit: 2)
            #expect(!first && !second && third, "the oldest is dropped beyond the limit")
            #expect(app.pendingCommands.map(\.command) == ["b", "c"])
            let pending = app.registered(from: ":1.42", pid: 42)
            #expect(pending.map(\.command) == ["b", "c"] && app.pendingCommands.isEmpty && app.isRegistered)

            app.requestStop()
            #expect(app.phase == .stopRequested && app.stopRequested)
            app.stopWithdrawn()
            #expect(app.phase == .running)
            app.beginTerminating()
            #expect(app.phase == .terminating(stopPending: false) && app.terminating && !app.stopRequested)
            app.requestStop()
            #expect(app.phase == .terminating(stopPending: false), "a terminating process is never stopped again")

            // A terminate while a stop is on its way: the stop stays pending, so the daemon still
            // resumes the process to let it read its terminate.
            let stopping = HostedApp(id: manifest.id, manifest: manifest, order: 1)
            stopping.launched(process, launchID: 8, manifest: manifest, options: LaunchOptions())
            stopping.requestStop()
            stopping.beginTerminating()
            #expect(stopping.phase == .terminating(stopPending: true) && stopping.stopRequested && stopping.terminating)
            stopping.stopWithdrawn()
            #expect(stopping.phase == .terminating(stopPending: false) && !stopping.stopRequested)

            // The process itself: stopped once (confirmed by the kernel), not again while stopped,
            // resumed; a stop taken back resumes it at once.
            let running = HostedApp(id: manifest.id, manifest: manifest, order: 2)
            running.launched(process, launchID: 9, manifest: manifest, options: LaunchOptions(), cgroupDirectory: nil)
            #expect(running.canStopProcess)
            let stopped = AsyncStream.makeStream(of: Result<Void, AppProcessError>.self)
            #expect(running.stopProcess { stopped.continuation.yield($0) })
            #expect(!running.canStopProcess && !running.stopProcess { _ in }, "stopped only once")
            for await result in stopped.stream {
                #expect((try? result.get()) != nil)
                break
            }
            #expect(process.isSuspended && running.phase == .stopRequested)
            try await running.resumeProcess()
            #expect(!process.isSuspended && running.phase == .running)
            #expect(!running.withdrawStaleStop { _ in }, "nothing to take back")
            #expect(running.stopProcess { _ in })
            #expect(running.withdrawStaleStop { _ in } && running.phase == .running)

            app.setBackgroundTask(1, "upload")
            app.exited()
            #expect(app.phase == .notLaunched && app.process == nil && !app.isRegistered)
            #expect(app.backgroundTasks.isEmpty)
            process.terminate(policy: TerminationPolicy(deadline: .zero, grace: .seconds(30)))
            _ = await exits.wait()
        }
    }
}
