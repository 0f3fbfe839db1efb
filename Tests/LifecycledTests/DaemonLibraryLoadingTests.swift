import Foundation
import Glibc
import SystemdBusTesting
import Testing

/// lifecycled maps libmosquitto, and the OpenSSL it brings, only when `lifecycled.conf` names a
/// broker: they were 1.7 MiB of its idle RSS on every machine, fleet or not.
@Suite("lifecycled loads the MQTT client only for a broker", .serialized, .timeLimit(.minutes(2)))
struct DaemonLibraryLoadingTests {
    /// The file names of the shared objects a process maps, from /proc/PID/maps.
    static func mappedLibraries(_ pid: pid_t) throws -> Set<String> {
        // Read to the end: /proc files report a size of 0, and a one-read String(contentsOfFile:) stops early.
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(pid)/maps"))
        defer { try? handle.close() }
        let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        return Set(
            maps.split(separator: "\n").compactMap { line in
                line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(5).first
                    .flatMap { $0.split(separator: "/").last.map(String.init) }
            })
    }

    @Test func withoutABrokerNeitherLibmosquittoNorOpenSSLIsMapped() async throws {
        let rig = try await BinaryDaemonRig(prefix: "library-loading")
        defer { rig.close() }
        let daemon = try await rig.start()
        defer { daemon.kill() }
        let libraries = try Self.mappedLibraries(daemon.process.processIdentifier)
        #expect(libraries.contains { $0.hasPrefix("libsystemd.so") }, "\(libraries)")
        let unwanted = libraries.filter {
            $0.hasPrefix("libmosquitto.so") || $0.hasPrefix("libssl.so") || $0.hasPrefix("libcrypto.so")
        }
        #expect(unwanted.isEmpty, "\(unwanted)")
    }

    /// The modules of the gateway's TLS and metrics (and swift-nio under them), by the names their
    /// Swift symbols carry (`$s6NIOSSL…`) and BoringSSL's prefix in swift-nio-ssl.
    static let gatewayOnlyModules = ["6NIOSSL", "11CoreMetrics", "10Prometheus", "7NIOCore", "CNIOBoringSSL"]

    @Test func lifecycledLinksNoneOfTheGatewaysNIOTLSAndMetricsPackages() throws {
        let daemon = try #require(BuiltProducts.path(of: "lifecycled"))
        let gateway = try #require(BuiltProducts.path(of: "lifecycle-push-gateway"))
        func modules(in path: String) throws -> [String] {
            let binary = try Data(contentsOf: URL(fileURLWithPath: path))
            return Self.gatewayOnlyModules.filter { binary.range(of: Data($0.utf8)) != nil }
        }
        // The gateway has them all: the names are the ones a binary that links them carries.
        #expect(try modules(in: gateway) == Self.gatewayOnlyModules)
        #expect(try modules(in: daemon).isEmpty)
    }

    @Test func withABrokerLibmosquittoIsLoadedWhenTheFleetLinkStarts() async throws {
        let fleet = try await FleetRig()
        let rig = try await BinaryDaemonRig(
            prefix: "library-loading", extraArguments: ["--config", fleet.configurationPath])
        defer { rig.close() }
        let daemon = try await rig.start()
        defer { daemon.kill() }
        let pid = daemon.process.processIdentifier
        #expect(
            await eventually {
                (try? Self.mappedLibraries(pid))?.contains { $0.hasPrefix("libmosquitto.so") } == true
            })
    }
}
