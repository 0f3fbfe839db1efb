import FoundationEssentials
import Synchronization

extension Application {
    /// Asks for background time to finish a task (`beginBackgroundTask(withName:expirationHandler:)`).
    ///
    /// A background app is not suspended while it has tasks. When the background time
    /// (``Configuration/backgroundTimeLimit`` after entering the background) runs out, each
    /// remaining task's expiration handler is called, in the order the tasks began; a task the
    /// handler does not end is ended for it (and logged), and the app is suspended.
    ///
    /// - Parameters:
    ///   - name: A name for logs and traces.
    ///   - expirationHandler: Called on the main actor when background time runs out; end the task in it.
    /// - Returns: The task's identifier, or ``BackgroundTaskIdentifier/invalid`` when the app is
    ///   suspended, not running or terminating.
    public func beginBackgroundTask(
        withName name: String? = nil, expirationHandler: (@MainActor () -> Void)? = nil
    ) -> BackgroundTaskIdentifier {
        guard applicationState.isRunningCode, !terminating else {
            logger.info("beginBackgroundTask refused: the app is \(applicationState)")
            return .invalid
        }
        let id = BackgroundTaskIdentifier(rawValue: nextBackgroundTaskID)
        nextBackgroundTaskID += 1
        backgroundTasks.append((id, name, expirationHandler))
        logger.debug("background \(id) began (\(name ?? "unnamed"))")
        host.application(self, didBeginBackgroundTask: id, name: name)
        return id
    }

    /// Asks for background time (`beginBackgroundTask(expirationHandler:)`).
    ///
    /// - Parameters:
    ///   - expirationHandler: Called when background time runs out.
    /// - Returns: The task's identifier, or ``BackgroundTaskIdentifier/invalid``.
    public func beginBackgroundTask(expirationHandler: (@MainActor () -> Void)?) -> BackgroundTaskIdentifier {
        beginBackgroundTask(withName: nil, expirationHandler: expirationHandler)
    }

    /// Ends a background task; the app may be suspended once no task and no completion remains.
    ///
    /// Ending an unknown or already-ended task is logged and otherwise harmless.
    ///
    /// - Parameters:
    ///   - identifier: The task's identifier.
    public func endBackgroundTask(_ identifier: BackgroundTaskIdentifier) {
        guard let index = backgroundTasks.firstIndex(where: { $0.id == identifier }) else {
            logger.info("endBackgroundTask: \(identifier) is not running")
            return
        }
        backgroundTasks.remove(at: index)
        logger.debug("background \(identifier) ended")
        host.application(self, didEndBackgroundTask: identifier)
        if backgroundTasks.isEmpty { enqueue(.settle) }
    }

    /// The identifiers of the background tasks that have not ended, in the order they began.
    public var activeBackgroundTasks: [BackgroundTaskIdentifier] { backgroundTasks.map(\.id) }

    func startBackgroundTime() {
        guard backgroundDeadline == nil else { return }
        let limit = configuration.backgroundTimeLimit
        backgroundDeadline = host.scheduler.now + limit
        backgroundTimer = host.scheduler.schedule(after: limit) { [weak self] in
            self?.enqueue(.backgroundTimeExpired)
        }
    }

    func stopBackgroundTime() {
        backgroundTimer?.cancel()
        backgroundTimer = nil
        backgroundDeadline = nil
    }

    /// Background time ran out: expiration handlers, then forced ends, then suspension.
    func expireBackgroundTime() {
        guard applicationState == .background, backgroundDeadline != nil else { return }
        backgroundTimer = nil
        let expiring = backgroundTasks
        for task in expiring {
            guard backgroundTasks.contains(where: { $0.id == task.id }) else { continue }
            if let handler = task.expiration {
                _ = invoke("expirationHandler(\(task.name ?? task.id.description))") { handler() }
            }
        }
        let unended = backgroundTasks
        backgroundTasks.removeAll()
        for task in unended {
            logger.info(
                "background \(task.id) (\(task.name ?? "unnamed")) was not ended by its expiration handler; ending it")
            host.application(self, didEndBackgroundTask: task.id)
        }
        for (_, completion) in pendingCompletions {
            completion.timer.cancel()
            logger.info("\(completion.name) completion handler not called before background time ran out")
        }
        pendingCompletions.removeAll()
        settle()
    }

    // MARK: Completion handlers

    /// Tracks a completion handler the delegate must call; the app stays awake until it is.
    func beginCompletion(_ name: String) -> CompletionToken {
        let id = nextCompletionID
        nextCompletionID += 1
        let token = CompletionToken(id: id, name: name, application: self)
        let timer = host.scheduler.schedule(after: configuration.completionHandlerDeadline) { [weak self] in
            guard let self, self.pendingCompletions.removeValue(forKey: id) != nil else { return }
            self.logger.info(
                "\(name) completion handler not called within \(self.configuration.completionHandlerDeadline)")
            token.markDone()
            self.enqueue(.settle)
        }
        pendingCompletions[id] = (name, timer)
        return token
    }

    func endCompletion(_ id: Int, posting message: (any LifecycleMessage)?) {
        guard let completion = pendingCompletions.removeValue(forKey: id) else { return }
        completion.timer.cancel()
        if let message { post(message) }
        enqueue(.settle)
    }

    private func post(_ message: some LifecycleMessage) {
        notificationCenter.post(message, object: self)
    }
}

/// A completion handler the app waits for; callable once, from any thread.
///
/// Sendable: `id` and `name` are immutable, `application` is a weak reference to a main-actor
/// (hence Sendable) object, and `done` is atomic.
final class CompletionToken: Sendable {
    let id: Int
    let name: String
    private weak let application: Application?
    private let done = Atomic<Bool>(false)

    init(id: Int, name: String, application: Application) {
        self.id = id
        self.name = name
        self.application = application
    }

    func markDone() { done.store(true, ordering: .releasing) }

    /// The delegate called the handler: end the completion on the main actor.
    func finish(posting message: (any LifecycleMessage)? = nil) {
        guard !done.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let id = self.id
        MainActorContext.run { [application] in application?.endCompletion(id, posting: message) }
    }

    /// The delegate did not implement the method: the completion ends at once.
    @MainActor
    func finishNow() {
        guard !done.exchange(true, ordering: .acquiringAndReleasing) else { return }
        application?.endCompletion(id, posting: nil)
    }
}
