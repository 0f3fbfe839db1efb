import SystemdBus
import SystemdBusTesting
import Testing

@Suite("LoopBoundBox: loop-confined state")
struct LoopBoundBoxTests {
    @Test func theLoopThreadReadsAndWritesTheValue() async throws {
        let loop = try EventLoop(name: "box-test")
        defer { loop.shutdown() }
        let box = LoopBoundBox.makeBoxSendingValue([1], eventLoop: loop)
        let seen = try await loop.run { () -> [Int] in
            box.value.append(2)
            box.value[0] = 0
            return box.value
        }
        #expect(seen == [0, 2])
        #expect(!loop.isOnLoopThread)
    }

    @Test func anEmptyBoxMadeOffTheLoopIsFilledOnIt() async throws {
        let loop = try EventLoop(name: "box-test")
        defer { loop.shutdown() }
        let box = LoopBoundBox.makeEmptyBox(valueType: Counter.self, eventLoop: loop)
        let seen = try await loop.run { () -> Int? in
            #expect(box.value == nil)
            box.value = Counter()
            box.value?.count += 1
            return box.value?.count
        }
        #expect(seen == 1)
        // A value made on the loop thread goes in with the on-loop initializer.
        let made = try await loop.run { () -> Int in
            let onLoop = LoopBoundBox(Counter(), eventLoop: loop)
            onLoop.value.count += 2
            return onLoop.value.count
        }
        #expect(made == 2)
    }

    @Test func anAccessFromAnotherThreadStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = try EventLoop(name: "box-test")
            let box = LoopBoundBox.makeBoxSendingValue(1, eventLoop: loop)
            _ = box.value  // the test's thread, not the loop's
        }
        #expect(result.map(\.standardErrorText)?.contains("off the box-test loop thread") == true)
    }

    @Test func theOnLoopInitializerOffTheLoopStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = try EventLoop(name: "box-test")
            _ = LoopBoundBox(Counter(), eventLoop: loop)  // not on the loop's thread
        }
        #expect(result.map(\.standardErrorText)?.contains("off the box-test loop thread") == true)
    }
}

/// A value that is not `Sendable`, as loop-confined state usually is.
private final class Counter {
    var count = 0
}
