import Logging
import NIOCore
import NIOEmbedded
import Testing

@testable import LifecyclePushGateway

/// ``ConnectionDeadlineHandler`` and the pipeline ``GatewayServer/configure(_:gateway:limits:logger:)``
/// builds, on an `EmbeddedChannel` whose clock the test moves (nothing here waits on the wall clock).
@Suite struct ConnectionDeadlineTests {
    static let limits = ConnectionLimits(
        idleTimeout: .seconds(30), headerTimeout: .seconds(5), bodyTimeout: .seconds(7), maximumConnections: 10)

    /// An active channel with the gateway's whole pipeline over a fake broker.
    func connection() throws -> (EmbeddedChannel, EmbeddedEventLoop) {
        let loop = EmbeddedEventLoop()
        let channel = EmbeddedChannel(loop: loop)
        let (gateway, _, _) = Fixture.gateway()
        try GatewayServer.configure(channel, gateway: gateway, limits: Self.limits, logger: Logger(label: "test"))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        return (channel, loop)
    }

    func send(_ text: String, to channel: EmbeddedChannel) throws {
        var buffer = channel.allocator.buffer(capacity: text.utf8.count)
        buffer.writeString(text)
        try channel.writeInbound(buffer)
    }

    /// Everything the gateway wrote, as text.
    func written(by channel: EmbeddedChannel) throws -> String {
        var text = ""
        while let part = try channel.readOutbound(as: IOData.self) {
            if case .byteBuffer(let buffer) = part { text += String(buffer: buffer) }
        }
        return text
    }

    @Test func anIdleConnectionClosesAtTheIdleTimeoutAndNotBefore() throws {
        let (channel, loop) = try connection()
        loop.advanceTime(by: .seconds(30) - .milliseconds(1))
        #expect(channel.isActive)
        loop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive)
        #expect(try written(by: channel).isEmpty)
    }

    @Test func aHeadMustArriveWithinTheHeaderTimeoutOfItsFirstByte() throws {
        let (channel, loop) = try connection()
        loop.advanceTime(by: .seconds(20))
        try send("GET /health HTTP/1.1\r\nHost: a\r\n", to: channel)
        loop.advanceTime(by: .seconds(4))
        try send("X-More: b\r\n", to: channel)
        #expect(channel.isActive)
        loop.advanceTime(by: .seconds(1))
        #expect(!channel.isActive)
        let answer = try written(by: channel)
        #expect(answer == ConnectionDeadlineHandler.timeoutResponse, "\(answer)")
    }

    @Test func aBodyMustArriveWithinTheBodyTimeoutOfTheHead() throws {
        let (channel, loop) = try connection()
        try send(
            "POST /push/\(Fixture.token) HTTP/1.1\r\nHost: a\r\nTTL: 60\r\nContent-Encoding: aes128gcm\r\n"
                + "Content-Length: 200\r\n\r\n0123456789", to: channel)
        loop.advanceTime(by: .seconds(6))
        try send("0123456789", to: channel)
        #expect(channel.isActive)
        loop.advanceTime(by: .seconds(1))
        #expect(!channel.isActive)
        let answer = try written(by: channel)
        #expect(answer == ConnectionDeadlineHandler.timeoutResponse, "\(answer)")
    }

    @Test func aRejectedRequestsSlowBodyIsClosedWithoutASecondAnswer() throws {
        let (channel, loop) = try connection()
        try send(
            "POST /push/unknown_token_0123456789 HTTP/1.1\r\nHost: a\r\nTTL: 60\r\n"
                + "Content-Encoding: aes128gcm\r\nContent-Length: 200\r\n\r\n", to: channel)
        let answer = try written(by: channel)
        #expect(answer.hasPrefix("HTTP/1.1 404 "), "\(answer)")
        loop.advanceTime(by: .seconds(7))
        #expect(!channel.isActive)
        let more = try written(by: channel)
        #expect(more.isEmpty, "\(more)")
    }

    @Test func afterAnAnswerTheIdleTimeoutRunsAgain() throws {
        let (channel, loop) = try connection()
        loop.advanceTime(by: .seconds(29))
        try send("GET /health HTTP/1.1\r\nHost: a\r\n\r\n", to: channel)
        #expect(try written(by: channel).hasPrefix("HTTP/1.1 200 OK\r\n"))
        // Neither the earlier idle time nor the header or body timeout applies now.
        loop.advanceTime(by: .seconds(30) - .milliseconds(1))
        #expect(channel.isActive)
        loop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive)
    }

    @Test func noReadDeadlineRunsWhileTheGatewayWorksOnARequest() throws {
        let loop = EmbeddedEventLoop()
        let handler = ConnectionDeadlineHandler(limits: Self.limits, logger: Logger(label: "test"))
        let channel = EmbeddedChannel(handler: handler, loop: loop)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        try send("POST /push/x HTTP/1.1\r\n", to: channel)
        _ = try channel.readInbound(as: ByteBuffer.self)
        channel.pipeline.triggerUserOutboundEvent(RequestProgress.readingBody, promise: nil)
        channel.pipeline.triggerUserOutboundEvent(RequestProgress.requestEnded, promise: nil)
        #expect(handler.phase == .working)
        loop.advanceTime(by: .hours(1))
        #expect(channel.isActive)
        channel.pipeline.triggerUserOutboundEvent(RequestProgress.answered, promise: nil)
        #expect(handler.phase == .idle)
        loop.advanceTime(by: .seconds(30))
        #expect(!channel.isActive)
    }
}
