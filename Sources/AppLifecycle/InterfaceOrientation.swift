/// The orientation of the app's user interface (`UIInterfaceOrientation`).
///
/// On Linux it follows the output's transform (`wl_output` transform, XRandR rotation) of
/// the display the app is on; hosts without that information report ``portrait``.
public enum InterfaceOrientation: Int, Sendable, Hashable, Codable, CaseIterable {
    /// The orientation is not known.
    case unknown = 0
    /// Upright.
    case portrait = 1
    /// Upside down.
    case portraitUpsideDown = 2
    /// Rotated so that the top is on the left.
    case landscapeLeft = 4
    /// Rotated so that the top is on the right.
    case landscapeRight = 3
}
