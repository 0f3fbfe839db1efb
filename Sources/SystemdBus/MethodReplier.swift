import CSystemd
import Glibc
import Logging
import Synchronization

/// Sends the one reply of an incoming method call, from any thread, on the loop thread.
///
/// It owns a reference on the call's sd-bus message until the reply has gone out (sd-bus allows
/// replying later). Dropped without an answer, it answers `Failed`, so no caller waits for its
/// timeout; either way it tells the object that the call is no longer pending.
final class MethodReplier: Sendable {
    private let message: SendablePointer
    private let loop: EventLoop
    private let box: ObjectBox
    private let outSignature: String
    private let description: String
    private let logger: Logger
    private let answered = Atomic<Bool>(false)

    /// Takes over a reference on `message` (the caller has taken it). Loop thread only.
    init(
        message: OpaquePointer, loop: EventLoop, box: ObjectBox, outSignature: String, description: String,
        logger: Logger
    ) {
        self.message = SendablePointer(message)
        self.loop = loop
        self.box = box
        self.outSignature = outSignature
        self.description = description
        self.logger = logger
    }

    deinit {
        if !answered.load(ordering: .acquiring) {
            send(
                .failure(BusError(name: BusError.Name.failed, message: "\(description) was not answered", errno: 0)),
                followUps: [])
        }
    }

    /// Sends the reply once: values of the declared signature, or the error.
    func finish(_ result: Result<[BusValue], any Error>, request: BusMethodCall) {
        guard !answered.exchange(true, ordering: .acquiringAndReleasing) else {
            logger.info("\(description) was answered twice; the second answer is dropped")
            return
        }
        let checked: Result<[BusValue], BusError>
        switch result {
        case .success(let values):
            let signature = BusValue.signature(of: values)
            if signature == outSignature {
                checked = .success(values)
            } else {
                logger.info("the answer to \(description) has signature \(signature), declared \(outSignature)")
                checked = .failure(
                    BusError(
                        name: BusError.Name.failed,
                        message: "internal error: reply has signature \(signature)", errno: EINVAL))
            }
        case .failure(let error as BusError):
            checked = .failure(error)
        case .failure(let error):
            checked = .failure(BusError(name: BusError.Name.failed, message: "\(error)", errno: 0))
        }
        send(checked, followUps: request.followUps.take())
    }

    private func send(_ result: Result<[BusValue], BusError>, followUps: [@Sendable () -> Void]) {
        let message = self.message
        let logger = self.logger
        let description = self.description
        let box = self.box
        let sent = loop.perform {
            ObjectBox.reply(to: message.pointer, with: result, logger: logger)
            sd_bus_message_unref(message.pointer)
            if case .success = result { followUps.forEach { $0() } }
            box.callFinished()
        }
        // A stopped loop has freed the bus and with it every message it held.
        if !sent { logger.debug("loop shut down before replying to \(description)") }
    }
}
