import SystemdBus

/// What lifecycled keeps for the idle inhibitors of its apps (main actor only, inside
/// ``LifecycleDaemon``): logind's `idle` block and the desktop's screensaver inhibition, held for
/// each active app that disabled its idle timer.
struct IdleInhibitorState {
    /// Apps that asked for the idle timer to be disabled, and the inhibitor fd held for each active one.
    var idleTimerDisabled: Set<String> = []
    var idleInhibitors: [String: BusFileDescriptor] = [:]
    /// The `org.freedesktop.ScreenSaver.Inhibit` cookie held for each active app that wants one.
    var screenSaverCookies: [String: UInt32] = [:]
    /// Bumped on every change of an app's idle wish or state, so an `Inhibit` reply that arrives
    /// after the wish ended is closed at once.
    var idleGeneration: [String: Int] = [:]
    /// The system bus connection for logind's `Inhibit`, opened on first use.
    var systemBus: BusConnection?
    /// The system bus connection being opened, which concurrent requests share.
    var systemBusOpening: Task<BusConnection, any Error>?
}
