internal import CXCB

/// libxcb, loaded on first use rather than linked.
///
/// A process that never talks to an X server never maps libxcb or what it brings (libXau,
/// libXdmcp, libbsd, libmd): lifecycled on a Wayland session or a headless host, and every app.
/// Every call goes through ``functions()``; `CXCB` resolves the whole table in one place.
enum XCBLibrary {
    /// The Debian package that ships `libxcb.so.1`.
    static let package = "libxcb1"

    /// The library's functions, or why they could not be loaded. A static `let` is initialized
    /// exactly once, thread-safely (`swift_once`), on first use.
    private static let library = load(soname: CXCB_SONAME)

    /// Loads a libxcb and resolves its functions (`cxcb_load`).
    ///
    /// - Parameters:
    ///   - soname: The shared object to load.
    /// - Returns: The functions, or an ``EWMHWindowSourceError`` with
    ///   ``EWMHWindowSourceError/Code/libraryUnavailable`` that says why and which package to install.
    static func load(soname: String) -> Result<cxcb_functions, EWMHWindowSourceError> {
        var message = [CChar](repeating: 0, count: 512)
        guard let functions = cxcb_load(soname, &message, message.count) else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return .failure(
                EWMHWindowSourceError(
                    .libraryUnavailable,
                    "cannot load \(soname), the X protocol library (\(reason)); install the \(package) package"))
        }
        return .success(functions.pointee)
    }

    /// libxcb's functions, loading the library if nobody has yet.
    ///
    /// - Throws: ``EWMHWindowSourceError`` with ``EWMHWindowSourceError/Code/libraryUnavailable``
    ///   if `libxcb.so.1` or one of its functions is missing.
    static func functions() throws(EWMHWindowSourceError) -> cxcb_functions {
        try library.get()
    }

    /// The functions, for code that runs only after ``functions()`` succeeded (a source with a
    /// connection: it connects only then).
    static var loaded: cxcb_functions {
        guard case .success(let functions) = library else {
            preconditionFailure("libxcb used before XCBLibrary.functions() succeeded")
        }
        return functions
    }

    /// What `xcb_connection_has_error`'s code means, in words.
    ///
    /// - Parameters:
    ///   - code: The `XCB_CONN_*` value.
    static func describeConnectionError(_ code: Int32) -> String {
        switch code {
        case 1: return "the connection failed or was closed (socket, pipe or stream error)"
        case 2: return "an extension is not supported"
        case 3: return "out of memory"
        case 4: return "a request was longer than the server accepts"
        case 5: return "the display name could not be parsed"
        case 6: return "the server has no such screen"
        case 7: return "passing a file descriptor failed"
        default: return "libxcb connection error \(code)"
        }
    }
}
