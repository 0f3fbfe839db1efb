/// Re-evaluates a condition until it holds, for facts a peer learns asynchronously and
/// announces with no signal.
///
/// Some host facts settle after the call that causes them returns, with nothing to wait on.
/// logind (and python-dbusmock's logind) drops an inhibitor when its event loop sees the
/// hang-up of the fd the client closed, so a `ListInhibitors` sent right after `close(2)` may
/// still list it; a child being spawned concurrently holds a copy of every fd until its
/// `exec` closes them, which delays that hang-up further. Asserting such a fact at once is a
/// race; asserting it after this returns `true` is not.
///
/// Each try runs the condition, which should be a real round trip to the peer (a bus call),
/// then pauses briefly. The hang guard bounds a test whose fact never settles: the caller
/// asserts on the result, so such a test fails instead of hanging. It is not a timed
/// assertion: on a loaded machine the fact simply settles later.
///
/// ```swift
/// client.releaseDelayLock(what: .sleep)
/// #expect(try await eventually { try await inhibitors(connection).isEmpty })
/// ```
///
/// - Parameters:
///   - hangGuard: How long to keep trying before giving up and returning `false`.
///   - pause: The pause between two tries.
///   - isolation: The caller's actor, inherited so the condition runs where it was written
///     (a main-actor test reads its main-actor state) without being sent anywhere.
///   - condition: The fact to check; it may throw, which ends the wait with that error.
/// - Returns: `true` as soon as `condition` returns `true`, `false` if it never did before the
///   hang guard passed or the task was cancelled.
public func eventually(
    hangGuard: Duration = .seconds(10), pause: Duration = .milliseconds(10),
    isolation: isolated (any Actor)? = #isolation,
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let clock = ContinuousClock()
    let giveUp = clock.now.advanced(by: hangGuard)
    while true {
        if try await condition() { return true }
        if clock.now >= giveUp { return false }
        try? await Task.sleep(for: pause)
        // A cancelled sleep returns at once: stop rather than retry without pause.
        if Task.isCancelled { return false }
    }
}
