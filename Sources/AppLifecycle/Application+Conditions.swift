import FoundationEssentials

/// The values of the device's conditions the app was last told of, to post only real changes.
struct AnnouncedConditions {
    var isLowPowerModeEnabled = false
    var thermalState = ThermalState.nominal
    var backgroundRefreshStatus = BackgroundRefreshStatus.available
}

extension Application {
    // MARK: The device's conditions

    /// Records a condition the host reported before launch: the app starts with it and is not told
    /// of a change (it reads the property when it launches, as an iOS app does).
    func recordConditionBeforeLaunch(_ event: HostEvent) {
        switch event {
        case .lowPowerMode(let enabled):
            isLowPowerModeEnabled = enabled
            announcedConditions.isLowPowerModeEnabled = enabled
        case .thermalState(let state):
            thermalState = state
            announcedConditions.thermalState = state
        case .backgroundRefreshStatus(let status):
            backgroundRefreshStatus = status
            announcedConditions.backgroundRefreshStatus = status
        default:
            break
        }
    }

    /// Records a condition the host reported and, unless the app is suspended, posts what changed.
    ///
    /// The property always holds the host's latest value. A suspended app is told on its return to
    /// the foreground, once per condition whose value differs from the one it was last told of.
    func updateCondition(_ event: HostEvent) {
        switch event {
        case .lowPowerMode(let enabled): isLowPowerModeEnabled = enabled
        case .thermalState(let state): thermalState = state
        case .backgroundRefreshStatus(let status): backgroundRefreshStatus = status
        default: return
        }
        if applicationState.isRunningCode { announceConditionChanges() }
    }

    /// Posts a did-change notification for each condition that differs from what the app was last
    /// told: power state, then thermal state, then background refresh status.
    func announceConditionChanges() {
        if announcedConditions.isLowPowerModeEnabled != isLowPowerModeEnabled {
            announcedConditions.isLowPowerModeEnabled = isLowPowerModeEnabled
            notificationCenter.post(PowerStateDidChangeMessage(), object: self)
        }
        if announcedConditions.thermalState != thermalState {
            announcedConditions.thermalState = thermalState
            notificationCenter.post(ThermalStateDidChangeMessage(), object: self)
        }
        if announcedConditions.backgroundRefreshStatus != backgroundRefreshStatus {
            announcedConditions.backgroundRefreshStatus = backgroundRefreshStatus
            notificationCenter.post(BackgroundRefreshStatusDidChangeMessage(), object: self)
        }
    }

    /// What a suspended app was not told, delivered once it is in the foreground again: the latest
    /// significant time change, the conditions that changed, then the latest status-bar orientation.
    func deliverWhatWaitedForTheForeground() {
        guard applicationState.isForeground else { return }
        deliverPendingTimeChange()
        announceConditionChanges()
        applyPendingStatusBarOrientation()
    }

    // MARK: Orientation

    /// Applies the latest status-bar orientation the host reported, if it is a change and one of
    /// the orientations the app supports (``supportedInterfaceOrientations(for:)`` for the
    /// delegate's window); otherwise the status bar stays as it is.
    func applyPendingStatusBarOrientation() {
        guard let (orientation, duration) = pendingStatusBarOrientation else { return }
        pendingStatusBarOrientation = nil
        guard orientation != statusBarOrientation else { return }
        let supported = supportedInterfaceOrientations(for: delegate.window)
        guard supported.includes(orientation) else {
            logger.info(
                "status-bar orientation \(orientation) not applied: the app supports mask \(supported.rawValue)")
            return
        }
        changeStatusBarOrientation(to: orientation, duration: duration)
    }
}

extension InterfaceOrientationMask {
    /// Whether the mask has the orientation's bit (`1 << rawValue`, as UIKit builds its masks);
    /// never ``InterfaceOrientation/unknown``, which no app supports.
    func includes(_ orientation: InterfaceOrientation) -> Bool {
        orientation != .unknown && contains(InterfaceOrientationMask(rawValue: 1 << UInt(orientation.rawValue)))
    }
}
