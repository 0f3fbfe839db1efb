import AppLifecycle
import Logging
import Synchronization
import SystemdBus

/// Runs ``ReadinessSource``s on an ``EventLoop``: registers each descriptor, turns readiness
/// into host events, and drops a source that reports it is gone.
///
/// Sendable: its only mutable state (the registered sources and their tokens) is behind a mutex.
final class ReadinessSourceRunner: Sendable {
    private let loop: EventLoop
    private let sink: @Sendable (HostEvent, String) -> Void
    private let logger: Logger
    private let registered = Mutex<[(source: any ReadinessSource, token: EventSourceToken)]>([])

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
    /// - Throws: ``BusError`` when the loop refuses the descriptor.
    func add(_ source: any ReadinessSource) throws {
        let sink = self.sink
        let logger = self.logger
        let holder = TokenHolder()
        let token = try loop.addIO(fd: source.fileDescriptor, events: UInt32(UInt16(bitPattern: source.pollEvents))) { [weak self] revents in
            do {
                for event in try source.handleReadiness(Int16(truncatingIfNeeded: revents)) {
                    sink(event, source.name)
                }
            } catch let error as HostSourceError where error.code == .sourceGone {
                logger.warning("\(source.name) stopped: \(error); its events are no longer delivered")
                holder.token?.cancel()
                source.close()
                self?.forget(source)
            } catch {
                logger.error("\(source.name): \(error)")
            }
        }
        holder.token = token
        registered.withLock { $0.append((source, token)) }
    }

    private func forget(_ source: any ReadinessSource) {
        registered.withLock { $0.removeAll { $0.source === source } }
    }

    /// The names of the sources running now.
    var names: [String] { registered.withLock { $0.map(\.source.name) } }

    /// Unregisters and closes every source.
    func stopAll() {
        let all = registered.withLock { list -> [(source: any ReadinessSource, token: EventSourceToken)] in
            defer { list.removeAll() }
            return list
        }
        for (source, token) in all {
            token.cancel()
            source.close()
        }
    }
}

/// Lets a readiness handler cancel its own registration.
///
/// Sendable: the token is set once, before the loop can call the handler, under a mutex.
private final class TokenHolder: Sendable {
    private let stored = Mutex<EventSourceToken?>(nil)
    var token: EventSourceToken? {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}
