internal import CMosquitto

/// libmosquitto, loaded on first use rather than linked, and `mosquitto_lib_init`, once per process.
///
/// A process that never touches a broker never maps libmosquitto or the OpenSSL it brings
/// (lifecycled without a broker: 1.7 MiB of idle RSS, measured). Every call goes through
/// ``functions()``; `CMosquitto` resolves the whole table in one place.
enum MosquittoLibrary {
    /// The Debian package that ships `libmosquitto.so.1`.
    static let package = "libmosquitto1"

    /// The library's functions, or why they could not be loaded. A static `let` is initialized
    /// exactly once, thread-safely (`swift_once`), on first use.
    private static let library = load(soname: CMOSQUITTO_SONAME)

    /// Loads a libmosquitto and resolves its functions (`cmosquitto_load`).
    ///
    /// - Parameters:
    ///   - soname: The shared object to load; the tests pass one that does not exist.
    /// - Returns: The functions, or a ``BrokerError`` with ``BrokerError/Code/libraryUnavailable``
    ///   that says why and which package to install.
    static func load(soname: String) -> Result<cmosquitto_functions, BrokerError> {
        var message = [CChar](repeating: 0, count: 512)
        guard let functions = cmosquitto_load(soname, &message, message.count) else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return .failure(
                BrokerError(
                    .libraryUnavailable,
                    "cannot load \(soname), the MQTT client library (\(reason)); "
                        + "install the \(package) package to use a broker"))
        }
        return .success(functions.pointee)
    }

    /// `mosquitto_lib_init`'s result, once.
    private static let initialized: Result<cmosquitto_functions, BrokerError> = library.flatMap { functions in
        let rc = functions.lib_init()
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            return .failure(
                BrokerError(.library, "mosquitto_lib_init: \(text(functions.strerror(rc)))", returnCode: rc))
        }
        return .success(functions)
    }

    /// libmosquitto's functions, loading the library (and initializing it: OpenSSL, the random
    /// source) if nobody has yet.
    ///
    /// - Throws: ``BrokerError`` with ``BrokerError/Code/libraryUnavailable`` if `libmosquitto.so.1`
    ///   or one of its functions is missing, or ``BrokerError/Code/library(_:)`` if
    ///   `mosquitto_lib_init` failed.
    static func functions() throws(BrokerError) -> cmosquitto_functions {
        try initialized.get()
    }

    /// The functions, for code that runs only after ``functions()`` succeeded (a connection with a
    /// libmosquitto handle: `ConnectionCore.start()` creates one only then).
    static var loaded: cmosquitto_functions {
        guard case .success(let functions) = initialized else {
            preconditionFailure("libmosquitto used before MosquittoLibrary.functions() succeeded")
        }
        return functions
    }

    /// The functions if the library is loaded and initialized, without trying to load it.
    static var loadedIfAvailable: cmosquitto_functions? { try? initialized.get() }

    /// `mosquitto_strerror`'s text for a `MOSQ_ERR_*` value, or the number if the library is not loaded.
    static func describe(_ rc: Int32) -> String {
        loadedIfAvailable.map { text($0.strerror(rc)) } ?? "libmosquitto error \(rc)"
    }

    /// A static string libmosquitto returned (`mosquitto_strerror`, `mosquitto_connack_string`).
    static func text(_ string: UnsafePointer<CChar>?) -> String { string.map { String(cString: $0) } ?? "" }
}
