/// A deterministic random number generator (SplitMix64): the same numbers from the same seed in
/// every run, for jitter and mixes that a test or a benchmark must repeat.
public struct SeededGenerator: RandomNumberGenerator {
    /// The generator's state; the seed to start from.
    public var state: UInt64

    /// A generator that starts from `state`.
    public init(state: UInt64) { self.state = state }

    /// The next number.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
