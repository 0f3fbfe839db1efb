/// How far the device's network reaches, as NetworkManager's `Connectivity` says.
///
/// A fetch waits for ``full``. The raw values are the names NetworkManager's `nmcli` prints.
public enum NetworkConnectivity: String, Sendable, Hashable, Codable, CaseIterable {
    /// NetworkManager has not checked (or cannot: connectivity checking is off).
    case unknown
    /// No network connection at all.
    case none
    /// A captive portal intercepts traffic until the user logs in.
    case portal
    /// Connected, but the internet is not reachable.
    case limited
    /// Connected, and the internet is reachable.
    case full

    /// The value for NetworkManager's `NMConnectivityState` (0 unknown, 1 none, 2 portal, 3 limited,
    /// 4 full), or `nil` for any other number.
    ///
    /// - Parameters:
    ///   - networkManagerValue: The `Connectivity` property (`u`).
    public init?(networkManagerValue: UInt32) {
        switch networkManagerValue {
        case 0: self = .unknown
        case 1: self = .none
        case 2: self = .portal
        case 3: self = .limited
        case 4: self = .full
        default: return nil
        }
    }
}
