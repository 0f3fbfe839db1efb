import FoundationEssentials

extension Application {
    /// The launch sequence (see ``launch(options:)``).
    func performLaunch(_ options: LaunchOptions) {
        launchOptions = options
        foregroundRequested = pendingForeground ?? !options.launchedInBackground
        pendingForeground = nil
        launchInProgress = true
        setState(.inactive)
        let passed: LaunchOptions? = options.isEmpty ? nil : options

        let (willResult, willImplemented) = invoke("application(_:willFinishLaunchingWithOptions:)") {
            delegate.application(self, willFinishLaunchingWithOptions: passed)
        }
        notificationCenter.post(WillFinishLaunchingMessage(launchOptions: options), object: self)

        restoreStateIfPresent()

        let (didResult, didImplemented) = invoke("application(_:didFinishLaunchingWithOptions:)") {
            delegate.application(self, didFinishLaunchingWithOptions: passed)
        }
        if !didImplemented {
            _ = invoke("applicationDidFinishLaunching(_:)") { delegate.applicationDidFinishLaunching(self) }
        }
        notificationCenter.post(DidFinishLaunchingMessage(launchOptions: options), object: self)
        launched = true
        host.applicationDidFinishLaunching(self)

        // The launch methods' return values gate the launch URL (and a launch quick action):
        // both must agree when both are implemented, only the implemented one counts otherwise,
        // and they are ignored for a launch caused by a remote notification.
        let accepted = Self.launchAccepted(
            will: willImplemented ? willResult : nil, did: didImplemented ? didResult : nil,
            forRemoteNotification: options.remoteNotification != nil)

        // What the app was launched for is handled before it becomes active (a foreground launch,
        // inactive) or before it may suspend (a background launch, in the background).
        settle(ceiling: .inactive)
        guard applicationState != .notRunning else { return }
        if let url = options.url {
            if accepted {
                openURL(
                    url,
                    options: OpenURLOptions(
                        sourceApplication: options.sourceApplication, annotation: options.annotation))
            } else {
                logger.info("launch URL \(url.absoluteString) refused by the launch methods")
                host.application(self, didOpen: url, handled: false)
            }
        }
        if let notification = options.localNotification {
            deliverLocalNotification(notification)
        }
        if let payload = options.remoteNotification {
            // A launch into the background is the push arriving; one into the foreground is a
            // click on its banner, which was shown (and its badge set) when it arrived.
            if options.launchedInBackground { presentRemoteNotification(payload) }
            // Only the fetch variant is called for the notification that launched the app.
            deliverRemoteNotificationFetch(payload, plainAllowed: false)
        }
        if let item = options.shortcutItem, accepted {
            performShortcut(item)
        }
        launchInProgress = false
        settle()
        let pending = eventsBeforeLaunch
        eventsBeforeLaunch.removeAll()
        for event in pending { process(event) }
    }

    /// The seeds' gating rule for the launch URL: "if either method returns NO, the URL is not
    /// handled; if you do not implement one of the methods, only the return value of the
    /// implemented method is considered"; ignored for a launch caused by a remote notification.
    ///
    /// - Parameters:
    ///   - will: The value of `willFinishLaunchingWithOptions`, or `nil` when not implemented.
    ///   - did: The value of `didFinishLaunchingWithOptions`, or `nil` when not implemented.
    ///   - forRemoteNotification: Whether a remote notification caused the launch.
    public nonisolated static func launchAccepted(will: Bool?, did: Bool?, forRemoteNotification: Bool) -> Bool {
        if forRemoteNotification { return true }
        return (will ?? true) && (did ?? true)
    }

    // MARK: State restoration

    var restorationDirectory: URL {
        configuration.stateRestorationDirectory
            ?? RestorationArchive.defaultDirectory(applicationIdentifier: configuration.applicationIdentifier)
    }

    /// Restoration at launch: should restore → each restorable object → did decode.
    func restoreStateIfPresent() {
        guard configuration.isStateRestorationEnabled else { return }
        let archive: RestorationArchive
        do {
            guard let loaded = try RestorationArchive.load(from: restorationDirectory) else { return }
            archive = loaded
        } catch {
            logger.info("state restoration skipped: \(error)")
            return
        }
        let coder = StateRestorationCoder(archive: archive)
        let (shouldRestore, _) = invoke("application(_:shouldRestoreApplicationState:)") {
            delegate.application(self, shouldRestoreApplicationState: coder)
        }
        notificationCenter.post(ShouldRestoreApplicationStateMessage(result: shouldRestore), object: self)
        guard shouldRestore else { return }
        for path in coder.restorableObjectPaths {
            let (object, _) = invoke("application(_:restorableObjectWithIdentifierPath:coder:)") {
                delegate.application(self, restorableObjectWithIdentifierPath: path, coder: coder)
            }
            notificationCenter.post(
                RestorableObjectMessage(identifierPath: path, restored: object != nil), object: self)
        }
        deliver(
            DidDecodeRestorableStateMessage(restorableObjectPaths: coder.restorableObjectPaths),
            "application(_:didDecodeRestorableStateWith:)"
        ) {
            delegate.application(self, didDecodeRestorableStateWith: coder)
        }
    }

    /// Preservation on entering the background: should save → will encode → atomic write.
    ///
    /// Runs only when the delegate implements `shouldSaveApplicationState` and returns `true`.
    func preserveStateIfRequested() {
        guard configuration.isStateRestorationEnabled else { return }
        let coder = StateRestorationCoder()
        let (shouldSave, implemented) = invoke("application(_:shouldSaveApplicationState:)") {
            delegate.application(self, shouldSaveApplicationState: coder)
        }
        guard implemented else { return }
        notificationCenter.post(ShouldSaveApplicationStateMessage(result: shouldSave), object: self)
        guard shouldSave else { return }
        _ = invoke("application(_:willEncodeRestorableStateWith:)") {
            delegate.application(self, willEncodeRestorableStateWith: coder)
        }
        notificationCenter.post(
            WillEncodeRestorableStateMessage(restorableObjectPaths: coder.restorableObjectPaths), object: self)
        do {
            try coder.archive(applicationIdentifier: configuration.applicationIdentifier, savedAt: Date()).write(
                to: restorationDirectory)
        } catch {
            logger.info("state preservation failed: \(error)")
        }
    }
}
