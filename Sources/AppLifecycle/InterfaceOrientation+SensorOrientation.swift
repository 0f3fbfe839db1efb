extension InterfaceOrientation {
    /// The interface orientation for a reading of iio-sensor-proxy's `AccelerometerOrientation`,
    /// or `nil` for `undefined` (the device lies flat, or the sensor has no reading yet) and for
    /// any other string.
    ///
    /// iio-sensor-proxy names which edge of the display is up, as the display is mounted
    /// (`left-up`: its left edge). UIKit's landscape interface orientations are the device's turned
    /// the other way (`UIInterfaceOrientationLandscapeLeft` is `UIDeviceOrientationLandscapeRight`),
    /// so the names line up: `left-up` is ``landscapeLeft`` and `right-up` is ``landscapeRight``
    /// (see <doc:DeviceConditions>).
    ///
    /// | `AccelerometerOrientation` | device | interface orientation |
    /// | --- | --- | --- |
    /// | `normal` | upright | ``portrait`` |
    /// | `bottom-up` | upside down | ``portraitUpsideDown`` |
    /// | `left-up` | turned a quarter clockwise: left edge up, bottom edge on the left | ``landscapeLeft`` |
    /// | `right-up` | turned a quarter counter-clockwise: right edge up, bottom edge on the right | ``landscapeRight`` |
    /// | `undefined` | flat, or no reading | `nil` |
    ///
    /// - Parameters:
    ///   - sensorOrientation: The property's string value.
    public init?(sensorOrientation: String) {
        switch sensorOrientation {
        case "normal": self = .portrait
        case "bottom-up": self = .portraitUpsideDown
        case "left-up": self = .landscapeLeft
        case "right-up": self = .landscapeRight
        default: return nil
        }
    }
}
