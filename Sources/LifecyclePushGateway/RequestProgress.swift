/// How far the current request of a connection has come, as ``PushHTTPHandler`` tells
/// ``ConnectionDeadlineHandler`` (an outbound user event: the deadline handler sits in front of
/// the HTTP decoder, where only bytes pass).
enum RequestProgress: Sendable, Equatable {
    /// The head has arrived: the body is being read (its deadline starts).
    case readingBody
    /// The request has been read to its end: the gateway works on it, no read deadline runs.
    case requestEnded
    /// The response is about to be written in full (sent before its end is written, since the
    /// end may deliver a pipelined request at once).
    case answered
}
