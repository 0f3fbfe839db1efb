import AppLifecycle
import LifecycledProtocol
import SystemdBus

/// A userInfo as a method argument (`a{sv}`): decoded by ``UserInfoBusCodec`` and checked against
/// the protocol's limits (``LifecycledProtocol/validate(_:)``), else `InvalidArgs`.
struct UserInfoArgument: BusArgument {
    /// The userInfo.
    let userInfo: UserInfo

    static var busSignature: String { "a{sv}" }

    init(busValue: BusValue) throws(BusError) {
        do {
            let userInfo = try UserInfoBusCodec.decodeUserInfo(busValue)
            try LifecycledProtocol.validate(userInfo)
            self.userInfo = userInfo
        } catch {
            throw DaemonError.invalidArgs("\(error)")
        }
    }

    var busValue: BusValue { UserInfoBusCodec.encode(userInfo) }
}
