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
    /// Top on the right.
    public static let landscapeRight = InterfaceOrientationMask(rawValue: 1 << 3)
    /// Top on the left.
    public static let landscapeLeft = InterfaceOrientationMask(rawValue: 1 << 4)
    /// Both landscape orientations.
    public static let landscape: InterfaceOrientationMask = [.landscapeLeft, .landscapeRight]
    /// Every orientation.
    public static let all: InterfaceOrientationMask = [.portrait, .portraitUpsideDown, .landscapeLeft, .landscapeRight]
    /// Every orientation but upside down (UIKit's default on phones).
    public static let allButUpsideDown: InterfaceOrientationMask = [.portrait, .landscapeLeft, .landscapeRight]
}

/// A rectangle in screen coordinates (the Linux stand-in for `CGRect` in status-bar callbacks).
public struct Rect: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The left edge.
    public var x: Double
    /// The top edge.
    public var y: Double
    /// The width.
    public var width: Double
    /// The height.
    public var height: Double

    /// Creates a rectangle.
    ///
    /// - Parameters:
    ///   - x: The left edge.
    ///   - y: The top edge.
    ///   - width: The width.
    ///   - height: The height.
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The empty rectangle at the origin.
    public static let zero = Rect(x: 0, y: 0, width: 0, height: 0)

    /// The rectangle as a property-list dictionary (`x`, `y`, `width`, `height`).
    public var propertyList: UserInfoValue {
        ["x": .double(x), "y": .double(y), "width": .double(width), "height": .double(height)]
    }

    /// Reads a rectangle from its property-list form.
    ///
    /// - Parameters:
    ///   - propertyList: A dictionary with numeric `x`, `y`, `width` and `height`.
    public init?(propertyList: UserInfoValue) {
        guard let entries = propertyList.dictionaryValue,
              let x = entries["x"]?.doubleValue, let y = entries["y"]?.doubleValue,
              let width = entries["width"]?.doubleValue, let height = entries["height"]?.doubleValue
        else { return nil }
        self.init(x: x, y: y, width: width, height: height)
    }

    /// `{{x, y}, {width, height}}`, like `NSStringFromCGRect`.
    public var description: String { "{{\(x), \(y)}, {\(width), \(height)}}" }
}
