import Dispatch
import FleetProtocol
import FoundationEssentials
import Glibc
import Logging
import NIOCore
import NIOEmbedded
import WebPush

@testable import LifecyclePushGateway

/// The gateway's HTTP request heads and bodies: the bytes a client sends, through the connection's
/// real pipeline (`GatewayServer.configure`: the deadline handler, NIO's HTTP/1.1 server with
/// pipelining assistance and error handling, `PushHTTPHandler`, `PushGateway`'s checks) on an
/// `NIOAsyncTestingChannel`, with two registered tokens (one with a VAPID key, one without), a
/// broker that takes every push, and a fixed clock.
///
/// The first byte cuts the rest into up to four reads and says whether time passes between them
/// (so the header, body and idle timeouts fire mid-request). Checked: every byte the gateway
/// writes back is an HTTP/1.x response.
enum GatewayHTTPFuzzing {
    /// A token with no VAPID key, and one whose registration requires ``VAPIDFuzzing/key``.
    static let openToken = "tok_0123456789abcdef-AB"
    static let vapidToken = "tok_fedcba9876543210-XY"

    static let gateway: PushGateway = {
        let registrations = RegistrationTable()
        let key = Base64URL.encode(VAPIDFuzzing.key.publicKey.x963Representation)
        for (token, vapid) in [(openToken, String?.none), (vapidToken, key)] {
            let record = PushRegistrationRecord(token: token, app: "org.example.App", vapid: vapid, created: 0)
            registrations.apply(device: "fuzz-device", token: token, payload: Array(record.encoded()))
        }
        registrations.finishResync()
        return PushGateway(
            registrations: registrations, publisher: AcceptingPublisher(), publicURL: VAPIDFuzzing.audience,
            now: { VAPIDFuzzing.now }, logger: quiet)
    }()

    /// `FUZZ_TRACE=1`: print the status lines of the answers (to see what a seed reaches).
    static let trace = getenv("FUZZ_TRACE") != nil

    static let quiet = Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() })
    static let limits = ConnectionLimits(
        idleTimeout: .seconds(75), headerTimeout: .seconds(10), bodyTimeout: .seconds(10), maximumConnections: 8)

    static let target = FuzzTarget(name: "gateway-http", summary: "gateway HTTP requests (NIO pipeline)") { bytes in
        var input = FuzzInput(bytes)
        let control = input.byte()
        let data = input.rest()
        let reads = 1 + Int(control & 3)
        let timePasses = control & 4 != 0
        var chunks: [[UInt8]] = []
        var start = 0
        for index in 0..<reads {
            let end = index == reads - 1 ? data.count : min(data.count, start + data.count / reads)
            chunks.append(Array(data[start..<end]))
            start = end
        }
        let done = DispatchSemaphore(value: 0)
        Task {
            await run(chunks, timePasses: timePasses)
            done.signal()
        }
        done.wait()
    }

    private static func run(_ chunks: [[UInt8]], timePasses: Bool) async {
        let channel = NIOAsyncTestingChannel()
        do {
            try await channel.testingEventLoop.executeInContext {
                try GatewayServer.configure(channel, gateway: gateway, limits: limits, logger: quiet)
            }
            try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 40000))
        } catch {
            FuzzTarget.fail("the gateway pipeline cannot be set up: \(error)")
        }
        var written: [UInt8] = []
        for chunk in chunks {
            // A closed channel refuses writes; what was sent before is still checked.
            _ = try? await channel.writeInbound(ByteBuffer(bytes: chunk))
            if timePasses { await channel.testingEventLoop.advanceTime(by: .seconds(6)) }
            await settle(channel)
            await drain(channel, into: &written)
        }
        await settle(channel)
        await drain(channel, into: &written)
        check(written)
        _ = try? await channel.close()
        await channel.testingEventLoop.run()
    }

    /// Lets a publish started on a task answer (the stand-in broker takes it at once).
    private static func settle(_ channel: NIOAsyncTestingChannel) async {
        for _ in 0..<4 {
            await Task.yield()
            await channel.testingEventLoop.run()
        }
    }

    private static func drain(_ channel: NIOAsyncTestingChannel, into written: inout [UInt8]) async {
        while let data = try? await channel.readOutbound(as: IOData.self) {
            if case .byteBuffer(let buffer) = data { written += Array(buffer.readableBytesView) }
        }
    }

    /// Everything written back is a sequence of responses: it starts with a status line.
    private static func check(_ written: [UInt8]) {
        if trace {
            // Status lines (a body may run into the next response, so split at "HTTP/1." too).
            let text = String(decoding: written, as: UTF8.self)
            let lines = text.components(separatedBy: "HTTP/1.").dropFirst().map {
                "HTTP/1." + ($0.split(separator: "\r\n").first ?? "")
            }
            print("gateway-http answered: \(lines.joined(separator: " | "))")
        }
        guard !written.isEmpty else { return }
        guard written.starts(with: Array("HTTP/1.".utf8)) else {
            FuzzTarget.fail(
                "the gateway wrote something other than a response: \(String(decoding: written.prefix(80), as: UTF8.self))"
            )
        }
    }
}

/// A broker that takes every push at once.
private struct AcceptingPublisher: PushPublisher {
    var brokerStatus: BrokerStatus { .connected }
    func publish(_ message: OutgoingPush) async throws {}
}
