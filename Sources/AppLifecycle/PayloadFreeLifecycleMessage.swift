import FoundationEssentials

/// A typed notification that carries no payload: its userInfo is empty and any userInfo decodes.
public protocol PayloadFreeLifecycleMessage: LifecycleMessage {
    /// Creates the message.
    init()
}

extension PayloadFreeLifecycleMessage {
    /// An empty userInfo.
    public var userInfo: UserInfo { UserInfo() }

    /// Creates the message; a payload-free message decodes from any userInfo.
    ///
    /// - Parameters:
    ///   - userInfo: Ignored.
    public init?(userInfo: UserInfo) { self.init() }
}
