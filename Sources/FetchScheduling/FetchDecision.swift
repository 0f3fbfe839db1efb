/// One decision of the ``FetchScheduler`` at a wake-up: run an app's fetch now, or defer it and why.
package struct FetchDecision: Sendable, Hashable {
    /// The app.
    package var appID: String
    /// When it was decided, in seconds on the fetch clock.
    package var time: Double
    /// `nil`: the fetch runs now; otherwise why it waits.
    package var deferral: FetchDeferral?

    /// Creates a decision.
    package init(appID: String, time: Double, deferral: FetchDeferral?) {
        self.appID = appID
        self.time = time
        self.deferral = deferral
    }

    /// Whether the fetch runs now.
    package var runs: Bool { deferral == nil }
}
