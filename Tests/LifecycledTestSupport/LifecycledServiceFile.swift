import LifecycledProtocol
import SystemdBusTesting

/// Writes lifecycled's D-Bus service file into a private bus's service directory, as `make install`
/// installs it for the session bus, but running the built binary on that bus, with its state (the
/// schedule of local notifications) inside the service directory, which the test removes.
///
/// - Parameters:
///   - services: The bus's service directory (``PrivateBus/init(serviceDirectory:)``).
///   - binary: The built `lifecycled`.
///   - busAddress: The private bus's address.
///   - appsDirectory: The manifests the daemon reads.
///   - arguments: More options for the daemon (`--config` and its path, for example).
/// - Throws: What writing the file throws.
public func installLifecycledService(
    in services: TemporaryDirectory, binary: String, busAddress: String, appsDirectory: String,
    arguments: [String] = []
) throws {
    _ = try services.write(
        "\(LifecycledProtocol.busName).service",
        """
        [D-BUS Service]
        Name=\(LifecycledProtocol.busName)
        Exec=\(binary) --address \(busAddress) --apps-directory \(appsDirectory) --no-host-sources --state-directory \(services.path)/daemon-state\(arguments.map { " " + $0 }.joined())

        """)
}
