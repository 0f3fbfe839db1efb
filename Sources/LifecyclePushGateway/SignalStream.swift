import Dispatch
import Glibc

/// Termination signals as awaitable events: each is ignored by default and watched by a dispatch
/// source (signalfd-like, no handler runs in signal context).
final class SignalStream {
    private let stream: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    /// Starts watching `signals` (they no longer end the process by themselves).
    init(signals: [Int32]) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        self.stream = stream
        sources = signals.map { number in
            Glibc.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            return source
        }
    }

    /// Waits for the next signal and returns its number (0 if the stream ended).
    func next() async -> Int32 {
        for await number in stream { return number }
        return 0
    }
}
