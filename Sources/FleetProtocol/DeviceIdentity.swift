internal import CSystemd

/// The device's id in the fleet: stable across reboots and reinstalls of the app, yet not the
/// machine id itself.
///
/// ``derived(applicationID:)`` asks libsystemd for `sd_id128_get_machine_app_specific`: an HMAC
/// of `/etc/machine-id` keyed by an application id, so the raw machine id never leaves the host
/// and two applications' ids for one machine cannot be correlated.
public enum DeviceIdentity {
    /// AppLifecycle's fleet application id (a constant random 128-bit value: generated once with
    /// `systemd-id128 new`, never to change, or every device gets a new identity).
    public static let fleetApplicationID = "eff4a4bf0ea442bb89ca0554841c4359"

    /// Derives the device id for an application id.
    ///
    /// - Parameters:
    ///   - applicationID: The application's 128-bit id as 32 hex digits (dashes allowed, as
    ///     `systemd-id128` prints them); ``fleetApplicationID`` by default.
    /// - Returns: 32 lowercase hex digits.
    /// - Throws: ``FleetProtocolError`` with ``FleetProtocolError/Code/invalidArgument`` for a malformed
    ///   application id, or ``FleetProtocolError/Code/identity`` if libsystemd fails (no machine id).
    public static func derived(applicationID: String = fleetApplicationID) throws -> String {
        let digits = Array(applicationID.utf8.filter { $0 != UInt8(ascii: "-") })
        guard digits.count == 32, let bytes = hexBytes(digits) else {
            throw FleetProtocolError(.invalidArgument, "the application id must be 32 hex digits")
        }
        var app = sd_id128_t()
        withUnsafeMutableBytes(of: &app) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        var result = sd_id128_t()
        let r = sd_id128_get_machine_app_specific(app, &result)
        guard r >= 0 else {
            throw FleetProtocolError(
                .identity, "cannot derive the device id: is /etc/machine-id set up (systemd-machine-id-setup)?",
                errno: -r)
        }
        let hex: [Character] = Array("0123456789abcdef")
        return withUnsafeBytes(of: &result) { raw in
            String(raw.flatMap { [hex[Int($0 >> 4)], hex[Int($0 & 0xf)]] })
        }
    }

    /// Whether `id` can name a device in the fleet's topics: 1–64 characters from
    /// `[A-Za-z0-9._-]` (so never `+`, `#`, `/` or NUL), and not `.` or `..`.
    ///
    /// - Parameters:
    ///   - id: The candidate device id.
    public static func isValid(_ id: String) -> Bool {
        let bytes = id.utf8
        guard (1...64).contains(bytes.count), id != ".", id != ".." else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                true
            default:
                false
            }
        }
    }

    private static func hexBytes(_ digits: [UInt8]) -> [UInt8]? {
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}
