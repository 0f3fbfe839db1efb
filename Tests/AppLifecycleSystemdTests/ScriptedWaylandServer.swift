import Foundation
import Glibc
import SystemdBusTesting

/// A Wayland "compositor" that speaks the wire protocol from a script: for what a real compositor
/// never does on demand (offer no foreign-toplevel manager, close a window before its first `done`,
/// send a malformed event), so the window source's handling of it can be asserted exactly.
///
/// It listens on a Unix socket in a directory of its own; ``serve(_:)`` accepts one client on a
/// thread of its own and runs the script with it, then reads until the client hangs up.
final class ScriptedWaylandServer: Sendable {
    /// One message of the wire protocol: the object it is sent to or from, the opcode, the arguments.
    struct Message {
        var object: UInt32
        var opcode: UInt16
        var arguments: [UInt8]

        /// The 32-bit argument at byte `offset`.
        func word(at offset: Int) -> UInt32 {
            arguments[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | UInt32($1) }
        }

        /// The last 32-bit argument (a `new_id` that ends a request).
        var lastWord: UInt32 { word(at: arguments.count - 4) }
    }

    /// An argument the server sends.
    enum Argument {
        case uint(UInt32)
        case string(String)
        case array([UInt32])
    }

    /// One accepted client.
    ///
    /// Events are queued and written together, as a compositor flushes a client's buffer: when the
    /// server next waits for the client (``read()``) or calls ``flush()``. So what the script sends
    /// between two reads reaches the client as one batch.
    final class Connection {
        let fd: Int32
        private var queued: [UInt8] = []

        init(fd: Int32) { self.fd = fd }

        /// Writes the queued events in one `send`.
        func flush() {
            guard !queued.isEmpty else { return }
            _ = queued.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            queued = []
        }

        /// Flushes, then reads one message, blocking; `nil` once the client hung up.
        func read() -> Message? {
            flush()
            guard let header = readExactly(8) else { return nil }
            let object = Message(object: 0, opcode: 0, arguments: header).word(at: 0)
            let sizeAndOpcode = Message(object: 0, opcode: 0, arguments: header).word(at: 4)
            let size = Int(sizeAndOpcode >> 16)
            guard size >= 8, let arguments = readExactly(size - 8) else { return nil }
            return Message(object: object, opcode: UInt16(sizeAndOpcode & 0xffff), arguments: arguments)
        }

        /// Reads until a message satisfies `condition`; `nil` if the client hung up first.
        func read(until condition: (Message) -> Bool) -> Message? {
            while let message = read() {
                if condition(message) { return message }
            }
            return nil
        }

        /// Queues an event.
        func send(_ object: UInt32, _ opcode: UInt16, _ arguments: [Argument] = []) {
            var body: [UInt8] = []
            func word(_ value: UInt32) { body += withUnsafeBytes(of: value.littleEndian) { Array($0) } }
            func pad() { while body.count % 4 != 0 { body.append(0) } }
            for argument in arguments {
                switch argument {
                case .uint(let value): word(value)
                case .string(let text):
                    word(UInt32(text.utf8.count + 1))
                    body += Array(text.utf8) + [0]
                    pad()
                case .array(let values):
                    word(UInt32(values.count * 4))
                    values.forEach { word($0) }
                }
            }
            sendRaw(object: object, sizeAndOpcode: UInt32(8 + body.count) << 16 | UInt32(opcode), body: body)
        }

        /// Queues a header and body as given.
        func sendRaw(object: UInt32, sizeAndOpcode: UInt32, body: [UInt8] = []) {
            queued +=
                withUnsafeBytes(of: object.littleEndian) { Array($0) }
                + withUnsafeBytes(of: sizeAndOpcode.littleEndian) { Array($0) } + body
        }

        /// Answers the client's start: `get_registry` and the first `sync` (the globals, then `done`),
        /// and, if one of `globals` is the foreign-toplevel manager, its `bind` and second `sync`,
        /// running `listing` between the bind and that sync's `done` (the toplevels the compositor has).
        ///
        /// - Returns: The manager's object id, or `nil` if it was not offered or the client hung up.
        @discardableResult
        func handshake(
            globals: [(name: UInt32, interface: String, version: UInt32)],
            listing: (_ manager: UInt32) -> Void = { _ in }
        ) -> UInt32? {
            guard let getRegistry = read(until: { $0.object == 1 && $0.opcode == 1 }),
                let sync = read(until: { $0.object == 1 && $0.opcode == 0 })
            else { return nil }
            let registry = getRegistry.word(at: 0)
            for global in globals {
                send(registry, 0, [.uint(global.name), .string(global.interface), .uint(global.version)])
            }
            finish(callback: sync.word(at: 0))
            guard globals.contains(where: { $0.interface == "zwlr_foreign_toplevel_manager_v1" }),
                let bind = read(until: { $0.object == registry && $0.opcode == 0 }),
                let secondSync = read(until: { $0.object == 1 && $0.opcode == 0 })
            else { return nil }
            let manager = bind.lastWord
            listing(manager)
            finish(callback: secondSync.word(at: 0))
            return manager
        }

        /// `wl_callback.done`, then `wl_display.delete_id` of the callback, as compositors answer a sync.
        func finish(callback: UInt32) {
            send(callback, 0, [.uint(0)])
            send(1, 1, [.uint(callback)])
        }

        private func readExactly(_ count: Int) -> [UInt8]? {
            var bytes = [UInt8](repeating: 0, count: count)
            var done = 0
            while done < count {
                let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, count - done) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return nil }
                done += n
            }
            return bytes
        }
    }

    let directory: TemporaryDirectory
    /// The socket clients connect to.
    let socketPath: String
    private let listener: Int32

    init() throws {
        directory = try TemporaryDirectory(prefix: "scripted-wayland")
        socketPath = directory.appending("wayland-scripted")
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(socketPath.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard listener >= 0, bound == 0, listen(listener, 4) == 0 else {
            throw FixtureError("listening on \(socketPath): \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        // shutdown wakes a thread still blocked in accept; close alone would not.
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        directory.remove()
    }

    /// Accepts the next client on a thread of its own and runs `script` with it; then reads until the
    /// client hangs up (or `script` closed the connection) and closes it. `finished` is signalled then.
    ///
    /// - Parameters:
    ///   - script: What the server says; return to keep the connection open until the client leaves,
    ///     or call `shutdown` on the fd to drop it.
    /// - Returns: A semaphore signalled when the connection is over.
    func serve(_ script: @escaping @Sendable (Connection) -> Void) -> DispatchSemaphore {
        let finished = DispatchSemaphore(value: 0)
        let listener = listener
        Thread {
            let fd = accept(listener, nil, nil)
            if fd >= 0 {
                let connection = Connection(fd: fd)
                script(connection)
                while connection.read() != nil {}
                close(fd)
            }
            finished.signal()
        }.start()
        return finished
    }
}
