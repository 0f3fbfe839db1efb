import Glibc
import Synchronization
import SystemdBus
import SystemdBusTesting
import Testing

@Suite("EventLoop")
struct EventLoopTests {
    @Test("perform runs closures on the loop thread, in order")
    func performOrder() async throws {
        let loop = try EventLoop(name: "perform")
        defer { loop.shutdown() }
        #expect(!loop.isOnLoopThread)
        let seen = ValueRecorder<(Int, Bool)>()
        for i in 0..<5 {
            loop.perform { seen.add((i, loop.isOnLoopThread)) }
        }
        for i in 0..<5 {
            let (value, onLoop) = try await seen.next("perform \(i)")
            #expect(value == i)
            #expect(onLoop)
        }
        let asyncAnswer = try await loop.run { 7 }
        #expect(asyncAnswer == 7)
    }

    @Test("addIO reports readability of a pipe with EPOLLIN and stops after cancel")
    func ioWatch() async throws {
        let loop = try EventLoop(name: "io")
        defer { loop.shutdown() }
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        let readFD = fds[0]
        let events = ValueRecorder<(UInt32, String)>()
        let token = try await loop.addIO(fd: readFD, events: EventLoop.IOEvents.readable) { revents in
            var buffer = [UInt8](repeating: 0, count: 16)
            let n = read(readFD, &buffer, 16)
            events.add((revents, n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : ""))
        }
        _ = "ping".withCString { write(fds[1], $0, 4) }
        let (revents, text) = try await events.next("EPOLLIN")
        #expect(revents & EventLoop.IOEvents.readable != 0)
        #expect(text == "ping")

        // A second watch on the same fd is refused with EEXIST.
        await #expect(throws: BusError.self) {
            _ = try await loop.addIO(fd: readFD, events: EventLoop.IOEvents.readable) { _ in }
        }

        token.cancel()
        #expect(try await loop.run { token.isCancelled })
        // After cancel the fd can be watched again, and the old handler no longer fires.
        let second = ValueRecorder<String>()
        let token2 = try await loop.addIO(fd: readFD, events: EventLoop.IOEvents.readable) { _ in
            var buffer = [UInt8](repeating: 0, count: 16)
            let n = read(readFD, &buffer, 16)
            second.add(n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : "")
        }
        _ = "pong".withCString { write(fds[1], $0, 4) }
        #expect(try await second.next("second watch") == "pong")
        token2.cancel()
    }

    @Test("addTimer fires once at its deadline and can be rearmed from its handler")
    func timer() async throws {
        let loop = try EventLoop(name: "timer")
        defer { loop.shutdown() }
        let fired = ValueRecorder<Duration>()
        let count = Mutex(0)
        let start = EventLoop.now(.monotonic)
        let token = try await loop.addTimer(
            on: .monotonic, deadline: start + .milliseconds(20), leeway: .microseconds(1)
        ) { token in
            let now = EventLoop.now(.monotonic)
            fired.add(now)
            let n = count.withLock {
                $0 += 1
                return $0
            }
            if n == 1 { try? token.rearm(deadline: now + .milliseconds(20)) }
        }
        let first = try await fired.next("first firing")
        #expect(first >= start + .milliseconds(20))
        let second = try await fired.next("rearmed firing")
        #expect(second >= first + .milliseconds(20))
        token.cancel()
        let rearmAfterCancel = try await loop.run { () -> Bool in
            (try? token.rearm(deadline: .zero)) == nil
        }
        #expect(rearmAfterCancel)
    }

    @Test("shutdown joins the thread and later work is refused")
    func shutdown() throws {
        let loop = try EventLoop(name: "shutdown")
        let ran = Mutex(false)
        loop.perform { ran.withLock { $0 = true } }
        loop.shutdown()
        #expect(ran.withLock { $0 })
        #expect(loop.perform {} == false)
        #expect(throws: BusError.self) { try loop.performAndWait { 1 } }
        loop.shutdown()
    }
}

@Suite("EventLoop: a failed iteration stops the loop; nothing waits for good", .timeLimit(.minutes(1)))
struct EventLoopFailureTests {
    @Test func afterSdEventRunFailsPendingAndLaterWorkFailsWithAClearError() async throws {
        try await BusTestEnvironment.with { env in
            // A call that the peer never answers is pending when the loop breaks.
            let peer = try await env.secondConnection("silent-peer")
            defer { peer.close() }
            var silent = ExportedInterface(name: "org.example.Silent", methods: [.init("Wait")])
            silent.callDelivery = .inOrder
            let object = try await peer.export(silent, at: "/org/example/Silent")
            defer { object.unexport() }
            let pending = Task {
                try await env.connection.call(
                    destination: peer.uniqueName, path: "/org/example/Silent",
                    interface: "org.example.Silent", member: "Wait")
            }
            // Takes the call and never answers it.
            let taken = ValueRecorder<IncomingMethodCall>()
            let consumer = Task { for await call in object.incomingCalls { taken.add(call) } }
            defer { consumer.cancel() }
            _ = try await taken.next("the call to reach the peer")

            env.loop.breakForTesting()
            let pendingError = await #expect(throws: BusError.self) { try await pending.value }
            #expect(pendingError?.name == BusError.Name.disconnected)
            // Later work is refused at once instead of queued for a loop that will never run it.
            #expect(try await eventually { !env.loop.perform {} })
            await #expect(throws: BusError.self) { try await env.loop.run { 1 } }
            await #expect(throws: BusError.self) {
                try await env.connection.call(
                    destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus", member: "GetId")
            }
        }
    }
}

@Suite("EventLoop.performAndWait: a blocking hand-off for plain threads only")
struct PerformAndWaitTests {
    @Test func aPlainThreadGetsTheResultFromTheLoopThread() throws {
        let loop = try EventLoop(name: "blocking")
        defer { loop.shutdown() }
        #expect(try blockingHandOff(to: loop) == 42)
    }

    /// From synchronous code the main actor runs (an async `main` has given the main thread to
    /// Dispatch, so the main actor runs on a worker thread: the check is the main queue's, not the thread's).
    @Test func theMainActorIsRefused() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = try EventLoop(name: "refusing")
            _ = await MainActor.run { try? blockingHandOff(to: loop) }
        }
        #expect(result.map(\.standardErrorText)?.contains("performAndWait on the main actor") == true)
    }

    @Test func itsOwnLoopThreadIsRefused() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = try EventLoop(name: "refusing")
            _ = try await loop.run { try blockingHandOff(to: loop) }
        }
        #expect(result.map(\.standardErrorText)?.contains("performAndWait on an event loop's thread") == true)
    }

    @Test func anotherLoopsThreadIsRefused() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = try EventLoop(name: "refusing")
            let other = try EventLoop(name: "other")
            _ = try await other.run { try blockingHandOff(to: loop) }
        }
        #expect(result.map(\.standardErrorText)?.contains("performAndWait on an event loop's thread") == true)
    }
}

/// Hands work to `loop` and waits, from synchronous code (the compiler refuses it in async code):
/// 42 when it ran on the loop's thread.
private func blockingHandOff(to loop: EventLoop) throws -> Int {
    try loop.performAndWait { loop.isOnLoopThread ? 42 : 0 }
}

extension ExitTest.Result {
    /// What the child process wrote to standard error, as text.
    var standardErrorText: String { String(decoding: standardErrorContent, as: UTF8.self) }
}
