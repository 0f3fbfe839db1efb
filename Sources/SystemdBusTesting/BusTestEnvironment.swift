import SystemdBus

/// A private bus daemon, an event loop and one connection to the daemon: the set-up of most D-Bus tests.
///
/// ``with(loopName:description:serviceDirectory:_:)`` tears all three down when the body returns or throws (the
/// connection closed, the loop joined, the daemon killed by its own pid), so a failing test
/// leaves nothing running.
public struct BusTestEnvironment: Sendable {
    /// The private bus daemon.
    public let bus: PrivateBus
    /// The loop that runs ``connection`` and any further connection the test opens.
    public let loop: EventLoop
    /// A connection to ``bus``, open for the whole body.
    public let connection: BusConnection

    /// Starts a private bus, a loop and a connection, runs `body` with them, then stops all three.
    ///
    /// - Parameters:
    ///   - loopName: The loop thread's name, seen in logs and debuggers.
    ///   - description: The connection's name in sd-bus debug output.
    ///   - serviceDirectory: D-Bus service files the bus activates on demand (``PrivateBus/init(serviceDirectory:)``).
    ///   - body: The test.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` threw, or ``FixtureError``/`BusError` when the set-up fails.
    public static func with<T>(
        loopName: String = "test-loop", description: String = "test", serviceDirectory: String? = nil,
        _ body: (BusTestEnvironment) async throws -> T
    ) async throws -> T {
        let bus = try PrivateBus(serviceDirectory: serviceDirectory)
        defer { bus.stop() }
        let loop = try EventLoop(name: loopName)
        defer { loop.shutdown() }
        let connection = try await BusConnection(
            .address(bus.address), loop: loop, description: description, timeout: Self.connectTimeout)
        defer { connection.close() }
        return try await body(BusTestEnvironment(bus: bus, loop: loop, connection: connection))
    }

    /// Opens another connection to the same bus on the same loop; the caller closes it.
    ///
    /// - Parameters:
    ///   - description: The connection's name in sd-bus debug output.
    public func secondConnection(_ description: String = "second") async throws -> BusConnection {
        try await BusConnection(
            .address(bus.address), loop: loop, description: description, timeout: Self.connectTimeout)
    }

    /// How long the private bus may take to accept a connection (it answers at once when healthy).
    public static let connectTimeout = Duration.seconds(10)
}
