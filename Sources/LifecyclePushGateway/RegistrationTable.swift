import BrokerLink
import FleetProtocol
import Synchronization

/// The gateway's only state: token → (device, registration), rebuilt from the broker's retained
/// `registrations` messages on every (re)connect.
///
/// Read by every NIO event-loop thread (one lookup per request), written by the broker's loop
/// thread (one update per retained message); a `Mutex` keeps both short.
///
/// A token belongs to the first device that claims it: a claim by another device is ignored (and
/// logged by the caller), and so is its removal. After a reconnect the broker sends every retained
/// record again: ``beginResync()`` starts a new generation, records seen again join it, and
/// ``finishResync()`` drops those that were not (removed while the gateway was away). Until then
/// ``isSyncing`` is true and the gateway answers an unknown token with 503, not 404: an app server
/// that sees 404 deletes the subscription for good.
package final class RegistrationTable: Sendable {
    /// One known registration.
    package struct Entry: Sendable, Equatable {
        /// The device that registered the token: the second level of its topic.
        package var device: String
        /// The registration.
        package var record: PushRegistrationRecord
        /// The resync generation that last saw the record.
        package var generation: UInt64
    }

    /// What one retained message did to the table.
    package enum Change: Sendable, Equatable {
        /// A new token.
        case added
        /// The owning device published the token's record again (perhaps with another key).
        case updated
        /// The owning device removed the token (an empty payload).
        case removed
        /// An empty payload for a token nobody holds (a removal the table never saw the add of).
        case removedUnknown
        /// Another device holds the token: the claim (or removal) is ignored.
        case conflict(owner: String)
        /// The payload is not a valid record, or the record's token differs from the topic's.
        case rejected(String)
    }

    private struct State {
        var entries: [String: Entry] = [:]
        package var generation: UInt64 = 0
        var syncing = true
    }

    private let state = Mutex(State())

    /// Creates an empty table, syncing until the first ``finishResync()``.
    package init() {}

    /// The registration of `token`, if any.
    package func lookup(_ token: String) -> Entry? {
        state.withLock { $0.entries[token] }
    }

    /// How many tokens are known.
    package var count: Int { state.withLock { $0.entries.count } }

    /// Whether the table is being rebuilt after a (re)connect, so an unknown token may still arrive.
    package var isSyncing: Bool { state.withLock { $0.syncing } }

    /// Applies one retained message of `applifecycle/v1/<device>/registrations/<token>`.
    ///
    /// - Parameters:
    ///   - device: The topic's device level.
    ///   - token: The topic's last level.
    ///   - payload: The message: a ``PushRegistrationRecord``'s JSON, or empty to remove the token.
    /// - Returns: What changed, for the log.
    @discardableResult
    package func apply(device: String, token: String, payload: some Collection<UInt8>) -> Change {
        guard PushRegistrationRecord.isValidToken(token) else { return .rejected("the topic's token is malformed") }
        if payload.isEmpty {
            return state.withLock { state in
                guard let entry = state.entries[token] else { return .removedUnknown }
                guard entry.device == device else { return .conflict(owner: entry.device) }
                state.entries[token] = nil
                return .removed
            }
        }
        let record: PushRegistrationRecord
        do {
            record = try PushRegistrationRecord.decode(payload)
        } catch let error as FleetProtocolError where error.code == .invalidRecord {
            return .rejected(error.message)
        } catch {
            return .rejected("not a registration record's JSON")
        }
        guard record.token == token else { return .rejected("the record's token is not the topic's") }
        return state.withLock { state in
            let entry = Entry(device: device, record: record, generation: state.generation)
            guard let existing = state.entries[token] else {
                state.entries[token] = entry
                return .added
            }
            guard existing.device == device else { return .conflict(owner: existing.device) }
            state.entries[token] = entry
            return .updated
        }
    }

    /// Starts a rebuild: the broker is about to send every retained record again.
    package func beginResync() {
        state.withLock { state in
            state.generation &+= 1
            state.syncing = true
        }
    }

    /// Ends a rebuild: drops the records the broker did not send again.
    ///
    /// - Returns: The number of records dropped.
    @discardableResult
    package func finishResync() -> Int {
        state.withLock { state in
            let before = state.entries.count
            let current = state.generation
            state.entries = state.entries.filter { $0.value.generation == current }
            state.syncing = false
            return before - state.entries.count
        }
    }
}
