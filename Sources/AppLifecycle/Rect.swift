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
