import AppLifecycle
import Foundation
import LifecycledProtocol
import SystemdBus
import Testing

@Suite("userInfo ⇄ D-Bus")
struct UserInfoBusCodecTests {
    @Test("every userInfo value survives a{sv} and back, null and dates included")
    func roundTrip() throws {
        let info: UserInfo = [
            "s": "text", "i": -42, "d": 0.5, "b": false, "n": nil,
            "date": .date(Date(timeIntervalSince1970: 1_700_000_000.5)), "data": .data(Data([1, 2, 3])),
            "nested": ["list": [1, "two", ["three": true]]],
        ]
        let bus = UserInfoBusCodec.encode(info)
        #expect(bus.signature == "a{sv}")
        #expect(try UserInfoBusCodec.decodeUserInfo(bus) == info)
    }

    @Test("lenient decoding: every integer type, object paths, structs")
    func lenient() throws {
        #expect(try UserInfoBusCodec.decode(.uint32(7)) == .int(7))
        #expect(try UserInfoBusCodec.decode(.byte(255)) == .int(255))
        #expect(try UserInfoBusCodec.decode(.objectPath("/a/b")) == "/a/b")
        #expect(try UserInfoBusCodec.decode(.structure([.string("x"), .int32(1)])) == ["x", 1])
    }

    @Test("refused: fds, non-string keys, too-large unsigned, too deep, not a dictionary")
    func refused() throws {
        #expect(throws: ApplicationError.self) { try UserInfoBusCodec.decode(.uint64(.max)) }
        #expect(throws: ApplicationError.self) {
            try UserInfoBusCodec.decode(
                .dictionary(
                    keySignature: "i", valueSignature: "v",
                    [BusDictionaryEntry(key: .int32(1), value: .variant(.bool(true)))]))
        }
        var deep = BusValue.string("leaf")
        for _ in 0..<40 { deep = .array(elementSignature: "v", [.variant(deep)]) }
        #expect(throws: ApplicationError.self) { try UserInfoBusCodec.decode(deep) }
        #expect(throws: ApplicationError.self) { try UserInfoBusCodec.decodeUserInfo(.string("x")) }
        let (a, b) = try #require(pipeFDs())
        defer {
            close(a)
            close(b)
        }
        #expect(throws: ApplicationError.self) {
            try UserInfoBusCodec.decode(.unixFD(BusFileDescriptor(owning: dup(a))))
        }
    }

    private func pipeFDs() -> (Int32, Int32)? {
        var fds: [Int32] = [0, 0]
        return pipe(&fds) == 0 ? (fds[0], fds[1]) : nil
    }
}
