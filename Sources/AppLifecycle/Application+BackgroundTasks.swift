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
        // A handler whose overrun ends the app keeps its own deadline: background time does not
        // give it up (the seeds give a fetch its 30 s whatever else runs out).
        for (id, completion) in pendingCompletions where !completion.endsApp {
            completion.timer.cancel()
            logger.info("\(completion.name) completion handler not called before background time ran out")
            if let task = completion.hostTask { host.application(self, didEndBackgroundTask: task) }
            pendingCompletions[id] = nil
        }
        settle()
    }

    // MARK: Completion handlers

    /// Tracks a completion handler the delegate must call; the app stays awake until it is.
    ///
    /// - Parameters:
    ///   - name: What the handler completes, for logs.
    ///   - overrunEnds: The delegate method whose handler it is, when a handler not called within
    ///     ``Configuration/completionHandlerDeadline`` ends the app: the seeds' rule for
    ///     `application(_:performFetchWithCompletionHandler:)` and
    ///     `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)` ("if you do not
    ///     call the handler in time, your app is terminated"). The app is killed, as iOS's watchdog
    ///     kills it: the host's ``ApplicationHost/callbackDeadlineHandler`` is called with the
    ///     method's name and `applicationWillTerminate(_:)` is not. `nil` (every other handler):
    ///     the handler is given up and logged, and the app may be suspended.
    ///   - hostTaskName: When set, the host sees the completion as a background task of this name,
    ///     begun now and ended when the handler is called (lifecycled tracks a fetch's completion
    ///     through it, with the tasks it already tracks).
    func beginCompletion(_ name: String, overrunEnds: String? = nil, hostTaskName: String? = nil) -> CompletionToken {
        let id = nextCompletionID
        nextCompletionID += 1
        let token = CompletionToken(id: id, name: name, application: self)
        var hostTask: BackgroundTaskIdentifier?
        if let hostTaskName {
            let task = BackgroundTaskIdentifier(rawValue: nextBackgroundTaskID)
            nextBackgroundTaskID += 1
            host.application(self, didBeginBackgroundTask: task, name: hostTaskName)
            hostTask = task
        }
        let deadline = configuration.completionHandlerDeadline
        let timer = host.scheduler.schedule(after: deadline) { [weak self] in
            guard let self, let completion = self.pendingCompletions.removeValue(forKey: id) else { return }
            token.markDone()
            guard let callback = overrunEnds else {
                self.logger.info("\(name) completion handler not called within \(deadline)")
                if let task = completion.hostTask { self.host.application(self, didEndBackgroundTask: task) }
                self.enqueue(.settle)
                return
            }
            self.logger.info("\(name) completion handler not called within \(deadline); the app is ended")
            self.host.callbackDeadlineHandler(callback)
            self.endAsKilled()
        }
        pendingCompletions[id] = (name, timer, hostTask, overrunEnds != nil)
        return token
    }

    func endCompletion(_ id: Int, posting message: (any LifecycleMessage)?) {
        guard let completion = pendingCompletions.removeValue(forKey: id) else { return }
        completion.timer.cancel()
        if let message { post(message) }
        // After the message: a host that reports both (lifecycled) has the result before the end.
        if let task = completion.hostTask { host.application(self, didEndBackgroundTask: task) }
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
