import Testing

@testable import BrokerLink

/// libmosquitto is loaded when a connection first needs it: a missing or wrong library is a typed
/// error that says which package to install, not a process that cannot start.
@Suite struct MosquittoLibraryTests {
    @Test func aMissingLibraryIsATypedErrorNamingThePackage() throws {
        guard case .failure(let error) = MosquittoLibrary.load(soname: "libmosquitto-absent.so.1") else {
            Issue.record("a library that does not exist was loaded")
            return
        }
        #expect(error.code == .libraryUnavailable)
        #expect(error.message.contains("cannot load libmosquitto-absent.so.1"), "\(error)")
        #expect(error.message.contains("install the libmosquitto1 package"), "\(error)")
    }

    @Test func aLibraryWithoutLibmosquittosFunctionsIsRefused() throws {
        guard case .failure(let error) = MosquittoLibrary.load(soname: "libc.so.6") else {
            Issue.record("libc was taken for libmosquitto")
            return
        }
        #expect(error.code == .libraryUnavailable)
        #expect(error.message.contains("mosquitto_lib_init"), "\(error)")
    }

    @Test func theInstalledLibraryResolvesEveryFunction() throws {
        let functions = try MosquittoLibrary.load(soname: "libmosquitto.so.1").get()
        #expect(functions.lib_init() == 0)
        #expect(MosquittoLibrary.text(functions.strerror(0)) == "No error.")
    }
}
