/// The userInfo keys of the lifecycle notifications that carry a payload.
///
/// UIKit's own keys keep UIKit's raw strings; keys UIKit has no counterpart for are named in
/// the same style without the `UI` prefix.
public enum ApplicationUserInfoKey {
    /// The new (will-change) or old (did-change) status-bar orientation, as its raw `Int`.
    public static let statusBarOrientation = "UIApplicationStatusBarOrientationUserInfoKey"
    /// The new (will-change) or old (did-change) status-bar frame (`x`, `y`, `width`, `height`).
    public static let statusBarFrame = "UIApplicationStatusBarFrameUserInfoKey"
    /// The memory warning's level: `"low"`, `"medium"` or `"critical"`.
    public static let memoryWarningLevel = "ApplicationMemoryWarningLevelKey"
    /// Which source reported the memory warning (`"psi"`, `"memory-pressure-watch"`, `"low-memory-monitor"`, …).
    public static let memoryWarningSource = "ApplicationMemoryWarningSourceKey"
    /// Why the time changed: `"clock-set"`, `"timezone"`, `"midnight"` or `"dst"`.
    public static let significantTimeChangeReason = "ApplicationSignificantTimeChangeReasonKey"
    /// The time zone identifier in force after a time change, when known.
    public static let timeZone = "ApplicationTimeZoneKey"
    /// The state before a state change.
    public static let previousState = "ApplicationPreviousStateKey"
    /// The state after a state change.
    public static let state = "ApplicationStateKey"
    /// A URL, as a string.
    public static let url = "ApplicationURLKey"
    /// Whether the delegate handled a URL, or its answer to a question callback (a Boolean).
    public static let result = "ApplicationDelegateResultKey"
    /// A remote notification's device token (bytes).
    public static let deviceToken = "ApplicationDeviceTokenKey"
    /// An error's code.
    public static let errorCode = "ApplicationErrorCodeKey"
    /// An error's message.
    public static let errorMessage = "ApplicationErrorMessageKey"
    /// A remote notification's payload (a dictionary).
    public static let remoteNotification = "ApplicationRemoteNotificationKey"
    /// A local notification (its property-list form).
    public static let localNotification = "ApplicationLocalNotificationKey"
    /// The registered notification settings: `types` (an integer of ``UserNotificationType`` bits)
    /// and `categories` (an array of `identifier`, `actions`).
    public static let userNotificationSettings = "ApplicationUserNotificationSettingsKey"
    /// A notification action's identifier.
    public static let actionIdentifier = "ApplicationActionIdentifierKey"
    /// A background URL session's identifier.
    public static let urlSessionIdentifier = "ApplicationURLSessionIdentifierKey"
    /// A user activity's type.
    public static let userActivityType = "ApplicationUserActivityTypeKey"
    /// A user activity's title.
    public static let userActivityTitle = "ApplicationUserActivityTitleKey"
    /// A user activity's web page URL.
    public static let userActivityWebpageURL = "ApplicationUserActivityWebpageURLKey"
    /// A user activity's data.
    public static let userActivityUserInfo = "ApplicationUserActivityUserInfoKey"
    /// A quick action (a dictionary: `type`, `localizedTitle`, `localizedSubtitle`, `userInfo`).
    public static let shortcutItem = "ApplicationShortcutItemKey"
    /// Restorable objects' identifier paths (an array of arrays of strings).
    public static let restorableObjectPaths = "ApplicationRestorableObjectPathsKey"
    /// A restorable object's identifier path (an array of strings).
    public static let identifierPath = "ApplicationRestorationIdentifierPathKey"
    /// An extension point identifier.
    public static let extensionPointIdentifier = "ApplicationExtensionPointIdentifierKey"
    /// A window's identifier.
    public static let window = "ApplicationWindowKey"
    /// Supported interface orientations, as the mask's raw value.
    public static let interfaceOrientations = "ApplicationInterfaceOrientationsKey"
    /// A background fetch's result: `"newData"`, `"noData"` or `"failed"`.
    public static let fetchResult = "ApplicationFetchResultKey"
}
