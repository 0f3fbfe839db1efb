/// A set of interface orientations (`UIInterfaceOrientationMask`).
public struct InterfaceOrientationMask: OptionSet, Sendable, Hashable, Codable {
    /// The bits.
    public var rawValue: UInt
    /// Creates a mask from its bits.
    ///
    /// - Parameters:
    ///   - rawValue: The bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// Upright.
    public static let portrait = InterfaceOrientationMask(rawValue: 1 << 1)
    /// Upside down.
    public static let portraitUpsideDown = InterfaceOrientationMask(rawValue: 1 << 2)
    /// ``InterfaceOrientation/landscapeRight``: the device's right edge up.
    public static let landscapeRight = InterfaceOrientationMask(rawValue: 1 << 3)
    /// ``InterfaceOrientation/landscapeLeft``: the device's left edge up.
    public static let landscapeLeft = InterfaceOrientationMask(rawValue: 1 << 4)
    /// Both landscape orientations.
    public static let landscape: InterfaceOrientationMask = [.landscapeLeft, .landscapeRight]
    /// Every orientation.
    public static let all: InterfaceOrientationMask = [.portrait, .portraitUpsideDown, .landscapeLeft, .landscapeRight]
    /// Every orientation but upside down (UIKit's default on phones).
    public static let allButUpsideDown: InterfaceOrientationMask = [.portrait, .landscapeLeft, .landscapeRight]
}
