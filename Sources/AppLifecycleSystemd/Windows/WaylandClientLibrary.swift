internal import CWayland

/// libwayland-client, loaded on first use rather than linked.
///
/// Every process that links the host bridge (lifecycled, and every app) would otherwise map
/// libwayland-client and the libffi it brings at start, on an X11 desktop or a server too; loaded
/// here, only a process that starts a ``ForeignToplevelWindowSource`` maps them. `CWayland` resolves
/// the whole table in one place, as `CMosquitto` does for libmosquitto.
enum WaylandClientLibrary {
    /// The Debian package that ships `libwayland-client.so.0`.
    static let package = "libwayland-client0"

    /// The table of functions, in static storage that `cwayland_load` writes once and never again.
    struct Functions: @unchecked Sendable {
        // Why @unchecked Sendable is safe: the pointee is written once, before the pointer exists
        // (cwayland_load returns it only when every symbol resolved), and only read afterwards.
        let table: UnsafePointer<cwayland_functions>
    }

    /// The library's functions, or why they could not be loaded; loaded once, thread-safely, on first use.
    private static let library = load(soname: CWAYLAND_SONAME)

    /// Loads a libwayland-client and resolves its functions (`cwayland_load`).
    ///
    /// - Parameters:
    ///   - soname: The shared object to load; the tests pass one that does not exist.
    /// - Returns: The functions, or a ``HostSourceError`` with ``HostSourceError/Code/unsupported``
    ///   that says why and which package to install.
    static func load(soname: String) -> Result<Functions, HostSourceError> {
        var message = [CChar](repeating: 0, count: 512)
        guard let table = cwayland_load(soname, &message, message.count) else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return .failure(
                HostSourceError(
                    code: .unsupported, source: ForeignToplevelWindowSource.sourceName,
                    message:
                        "cannot load \(soname), the Wayland client library (\(reason)); "
                        + "install the \(package) package to follow a Wayland compositor's windows"))
        }
        return .success(Functions(table: table))
    }

    /// libwayland-client's functions, loading the library if nobody has yet.
    ///
    /// - Throws: ``HostSourceError`` with ``HostSourceError/Code/unsupported`` if
    ///   `libwayland-client.so.0` or one of its symbols is missing.
    static func functions() throws(HostSourceError) -> Functions {
        try library.get()
    }
}
