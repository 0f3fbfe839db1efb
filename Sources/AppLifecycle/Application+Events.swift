import FoundationEssentials

extension Application {
    /// Handles one host event (on the work queue).
    func process(_ event: HostEvent) {
        guard !terminating, !(launched && applicationState == .notRunning) else {
            logger.debug("event after termination ignored: \(String(describing: event))")
            return
        }
        // Facts are recorded before launch so the first settle respects them; everything else waits.
        guard launched else {
            switch event {
            case .sleeping(let value): sleeping = value
            case .locked(let value):
                locked = value
                isProtectedDataAvailable = !value
            case .sessionActive(let value): sessionActive = value
            case .foreground(let value): pendingForeground = value
            case .focused(let value): focused = value
            case .lowPowerMode, .thermalState, .backgroundRefreshStatus: recordConditionBeforeLaunch(event)
            // The badge the host shows (lifecycled's registration): what a push in the launch
            // options changes (an aps without badge clears it), so it is known before the launch.
            case .applicationIconBadgeNumber(let number): badgeNumber = number
            default: eventsBeforeLaunch.append(event)
            }
            return
        }
        switch event {
        case .sleeping(let value):
            sleeping = value
            settle()
        case .locked(let value):
            locked = value
            settle()
        case .sessionActive(let value):
            sessionActive = value
            settle()
        case .foreground(let value):
            foregroundRequested = value
            settle()
        case .focused(let value):
            focused = value
            settle()
        case .terminate(let reason):
            terminate(reason)
        case .significantTimeChange(let change):
            pendingTimeChange = change
            // Delivered now unless suspended; then the latest waits for the return to the foreground.
            if applicationState.isRunningCode { deliverPendingTimeChange() }
        case .memoryWarning(let warning):
            guard applicationState.isRunningCode else {
                logger.info("memory warning (\(warning.level.rawValue)) not delivered: the app is \(applicationState)")
                return
            }
            deliver(DidReceiveMemoryWarningMessage(warning: warning), "applicationDidReceiveMemoryWarning(_:)") {
                delegate.applicationDidReceiveMemoryWarning(self)
            }
        case .openURL(let url, let options):
            wakeIfSuspended()
            foregroundRequested = true
            settle(ceiling: .inactive)
            openURL(url, options: options)
            settle()
        case .remoteNotification(let payload):
            presentRemoteNotification(payload)
            deliverRemoteNotificationFetch(payload, plainAllowed: true)
            settle()
        case .remoteNotificationAction(let identifier, let payload):
            wakeIfSuspended()
            let completion = beginCompletion("remote notification action")
            let (_, implemented) = invoke(
                "application(_:handleActionWithIdentifier:forRemoteNotification:completionHandler:)"
            ) {
                delegate.application(self, handleActionWithIdentifier: identifier, forRemoteNotification: payload) {
                    completion.finish()
                }
            }
            if !implemented { completion.finishNow() }
            notificationCenter.post(
                HandleRemoteNotificationActionMessage(identifier: identifier, payload: payload), object: self)
            settle()
        case .remoteNotificationOpened(let payload):
            // As a local banner's click: willEnterForeground, the callback while inactive, didBecomeActive.
            wakeIfSuspended()
            foregroundRequested = true
            settle(ceiling: .inactive)
            deliverRemoteNotificationFetch(payload, plainAllowed: true)
            settle()
        case .registeredForRemoteNotifications(let token):
            remoteNotificationsRegistered = true
            runIfRunningCode("didRegisterForRemoteNotifications") {
                deliver(
                    DidRegisterForRemoteNotificationsMessage(deviceToken: token),
                    "application(_:didRegisterForRemoteNotificationsWithDeviceToken:)"
                ) {
                    delegate.application(self, didRegisterForRemoteNotificationsWithDeviceToken: token)
                }
            }
        case .unregisteredForRemoteNotifications:
            remoteNotificationsRegistered = false
            logger.info("the push distributor dropped the remote-notification registration")
        case .failedToRegisterForRemoteNotifications(let error):
            remoteNotificationsRegistered = false
            runIfRunningCode("didFailToRegisterForRemoteNotifications") {
                deliver(
                    DidFailToRegisterForRemoteNotificationsMessage(error: error),
                    "application(_:didFailToRegisterForRemoteNotificationsWithError:)"
                ) {
                    delegate.application(self, didFailToRegisterForRemoteNotificationsWithError: error)
                }
            }
        case .localNotification(let notification):
            // Only an active app gets it directly; an inactive one (a locked screen, a system
            // overlay) has its notification shown as the alert, as UIKit shows it on the lock screen.
            if applicationState == .active {
                deliverLocalNotification(notification)
            } else {
                logger.info(
                    "local notification \(notification.identifier) fired while the app is \(applicationState); asking the host to present it"
                )
                host.application(self, present: notification)
            }
        case .localNotificationAction(let identifier, let notification):
            wakeIfSuspended()
            let completion = beginCompletion("local notification action")
            let (_, implemented) = invoke("application(_:handleActionWithIdentifier:for:completionHandler:)") {
                delegate.application(self, handleActionWithIdentifier: identifier, for: notification) {
                    completion.finish()
                }
            }
            if !implemented { completion.finishNow() }
            notificationCenter.post(
                HandleLocalNotificationActionMessage(identifier: identifier, notification: notification), object: self)
            settle()
        case .localNotificationOpened(let notification):
            wakeIfSuspended()
            foregroundRequested = true
            settle(ceiling: .inactive)
            deliverLocalNotification(notification)
            settle()
        case .scheduledLocalNotifications(let notifications):
            scheduledLocalNotificationsMirror = notifications
        case .applicationIconBadgeNumber(let number):
            badgeNumber = number
        case .backgroundFetch:
            wakeIfSuspended()
            let completion = beginCompletion(
                "background fetch", overrunEnds: "application(_:performFetchWithCompletionHandler:)",
                hostTaskName: Application.backgroundFetchTaskName)
            let (_, implemented) = invoke("application(_:performFetchWithCompletionHandler:)") {
                delegate.application(
                    self,
                    performFetchWithCompletionHandler: { result in
                        completion.finish(posting: PerformFetchMessage(result: result))
                    })
            }
            if !implemented { completion.finishNow() }
            settle()
        case .backgroundURLSessionEvents(let identifier):
            wakeIfSuspended()
            let completion = beginCompletion("background URL session events")
            let (_, implemented) = invoke("application(_:handleEventsForBackgroundURLSession:completionHandler:)") {
                delegate.application(self, handleEventsForBackgroundURLSession: identifier) { completion.finish() }
            }
            if !implemented { completion.finishNow() }
            notificationCenter.post(HandleEventsForBackgroundURLSessionMessage(identifier: identifier), object: self)
            settle()
        case .willContinueUserActivity(let type):
            runIfRunningCode("willContinueUserActivity") {
                let (result, _) = invoke("application(_:willContinueUserActivityWithType:)") {
                    delegate.application(self, willContinueUserActivityWithType: type)
                }
                notificationCenter.post(
                    WillContinueUserActivityMessage(activityType: type, result: result), object: self)
            }
        case .continueUserActivity(let activity):
            // Continuing an activity brings the app to the foreground, as a URL does.
            wakeIfSuspended()
            foregroundRequested = true
            settle(ceiling: .inactive)
            let (result, _) = invoke("application(_:continue:restorationHandler:)") {
                delegate.application(self, continue: activity, restorationHandler: { _ in })
            }
            notificationCenter.post(ContinueUserActivityMessage(activity: activity, result: result), object: self)
            settle()
        case .userActivityUpdated(let activity):
            runIfRunningCode("didUpdateUserActivity") {
                deliver(DidUpdateUserActivityMessage(activity: activity), "application(_:didUpdate:)") {
                    delegate.application(self, didUpdate: activity)
                }
            }
        case .failedToContinueUserActivity(let type, let error):
            runIfRunningCode("didFailToContinueUserActivity") {
                deliver(
                    DidFailToContinueUserActivityMessage(activityType: type, error: error),
                    "application(_:didFailToContinueUserActivityWithType:error:)"
                ) {
                    delegate.application(self, didFailToContinueUserActivityWithType: type, error: error)
                }
            }
        case .shortcutItem(let item):
            wakeIfSuspended()
            foregroundRequested = true
            settle(ceiling: .inactive)
            performShortcut(item)
            settle()
        case .statusBarOrientation(let orientation, let duration):
            // Applied now unless suspended; then only the latest is applied on the return to the foreground.
            pendingStatusBarOrientation = (orientation, duration)
            if applicationState.isRunningCode { applyPendingStatusBarOrientation() }
        case .statusBarFrame(let frame):
            runIfRunningCode("statusBarFrame") { changeStatusBarFrame(to: frame) }
        case .lowPowerMode, .thermalState, .backgroundRefreshStatus:
            updateCondition(event)
        }
    }

    func runIfRunningCode(_ what: String, _ body: () -> Void) {
        guard applicationState.isRunningCode else {
            logger.info("\(what) not delivered: the app is \(applicationState)")
            return
        }
        body()
    }

    // MARK: Time changes

    /// Delivers the latest queued time change: notification first, then the delegate.
    func deliverPendingTimeChange() {
        guard let change = pendingTimeChange else { return }
        pendingTimeChange = nil
        deliver(
            SignificantTimeChangeMessage(change: change), notificationFirst: true,
            "applicationSignificantTimeChange(_:)"
        ) {
            delegate.applicationSignificantTimeChange(self)
        }
    }

    // MARK: URLs

    /// Opens a URL through the delegate's most modern open method that is implemented.
    func openURL(_ url: URL, options: OpenURLOptions) {
        var (handled, implemented) = invoke("application(_:open:options:)") {
            delegate.application(self, open: url, options: options)
        }
        if !implemented {
            (handled, implemented) = invoke("application(_:open:sourceApplication:annotation:)") {
                delegate.application(
                    self, open: url, sourceApplication: options.sourceApplication, annotation: options.annotation)
            }
        }
        if !implemented {
            (handled, implemented) = invoke("application(_:handleOpen:)") {
                delegate.application(self, handleOpen: url)
            }
        }
        if !implemented {
            logger.info("no open method implemented; \(url.absoluteString) not handled")
        }
        notificationCenter.post(DidOpenURLMessage(url: url, options: options, handled: handled), object: self)
        host.application(self, didOpen: url, handled: handled)
    }

    // MARK: Notifications

    func deliverLocalNotification(_ notification: LocalNotification) {
        deliver(DidReceiveLocalNotificationMessage(notification: notification), "application(_:didReceive:)") {
            delegate.application(self, didReceive: notification)
        }
    }

    /// A remote notification: the fetch variant when implemented (waking a suspended app),
    /// else the plain variant when `plainAllowed` and the app is running code.
    func deliverRemoteNotificationFetch(_ payload: UserInfo, plainAllowed: Bool) {
        let wasSuspended = applicationState == .suspended
        wakeIfSuspended()
        let completion = beginCompletion(
            "remote notification fetch",
            overrunEnds: "application(_:didReceiveRemoteNotification:fetchCompletionHandler:)")
        let (_, fetchImplemented) = invoke("application(_:didReceiveRemoteNotification:fetchCompletionHandler:)") {
            delegate.application(
                self, didReceiveRemoteNotification: payload, fetchCompletionHandler: { _ in completion.finish() })
        }
        if fetchImplemented {
            notificationCenter.post(DidReceiveRemoteNotificationMessage(payload: payload), object: self)
            return
        }
        completion.finishNow()
        guard plainAllowed, !wasSuspended else {
            if plainAllowed { logger.info("remote notification not delivered: the app was suspended") }
            return
        }
        deliver(DidReceiveRemoteNotificationMessage(payload: payload), "application(_:didReceiveRemoteNotification:)") {
            delegate.application(self, didReceiveRemoteNotification: payload)
        }
    }

    func performShortcut(_ item: ShortcutItem) {
        let completion = beginCompletion("quick action")
        let (_, implemented) = invoke("application(_:performActionFor:completionHandler:)") {
            delegate.application(self, performActionFor: item) { _ in completion.finish() }
        }
        if !implemented { completion.finishNow() }
        notificationCenter.post(PerformActionForShortcutItemMessage(shortcutItem: item), object: self)
    }

    // MARK: Geometry

    func changeStatusBarOrientation(to orientation: InterfaceOrientation, duration: Double) {
        deliver(
            WillChangeStatusBarOrientationMessage(orientation: orientation),
            "application(_:willChangeStatusBarOrientation:duration:)"
        ) {
            delegate.application(self, willChangeStatusBarOrientation: orientation, duration: duration)
        }
        let previous = statusBarOrientation
        statusBarOrientation = orientation
        deliver(
            DidChangeStatusBarOrientationMessage(previousOrientation: previous),
            "application(_:didChangeStatusBarOrientation:)"
        ) {
            delegate.application(self, didChangeStatusBarOrientation: previous)
        }
    }

    func changeStatusBarFrame(to frame: Rect) {
        deliver(WillChangeStatusBarFrameMessage(frame: frame), "application(_:willChangeStatusBarFrame:)") {
            delegate.application(self, willChangeStatusBarFrame: frame)
        }
        let previous = statusBarFrame
        statusBarFrame = frame
        deliver(DidChangeStatusBarFrameMessage(previousFrame: previous), "application(_:didChangeStatusBarFrame:)") {
            delegate.application(self, didChangeStatusBarFrame: previous)
        }
    }
}
