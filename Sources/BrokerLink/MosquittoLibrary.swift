internal import CMosquitto

/// `mosquitto_lib_init`, once per process.
enum MosquittoLibrary {
    /// A static `let` is initialized exactly once, thread-safely (`swift_once`), on first use.
    private static let initialized: Int32 = mosquitto_lib_init()

    /// Initializes libmosquitto (OpenSSL, the random source) if nobody has yet.
    ///
    /// - Throws: ``BrokerError`` if `mosquitto_lib_init` failed.
    static func initialize() throws {
        let rc = initialized
        if rc != MOSQ_ERR_SUCCESS.rawValue { throw BrokerError.library(rc, "mosquitto_lib_init") }
    }
}
