import Logging
import SystemdBus

/// The two ways to keep a session from going idle while an app wants it
/// (`Application.isIdleTimerDisabled`): logind's `idle` inhibitor, which holds logind's own
/// `IdleAction`, and `org.freedesktop.ScreenSaver.Inhibit`, which desktops go by for blanking and
/// locking (KDE Plasma; GNOME through gsd-screensaver-proxy, which forwards to its session manager).
package enum IdleInhibitor {
    /// The screensaver service's name, also its interface.
    package static let screenSaverName = "org.freedesktop.ScreenSaver"

    /// `org.freedesktop.login1.Manager.Inhibit("idle", who, why, "block")`: the lock lasts until
    /// the returned descriptor is closed.
    ///
    /// - Throws: `BusServiceError` when the call fails or returns no descriptor.
    package static func takeLogind(on systemBus: BusConnection, who: String, why: String) async throws(BusServiceError)
        -> BusFileDescriptor
    {
        let reply: [BusValue]
        do {
            reply = try await systemBus.call(
                destination: "org.freedesktop.login1", path: "/org/freedesktop/login1",
                interface: "org.freedesktop.login1.Manager", member: "Inhibit",
                arguments: [.string("idle"), .string(who), .string(why), .string("block")])
        } catch {
            throw BusServiceError.wrap(error, service: "org.freedesktop.login1", message: "Inhibit(idle, block)")
        }
        guard reply.count == 1, let descriptor = reply[0].fileDescriptor, descriptor.isOpen else {
            throw BusServiceError(
                code: .invalidReply, service: "org.freedesktop.login1",
                message: "Inhibit returned \(BusValue.signature(of: reply)), not an fd")
        }
        return descriptor
    }

    /// `org.freedesktop.ScreenSaver.Inhibit(who, why)` when a screensaver service is on the bus.
    ///
    /// - Returns: The cookie for ``releaseScreenSaver(_:on:logger:)``, or `nil` without a service.
    /// - Throws: `BusServiceError` when the service refuses.
    package static func takeScreenSaver(on sessionBus: BusConnection, who: String, why: String)
        async throws(BusServiceError) -> UInt32?
    {
        guard (try? await sessionBus.nameOwner(screenSaverName, timeout: .seconds(2))) != nil else { return nil }
        do {
            let reply = try await sessionBus.call(
                destination: screenSaverName, path: "/org/freedesktop/ScreenSaver", interface: screenSaverName,
                member: "Inhibit", arguments: [.string(who), .string(why)], timeout: .seconds(5))
            guard case .uint32(let cookie) = reply.first else {
                throw BusServiceError(
                    code: .invalidReply, service: screenSaverName,
                    message: "Inhibit returned \(BusValue.signature(of: reply)), not u")
            }
            return cookie
        } catch let error as BusServiceError {
            throw error
        } catch {
            throw BusServiceError.wrap(error, service: screenSaverName, message: "Inhibit")
        }
    }

    /// `UnInhibit(cookie)`, sent without waiting; a failure is logged (the service may be gone,
    /// and the inhibition with it).
    package static func releaseScreenSaver(_ cookie: UInt32, on sessionBus: BusConnection, logger: Logger) {
        let reply = sessionBus.send(
            destination: screenSaverName, path: "/org/freedesktop/ScreenSaver", interface: screenSaverName,
            member: "UnInhibit", arguments: [.uint32(cookie)])
        Task {
            do { _ = try await reply.value() } catch { logger.debug("UnInhibit(\(cookie)): \(error)") }
        }
    }
}
