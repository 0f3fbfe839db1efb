/// Which edge of the screen is up, as iio-sensor-proxy's accelerometer says
/// (`AccelerometerOrientation`).
///
/// The raw values are the sensor's strings. The sensor reports only while someone claims it
/// (``DeviceConditionsMonitor/claimAccelerometer()``); mapping these to an app's interface
/// orientation is the host's job.
public enum DeviceOrientation: String, Sendable, Hashable, Codable, CaseIterable {
    /// The sensor cannot tell (the device lies flat, or it has just been claimed).
    case undefined
    /// The screen's natural orientation: its top edge up.
    case normal
    /// Upside down: the screen's bottom edge up.
    case bottomUp = "bottom-up"
    /// Turned so that the screen's left edge is up.
    case leftUp = "left-up"
    /// Turned so that the screen's right edge is up.
    case rightUp = "right-up"
}
