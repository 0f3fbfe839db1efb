import Glibc
import Testing

@testable import AppLifecycleSystemd

/// libwayland-client is loaded when a Wayland window source first starts: a missing or wrong
/// library is a typed error that says which package to install, not a process that cannot start.
@Suite struct WaylandClientLibraryTests {
    @Test func aMissingLibraryIsATypedErrorNamingThePackage() throws {
        guard case .failure(let error) = WaylandClientLibrary.load(soname: "libwayland-client-absent.so.0") else {
            Issue.record("a library that does not exist was loaded")
            return
        }
        #expect(error.code == .unsupported)
        #expect(error.source == ForeignToplevelWindowSource.sourceName)
        #expect(error.message.contains("cannot load libwayland-client-absent.so.0"), "\(error)")
        #expect(error.message.contains("install the libwayland-client0 package"), "\(error)")
    }

    @Test func aLibraryWithoutLibwaylandsFunctionsIsRefused() throws {
        guard case .failure(let error) = WaylandClientLibrary.load(soname: "libc.so.6") else {
            Issue.record("libc was taken for libwayland-client")
            return
        }
        #expect(error.code == .unsupported)
        #expect(error.message.contains("wl_display_connect_to_fd"), "\(error)")
    }

    @Test func theInstalledLibraryResolvesEveryFunction() throws {
        let functions = try WaylandClientLibrary.load(soname: "libwayland-client.so.0").get().table.pointee
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
        defer { close(fds[1]) }
        let display = try #require(functions.display_connect_to_fd(fds[0]))
        #expect(functions.display_get_fd(display) == fds[0])
        functions.display_disconnect(display)  // closes fds[0]
    }
}
