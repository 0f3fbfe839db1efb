import FoundationEssentials

/// Why and how the app was launched: the launch-options dictionary of
/// `application(_:willFinishLaunchingWithOptions:)` and `application(_:didFinishLaunchingWithOptions:)`.
///
/// Keys are UIKit's raw strings; the same dictionary is the userInfo of
/// `UIApplicationDidFinishLaunchingNotification`. The Linux host adds its own keys
/// (``Key/triggerUnit``, ``Key/triggerPath``, ``Key/listenFileDescriptorNames``,
/// ``Key/arguments``) to say why a unit-started app was launched.
public struct LaunchOptions: Sendable, Hashable, Codable, ExpressibleByDictionaryLiteral {
    /// A launch-options key with UIKit's raw string.
    public struct Key: RawRepresentable, Sendable, Hashable, Codable, ExpressibleByStringLiteral {
        /// The raw key string.
        public var rawValue: String
        /// Creates a key from its raw string.
        ///
        /// - Parameters:
        ///   - rawValue: The raw key string.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Creates a key from a literal.
        ///
        /// - Parameters:
        ///   - value: The raw key string.
        public init(stringLiteral value: String) { self.rawValue = value }

        /// The app was launched to open this URL (a string).
        public static let url: Key = "UIApplicationLaunchOptionsURLKey"
        /// The identifier of the app that asked for the launch (a string).
        public static let sourceApplication: Key = "UIApplicationLaunchOptionsSourceApplicationKey"
        /// A property-list value the asking app sent along with the URL.
        public static let annotation: Key = "UIApplicationLaunchOptionsAnnotationKey"
        /// The payload of the remote notification the app was launched for (a dictionary).
        public static let remoteNotification: Key = "UIApplicationLaunchOptionsRemoteNotificationKey"
        /// The local notification the app was launched for (its property-list form).
        public static let localNotification: Key = "UIApplicationLaunchOptionsLocalNotificationKey"
        /// The app was launched for a location event (a Boolean).
        public static let location: Key = "UIApplicationLaunchOptionsLocationKey"
        /// Identifiers of newly downloaded Newsstand assets (an array of strings).
        public static let newsstandDownloads: Key = "UIApplicationLaunchOptionsNewsstandDownloadsKey"
        /// Restoration identifiers of Bluetooth central managers (an array of strings).
        public static let bluetoothCentrals: Key = "UIApplicationLaunchOptionsBluetoothCentralsKey"
        /// Restoration identifiers of Bluetooth peripheral managers (an array of strings).
        public static let bluetoothPeripherals: Key = "UIApplicationLaunchOptionsBluetoothPeripheralsKey"
        /// The quick action the app was launched for (a dictionary: `type`, `localizedTitle`, …).
        public static let shortcutItem: Key = "UIApplicationLaunchOptionsShortcutItemKey"
        /// The type of the user activity the app was launched to continue (a string).
        public static let userActivityType: Key = "UIApplicationLaunchOptionsUserActivityTypeKey"
        /// Linux: the systemd unit whose activation started the app (`$TRIGGER_UNIT`).
        public static let triggerUnit: Key = "ApplicationLaunchOptionsTriggerUnitKey"
        /// Linux: the path whose change started the app through a `.path` unit (`$TRIGGER_PATH`).
        public static let triggerPath: Key = "ApplicationLaunchOptionsTriggerPathKey"
        /// Linux: the names of the sockets systemd passed (`$LISTEN_FDNAMES`, one per fd of `$LISTEN_FDS`).
        public static let listenFileDescriptorNames: Key = "ApplicationLaunchOptionsListenFileDescriptorNamesKey"
        /// Linux: the command-line arguments after the executable (an array of strings).
        public static let arguments: Key = "ApplicationLaunchOptionsArgumentsKey"
        /// Linux: the XDG activation token (Wayland `xdg-activation`, or an X11 startup id) of the
        /// click that launched the app (a string; also in `$XDG_ACTIVATION_TOKEN`), for the
        /// compositor to give its window focus.
        public static let activationToken: Key = "ApplicationLaunchOptionsActivationTokenKey"
        /// Linux: the app was started by D-Bus activation of its id (a Boolean): a launcher's
        /// `org.freedesktop.Application` call is on its way, and the host folds it into these
        /// options (``activationToken``, ``url``, ``shortcutItem``) before the launch.
        public static let dbusActivation: Key = "ApplicationLaunchOptionsDBusActivationKey"
        /// Linux: the app was launched into the background (a Boolean).
        public static let launchedInBackground: Key = "ApplicationLaunchOptionsLaunchedInBackgroundKey"
    }

    /// The entries, under their raw key strings (this is the DidFinishLaunching notification's userInfo).
    public var userInfo: UserInfo

    /// Creates launch options from a userInfo with raw keys.
    ///
    /// - Parameters:
    ///   - userInfo: The entries.
    public init(userInfo: UserInfo = UserInfo()) { self.userInfo = userInfo }

    /// Creates launch options from a literal.
    ///
    /// - Parameters:
    ///   - elements: Key-value pairs.
    public init(dictionaryLiteral elements: (Key, UserInfoValue)...) {
        var info = UserInfo()
        for (key, value) in elements { info[key] = value }
        self.userInfo = info
    }

    /// The value for a key; assigning `nil` removes it.
    public subscript(key: Key) -> UserInfoValue? {
        get { userInfo[key] }
        set { userInfo[key] = newValue }
    }

    /// Whether there are no options (the user launched the app directly).
    public var isEmpty: Bool { userInfo.isEmpty }

    /// The URL the app was launched to open.
    public var url: URL? {
        get { userInfo[Key.url]?.stringValue.flatMap(URL.init(string:)) }
        set { userInfo[Key.url] = newValue.map { .string($0.absoluteString) } }
    }

    /// The identifier of the app that asked for the launch.
    public var sourceApplication: String? {
        get { userInfo[Key.sourceApplication]?.stringValue }
        set { userInfo[Key.sourceApplication] = newValue.map(UserInfoValue.string) }
    }

    /// The property-list value sent along with the URL.
    public var annotation: UserInfoValue? {
        get { userInfo[Key.annotation] }
        set { userInfo[Key.annotation] = newValue }
    }

    /// The remote-notification payload the app was launched for.
    public var remoteNotification: UserInfo? {
        get { userInfo[Key.remoteNotification]?.dictionaryValue.map(UserInfo.init) }
        set { userInfo[Key.remoteNotification] = newValue.map { .dictionary($0.values) } }
    }

    /// The local notification the app was launched for.
    public var localNotification: LocalNotification? {
        get { userInfo[Key.localNotification].flatMap(LocalNotification.init(propertyList:)) }
        set { userInfo[Key.localNotification] = newValue?.propertyList }
    }

    /// Whether the app was launched for a location event.
    public var location: Bool {
        get { userInfo[Key.location]?.boolValue ?? false }
        set { userInfo[Key.location] = newValue ? .bool(true) : nil }
    }

    /// Identifiers of newly downloaded Newsstand assets.
    public var newsstandDownloads: [String]? {
        get { Self.strings(userInfo[Key.newsstandDownloads]) }
        set { userInfo[Key.newsstandDownloads] = newValue.map { .array($0.map(UserInfoValue.string)) } }
    }

    /// Restoration identifiers of Bluetooth central managers.
    public var bluetoothCentrals: [String]? {
        get { Self.strings(userInfo[Key.bluetoothCentrals]) }
        set { userInfo[Key.bluetoothCentrals] = newValue.map { .array($0.map(UserInfoValue.string)) } }
    }

    /// Restoration identifiers of Bluetooth peripheral managers.
    public var bluetoothPeripherals: [String]? {
        get { Self.strings(userInfo[Key.bluetoothPeripherals]) }
        set { userInfo[Key.bluetoothPeripherals] = newValue.map { .array($0.map(UserInfoValue.string)) } }
    }

    /// The quick action the app was launched for.
    public var shortcutItem: ShortcutItem? {
        get {
            guard let entries = userInfo[Key.shortcutItem]?.dictionaryValue,
                let type = entries["type"]?.stringValue
            else { return nil }
            return ShortcutItem(
                type: type, localizedTitle: entries["localizedTitle"]?.stringValue ?? type,
                localizedSubtitle: entries["localizedSubtitle"]?.stringValue,
                userInfo: UserInfo(entries["userInfo"]?.dictionaryValue ?? [:]))
        }
        set {
            userInfo[Key.shortcutItem] = newValue.map { item in
                var entries: [String: UserInfoValue] = [
                    "type": .string(item.type), "localizedTitle": .string(item.localizedTitle),
                    "userInfo": .dictionary(item.userInfo.values),
                ]
                if let subtitle = item.localizedSubtitle { entries["localizedSubtitle"] = .string(subtitle) }
                return .dictionary(entries)
            }
        }
    }

    /// Linux: the systemd unit whose activation started the app.
    public var triggerUnit: String? {
        get { userInfo[Key.triggerUnit]?.stringValue }
        set { userInfo[Key.triggerUnit] = newValue.map(UserInfoValue.string) }
    }

    /// Linux: the path whose change started the app.
    public var triggerPath: String? {
        get { userInfo[Key.triggerPath]?.stringValue }
        set { userInfo[Key.triggerPath] = newValue.map(UserInfoValue.string) }
    }

    /// Linux: the names of the sockets systemd passed.
    public var listenFileDescriptorNames: [String]? {
        get { Self.strings(userInfo[Key.listenFileDescriptorNames]) }
        set { userInfo[Key.listenFileDescriptorNames] = newValue.map { .array($0.map(UserInfoValue.string)) } }
    }

    /// Linux: the command-line arguments after the executable.
    public var arguments: [String]? {
        get { Self.strings(userInfo[Key.arguments]) }
        set { userInfo[Key.arguments] = newValue.map { .array($0.map(UserInfoValue.string)) } }
    }

    /// Linux: whether the app was launched into the background.
    public var launchedInBackground: Bool {
        get { userInfo[Key.launchedInBackground]?.boolValue ?? false }
        set { userInfo[Key.launchedInBackground] = newValue ? .bool(true) : nil }
    }

    /// Reads the Linux launch reasons a service manager leaves in the environment.
    ///
    /// `$TRIGGER_UNIT` and `$TRIGGER_PATH` (set by systemd for units started by a `.path`,
    /// `.timer` or other trigger) and `$LISTEN_FDS`/`$LISTEN_FDNAMES` (socket activation; the
    /// names are taken only when `$LISTEN_PID` is this process and the count matches), and the
    /// command line after the executable as ``Key/arguments`` (``arguments``) when there is any:
    /// what a unit's `ExecStart=` or a manifest's `arguments` passed. Both hosts launch with these.
    /// Malformed values are ignored.
    ///
    /// - Parameters:
    ///   - environment: The environment to read.
    ///   - processID: The process's id, compared with `$LISTEN_PID`.
    ///   - arguments: The command-line arguments after the executable.
    public static func fromServiceManager(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        processID: Int32 = ProcessInfo.processInfo.processIdentifier,
        arguments: [String] = Array(CommandLine.arguments.dropFirst())
    ) -> LaunchOptions {
        var options = LaunchOptions()
        if !arguments.isEmpty { options.arguments = arguments }
        if let unit = environment["TRIGGER_UNIT"], !unit.isEmpty { options.triggerUnit = unit }
        if let path = environment["TRIGGER_PATH"], path.hasPrefix("/") { options.triggerPath = path }
        if let pid = environment["LISTEN_PID"].flatMap(Int32.init), pid == processID,
            let count = environment["LISTEN_FDS"].flatMap(Int.init), count > 0, count < 4096
        {
            let names = environment["LISTEN_FDNAMES"]?.split(separator: ":", omittingEmptySubsequences: false).map(
                String.init)
            options.listenFileDescriptorNames =
                (names?.count == count) ? names : Array(repeating: "unknown", count: count)
        }
        return options
    }

    private static func strings(_ value: UserInfoValue?) -> [String]? {
        value?.arrayValue?.compactMap(\.stringValue)
    }
}
