/// How lifecycled treats an app whose window is visible but does not have the focus
/// (`foreground-mode` in `lifecycled.conf`).
enum ForegroundMode: String, Sendable, Hashable, CaseIterable {
    /// Several apps share the screen (a desktop): a visible app without the focus is inactive,
    /// as an iOS app under an overlay; it keeps running.
    case desktop
    /// One app at a time (a phone, a kiosk): only the focused app is in the foreground; a visible
    /// one behind it goes to the background and is suspended, as on iOS.
    case single
}
