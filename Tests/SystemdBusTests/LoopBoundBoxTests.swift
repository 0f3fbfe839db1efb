import SystemdBus
import SystemdBusTesting
import Testing

@Suite("LoopBoundBox: loop-confined state")
struct LoopBoundBoxTests {
    @Test func theLoopThreadReadsAndWritesTheValue() async throws {
        let loop = try EventLoop(name: "box-test")
        defer { loop.shutdown() }
        let box = LoopBoundBox([1], loop: loop)
        let seen = try await loop.run { () -> [Int] in
            box.value.append(2)
            box.value[0] = 0
            return box.value
        }
        #expect(seen == [0, 2])
        #expect(!loop.isOnLoopThread)
    }

    @Test func anAccessFromAnotherThreadStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            let loop = try EventLoop(name: "box-test")
            let box = LoopBoundBox(1, loop: loop)
            _ = box.value  // the test's thread, not the loop's
        }
    }
}
