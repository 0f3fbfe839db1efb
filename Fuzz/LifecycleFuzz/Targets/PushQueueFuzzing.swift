import FoundationEssentials

@testable import LifecycleDaemon

/// lifecycled's push queue (`push-queue.json`): the input is the file.
///
/// Decoded as the distributor does at start, then driven as it drives a loaded queue (settle the
/// handed-over pushes, drop the expired ones, add every pending push again, complete the first of
/// each registration), and checked: it stays within its bounds and encodes and decodes back to
/// itself.
enum PushQueueFuzzing {
    static let target = FuzzTarget(name: "push-queue", summary: "lifecycled push-queue.json") { bytes in
        guard var queue = try? JSONDecoder().decode(PushQueue.self, from: Data(bytes)) else { return }
        roundTrip(queue)
        _ = queue.settleHandedOver()
        _ = queue.dropExpired(nowMilliseconds: 1_767_225_600_000)
        for push in queue.pending {
            _ = queue.add(push)
            queue.markHandedOver(push.id)
        }
        for token in queue.waitingTokens {
            if let next = queue.next(for: token) { queue.complete(next.id) }
        }
        guard queue.delivered.count <= PushQueue.rememberedDeliveries else {
            FuzzTarget.fail("the queue remembers \(queue.delivered.count) delivered ids")
        }
        roundTrip(queue)
    }

    private static func roundTrip(_ queue: PushQueue) {
        do {
            let again = try JSONDecoder().decode(PushQueue.self, from: JSONEncoder().encode(queue))
            guard again == queue else { FuzzTarget.fail("the push queue changed on a round trip") }
        } catch {
            FuzzTarget.fail("a loaded push queue does not read back: \(error)")
        }
    }
}
