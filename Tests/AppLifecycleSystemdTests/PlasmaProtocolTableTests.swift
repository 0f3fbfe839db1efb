import CWayland
import Glibc
import Testing

@testable import AppLifecycleSystemd

/// CWayland's hand-written tables for KDE Plasma's window management against the ones KWin 5.27
/// compiles from the protocol XML (libkwin.so.5, the server side) and KWayland's client library:
/// a message out of order, a wrong signature or argument interface would make libwayland misread
/// every event after it.
@Suite("Plasma window management tables")
struct PlasmaProtocolTableTests {
    /// Where KWin's and KWayland's generated tables are, when kwin-wayland is installed.
    static let libraries = ["libkwin.so.5", "libKF5WaylandClient.so.5"].filter {
        guard let handle = dlopen($0, RTLD_NOW | RTLD_LOCAL) else { return false }
        dlclose(handle)
        return true
    }

    /// One message as text: name, signature, and the interface of each argument that has one.
    static func describe(_ message: wl_message) -> String {
        let signature = String(cString: message.signature)
        let arguments = signature.filter { "iufsoanh".contains($0) }.count
        let types = (0..<arguments).map { index in
            message.types[index].map { String(cString: $0.pointee.name) } ?? "-"
        }
        return "\(String(cString: message.name)) \(signature) [\(types.joined(separator: ","))]"
    }

    static func describe(_ interface: wl_interface) -> [String] {
        let requests = (0..<Int(interface.method_count)).map { "request " + describe(interface.methods[$0]) }
        let events = (0..<Int(interface.event_count)).map { "event " + describe(interface.events[$0]) }
        return ["\(String(cString: interface.name)) v\(interface.version)"] + requests + events
    }

    @Test(
        "org_kde_plasma_window_management and org_kde_plasma_window match KWin's own tables message for message",
        .enabled(if: !libraries.isEmpty, "needs kwin-wayland (libkwin.so.5)"), arguments: libraries)
    func tablesMatchKWin(library: String) throws {
        _ = try WaylandClientLibrary.functions()  // fills the core interfaces the tables point at
        let handle = try #require(dlopen(library, RTLD_NOW | RTLD_LOCAL))
        defer { dlclose(handle) }
        for (ours, symbol) in [
            (cwayland_plasma_window_management_interface, "org_kde_plasma_window_management_interface"),
            (cwayland_plasma_window_interface, "org_kde_plasma_window_interface"),
        ] {
            let theirs = try #require(dlsym(handle, symbol)).assumingMemoryBound(to: wl_interface.self).pointee
            #expect(Self.describe(ours) == Self.describe(theirs), "\(symbol) in \(library)")
        }
    }
}
