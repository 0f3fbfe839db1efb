import AppLifecycle
import Logging
import Synchronization
import SystemdBus

/// Runs ``ReadinessSource``s on an ``EventLoop``: registers each descriptor, turns readiness
/// into host events, and drops a source that reports it is gone.
///
/// Sendable: its only mutable state (the registered sources and their tokens) is behind a mutex.
final class ReadinessSourceRunner: Sendable {
    /// The loop whose thread calls the sources.
    let loop: EventLoop
    private let sink: @Sendable (HostEvent, String) -> Void
    private let logger: Logger
    private let registered = Mutex<Registered>(Registered())

    /// The sources running now, and whether ``stopAll()`` has run (a later registration is undone).
    private struct Registered {
        var list: [(source: any ReadinessSource, token: EventSourceToken)] = []
        var stopped = false
    }

    /// - Parameters:
    ///   - loop: The loop whose thread calls the sources.
    ///   - logger: Where failures are logged.
    ///   - sink: Receives each event with the name of the source that produced it (loop thread).
    init(loop: EventLoop, logger: Logger, sink: @escaping @Sendable (HostEvent, String) -> Void) {
        self.loop = loop
        self.logger = logger
        self.sink = sink
    }

    /// Registers a source; its events go to the sink from now on.
    ///
    /// Suspends while the loop registers the descriptor (no thread waits).
    ///
    /// - Throws: ``BusError`` when the loop refuses the descriptor or has shut down.
    func add(_ source: any ReadinessSource) async throws {
        let sink = self.sink
        let logger = self.logger
        let holder = TokenHolder()
        let token = try await loop.addIO(
            fd: source.fileDescriptor, events: UInt32(UInt16(bitPattern: source.pollEvents))
        ) {
            [weak self] revents in
            do {
                for event in try source.handleReadiness(Int16(truncatingIfNeeded: revents)) {
                    sink(event, source.name)
                }
            } catch let error as HostSourceError where error.code == .sourceGone {
                // If `add` has not stored the token yet, it sees the mark and cleans up itself.
                guard let token = holder.markGone() else { return }
                logger.info("\(source.name) stopped: \(error); its events are no longer delivered")
                token.cancel()
                source.close()
                self?.forget(source)
            } catch {
                logger.info("\(source.name): \(error)")
            }
        }
        if holder.set(token) {
            // The source reported itself gone before this thread stored the token: unregister and
            // close on the loop thread, where unregistering is immediate.
            logger.info("\(source.name) stopped at once; its events are not delivered")
            _ = loop.perform {
                token.cancel()
                source.close()
            }
            return
        }
        let stopped = registered.withLock { registered -> Bool in
            if !registered.stopped { registered.list.append((source, token)) }
            return registered.stopped
        }
        // Stopped while the loop registered it: undone as stopAll() would have.
        if stopped { Self.unregister([(source, token)], on: loop) }
    }

    private func forget(_ source: any ReadinessSource) {
        registered.withLock { $0.list.removeAll { $0.source === source } }
    }

    /// Hands an event to the sink, for a source the loop drives without a descriptor of its own
    /// (``TimeZoneWatcher``'s sd-event inotify watches).
    ///
    /// - Parameters:
    ///   - event: The event.
    ///   - source: The name of the source that produced it.
    func deliver(_ event: HostEvent, from source: String) {
        sink(event, source)
    }

    /// The names of the sources running now.
    var names: [String] { registered.withLock { $0.list.map(\.source.name) } }

    /// Unregisters and closes every source.
    func stopAll() {
        let all = registered.withLock { registered -> [(source: any ReadinessSource, token: EventSourceToken)] in
            registered.stopped = true
            defer { registered.list.removeAll() }
            return registered.list
        }
        Self.unregister(all, on: loop)
    }

    /// Unregisters and closes sources.
    ///
    /// Unregistered before closed, on the loop thread: cancelling from another thread only queues
    /// the cancel, and a closed fd number may be reused before sd-event lets go of it. Handed over,
    /// not waited for: the caller (the main actor, stopping the bridge) never waits for the loop;
    /// a loop that has stopped already lets the caller close them itself.
    private static func unregister(
        _ sources: [(source: any ReadinessSource, token: EventSourceToken)], on loop: EventLoop
    ) {
        let closeAll: @Sendable () -> Void = {
            for (source, token) in sources {
                token.cancel()
                source.close()
            }
        }
        if loop.isOnLoopThread || !loop.perform(closeAll) { closeAll() }
    }
}

/// Hands a readiness handler its own registration, whichever of the two threads gets there first.
///
/// Sendable: its state is behind a mutex.
private final class TokenHolder: Sendable {
    private let state = Mutex<(token: EventSourceToken?, gone: Bool)>((nil, false))

    /// Stores the token; returns whether the source already reported itself gone.
    func set(_ token: EventSourceToken) -> Bool {
        state.withLock { state in
            state.token = token
            return state.gone
        }
    }

    /// Marks the source gone; returns the token when it is already stored (else `set` cleans up).
    func markGone() -> EventSourceToken? {
        state.withLock { state in
            state.gone = true
            return state.token
        }
    }
}
