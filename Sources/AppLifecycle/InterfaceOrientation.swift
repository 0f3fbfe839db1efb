/// The orientation of the app's user interface (`UIInterfaceOrientation`).
///
/// On Linux it follows the output's transform (`wl_output` transform, XRandR rotation) of
/// the display the app is on, or the accelerometer (``init(sensorOrientation:)``); hosts without
/// that information report ``portrait``.
///
/// As in UIKit, a landscape interface orientation is named for the side the device's bottom edge
/// (an iPhone's home button) is on, which is the opposite of the device orientation of the same
/// name: ``landscapeLeft`` is the device turned a quarter clockwise (its left edge up).
public enum InterfaceOrientation: Int, Sendable, Hashable, Codable, CaseIterable {
    /// The orientation is not known.
    case unknown = 0
    /// Upright: the device's top edge is up.
    case portrait = 1
    /// Upside down: the device's bottom edge is up.
    case portraitUpsideDown = 2
    /// The device is turned a quarter clockwise: its left edge is up and its bottom edge on the
    /// left (`UIInterfaceOrientationLandscapeLeft`, which is `UIDeviceOrientationLandscapeRight`).
    case landscapeLeft = 4
    /// The device is turned a quarter counter-clockwise: its right edge is up and its bottom edge
    /// on the right (`UIInterfaceOrientationLandscapeRight`, which is `UIDeviceOrientationLandscapeLeft`).
    case landscapeRight = 3
}
