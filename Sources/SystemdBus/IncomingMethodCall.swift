/// A method call of an object exported with ``ExportedInterface/CallDelivery/inOrder``, waiting for
/// its answer.
///
/// Answer each exactly once with ``reply(_:)``. A call dropped without an answer is answered with
/// `org.freedesktop.DBus.Error.Failed`, so its caller never waits for its timeout.
public struct IncomingMethodCall: Sendable {
    /// The decoded call, with its caller's credentials.
    public let request: BusMethodCall
    /// The declared method (its output signature is checked against the answer).
    public let method: ExportedInterface.Method
    let replier: MethodReplier

    /// Sends the answer: the values as the method return, a thrown ``BusError`` as an error reply
    /// with its name and message, any other error as `org.freedesktop.DBus.Error.Failed`.
    ///
    /// Never waits for the loop thread. A second answer is ignored.
    ///
    /// - Parameters:
    ///   - result: The reply's values, or why the call failed.
    public func reply(_ result: Result<[BusValue], any Error>) {
        replier.finish(result, request: request)
    }
}
