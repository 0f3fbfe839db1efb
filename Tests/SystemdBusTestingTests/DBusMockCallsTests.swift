import Foundation
import SystemdBusTesting
import Testing

@Suite("DBusMock: the calls a mock recorded, one entry per call", .timeLimit(.minutes(1)))
struct DBusMockCallsTests {
    /// gdbus names `uint64` only on the first element of `GetMethodCalls`' `a(tav)`, so counting
    /// `"(uint64 "` said 1 for any number of calls. Three calls are three, each with its own
    /// arguments, an argument that looks like the start of a call included.
    @Test func everyCallIsCountedAndParsedWhateverItsArgumentsHold() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let mock = try DBusMock(
            name: "org.example.Recorder", path: "/org/example/Recorder", interface: "org.example.Recorder",
            address: bus.address)
        defer { mock.stop() }
        try mock.addMethod(
            interface: "org.example.Recorder", name: "Take", inSignature: "su", outSignature: "", code: "")
        #expect(try mock.callCount("Take") == 0)
        #expect(try mock.calls("Take").isEmpty)
        let texts = ["plain", "(uint64 5, [<'x'>]), (6, [", "it's ]) here"]
        for (index, text) in texts.enumerated() {
            try mock.call(
                interface: "org.example.Recorder", method: "Take", arguments: [DBusMock.quote(text), "uint32 \(index)"])
        }
        #expect(try mock.callCount("Take") == 3)
        let calls = try mock.calls("Take")
        #expect(calls.count == 3, "\(calls)")
        #expect(calls.first?.contains("'plain'") == true, "\(calls)")
        #expect(calls.first?.contains("<uint32 0>") == true, "\(calls)")
        #expect(calls.dropFirst().first?.contains("(uint64 5, [<") == true, "\(calls)")
        #expect(calls.last?.contains("uint32 2") == true, "\(calls)")
    }
}
