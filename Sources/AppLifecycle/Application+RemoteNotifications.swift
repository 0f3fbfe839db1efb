import FoundationEssentials

extension Application {
    /// Registers the app for remote (push) notifications (`registerForRemoteNotifications()`).
    ///
    /// The host asks the push distributor for an endpoint (UnifiedPush on the session bus) and
    /// answers with `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`, whose
    /// token ``RemoteNotificationDeviceToken`` decodes, or with
    /// `application(_:didFailToRegisterForRemoteNotificationsWithError:)` and an
    /// ``ApplicationError`` (``ApplicationError/Code/noPushDistributor``,
    /// ``ApplicationError/Code/pushNetworkUnavailable``, …). Call it on every launch, as on iOS:
    /// the token stays the same while the distributor keeps the endpoint, and a changed endpoint
    /// calls `didRegister…` again by itself.
    public func registerForRemoteNotifications() {
        host.registerForRemoteNotifications(self)
    }

    /// Unregisters the app from remote notifications (`unregisterForRemoteNotifications()`): the
    /// distributor drops the endpoint, so the app's server's pushes are refused from then on.
    public func unregisterForRemoteNotifications() {
        remoteNotificationsRegistered = false
        host.unregisterForRemoteNotifications(self)
    }

    /// Whether the app holds a push registration (`isRegisteredForRemoteNotifications`): `true`
    /// after `didRegister…`, and from launch on when the app's push connector kept an endpoint
    /// from an earlier run (as iOS keeps the registration across launches); `false` after a
    /// failure, ``unregisterForRemoteNotifications()``, or the distributor dropping the registration.
    public var isRegisteredForRemoteNotifications: Bool { remoteNotificationsRegistered }

    /// The host's push connector found a registration kept from an earlier run (an endpoint in its
    /// state file): ``isRegisteredForRemoteNotifications`` is `true` without a callback, until the
    /// app unregisters or the distributor drops it.
    package func restoreRemoteNotificationRegistration() {
        remoteNotificationsRegistered = true
    }

    /// What iOS does with a payload's `aps` dictionary before the app sees it: `badge` sets the
    /// badge, and an `alert` is shown as a banner unless the app is active (an active app gets
    /// only the callback).
    ///
    /// - `badge`: the seeds (`application:didReceiveRemoteNotification:`): "badge—A number
    ///   indicating the quantity of data items to download from the provider. This number is to
    ///   be displayed on the app icon. The absence of a badge property indicates that any number
    ///   currently badging the icon should be removed." So a payload with an `aps` dictionary and
    ///   no `badge` clears the badge; one that is not a non-negative integer leaves it (and is
    ///   logged); a payload without `aps` (the app's own data) changes nothing.
    /// - `alert` is a string (the body) or a dictionary with `title`, `body`, `action` and
    ///   `show-view` ("If the value of the show-view key is false, the alert's View button is not
    ///   shown": the banner then has no default action, so a click does not open the app);
    ///   `sound` names the banner's sound; `category` names a category registered with
    ///   ``registerUserNotificationSettings(_:)``, whose actions become the banner's buttons (one
    ///   that was not registered shows the banner without them, and is logged).
    ///
    /// The banner is the host's (``ApplicationHost/application(_:presentRemoteNotification:banner:actions:)``):
    /// a click on it is ``HostEvent/remoteNotificationOpened(_:)`` (or a launch with
    /// ``LaunchOptions/remoteNotification``), a button ``HostEvent/remoteNotificationAction(identifier:payload:)``.
    func presentRemoteNotification(_ payload: UserInfo) {
        guard let aps = payload["aps"]?.dictionaryValue else { return }
        if let value = aps["badge"] {
            if let badge = value.intValue, let number = Int(exactly: badge), number >= 0 {
                applicationIconBadgeNumber = number
            } else {
                logger.info("remote notification: aps.badge \(value) is not a non-negative integer; badge unchanged")
            }
        } else {
            applicationIconBadgeNumber = 0
        }
        guard applicationState != .active, let alert = aps["alert"] else { return }
        var title: String?
        var body: String?
        var action: String?
        var showView = true
        switch alert {
        case .string(let text):
            body = text
        case .dictionary(let fields):
            title = fields["title"]?.stringValue
            body = fields["body"]?.stringValue
            action = fields["action"]?.stringValue
            showView = fields["show-view"]?.boolValue ?? true
        default:
            return
        }
        guard title != nil || body != nil else { return }
        var actions: [UserNotificationAction] = []
        var category = aps["category"]?.stringValue
        if let name = category {
            if let registered = currentUserNotificationSettings?.category(name) {
                actions = registered.actions
            } else {
                logger.info(
                    "remote notification: aps.category '\(name.prefix(64))' was not registered with registerUserNotificationSettings(_:); the banner has no actions"
                )
                category = nil
            }
        }
        let banner = LocalNotification(
            identifier: "remote-" + (payload["id"]?.stringValue ?? UUID().uuidString), alertTitle: title,
            alertBody: body, alertAction: action, hasAction: showView, soundName: aps["sound"]?.stringValue,
            category: category, userInfo: payload)
        host.application(self, presentRemoteNotification: payload, banner: banner, actions: actions)
    }
}
