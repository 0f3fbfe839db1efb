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
    /// after `didRegister…`, `false` after a failure, ``unregisterForRemoteNotifications()``, or
    /// the distributor dropping the registration.
    public var isRegisteredForRemoteNotifications: Bool { remoteNotificationsRegistered }

    /// What iOS does with a payload's `aps` dictionary before the app sees it: `badge` sets the
    /// badge, and an `alert` is shown as a banner unless the app is active (an active app gets
    /// only the callback).
    ///
    /// `alert` is a string (the body) or a dictionary with `title`, `body` and `action`;
    /// `sound` names the banner's sound.
    func presentRemoteNotification(_ payload: UserInfo) {
        guard let aps = payload["aps"]?.dictionaryValue else { return }
        if let badge = aps["badge"]?.intValue, let number = Int(exactly: badge), number >= 0 {
            applicationIconBadgeNumber = number
        }
        guard applicationState != .active, let alert = aps["alert"] else { return }
        var title: String?
        var body: String?
        var action: String?
        switch alert {
        case .string(let text):
            body = text
        case .dictionary(let fields):
            title = fields["title"]?.stringValue
            body = fields["body"]?.stringValue
            action = fields["action"]?.stringValue
        default:
            return
        }
        guard title != nil || body != nil else { return }
        let banner = LocalNotification(
            identifier: "remote-" + (payload["id"]?.stringValue ?? UUID().uuidString), alertTitle: title,
            alertBody: body, alertAction: action, soundName: aps["sound"]?.stringValue, userInfo: payload)
        host.application(self, present: banner)
    }
}
