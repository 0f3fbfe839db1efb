extension Duration {
    /// The duration in whole microseconds, saturating: 0 for a negative duration, `UInt64.max` for
    /// one too long to count (a deadline from a command line or a peer must never trap). sd-event's,
    /// sd_notify's and the kernel's PSI unit; the one conversion the project has.
    public var saturatingMicroseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return .max }
        let (total, overflowAgain) = whole.addingReportingOverflow(UInt64(max(0, attoseconds) / 1_000_000_000_000))
        return overflowAgain ? .max : total
    }
}
