import AppLifecycle
import ArgumentParser
import CommandLineSupport
import Foundation
import HTTPClientSupport
import LifecycledProtocol
import Synchronization
import SystemdBus

#if canImport(Glibc)
    import Glibc
#endif

/// The `--address` option every lifecyclectl subcommand that talks to lifecycled shares.
struct DaemonOptions: ParsableArguments {
    /// The bus lifecycled is on.
    @Option(
        name: .long,
        help: ArgumentHelp("The D-Bus address lifecycled is on (default: the session bus).", valueName: "address"))
    var address: String?

    /// The bus as a ``BusConnection/Address``.
    var busAddress: BusConnection.Address { address.map(BusConnection.Address.address) ?? .session }
}

/// Where a command writes: standard output and error, or a capture in tests.
///
/// Lines are written whole; `isTerminal` says whether standard output is a terminal (for colour).
final class CtlOutput: Sendable {
    private let writeOut: @Sendable (String) -> Void
    private let writeErr: @Sendable (String) -> Void
    /// Whether standard output is a terminal.
    let isTerminal: Bool
    /// Called by long-running commands (`monitor`) once they listen.
    let ready: @Sendable () -> Void

    /// Creates an output.
    ///
    /// - Parameters:
    ///   - isTerminal: Whether standard output is a terminal.
    ///   - out: Writes one line to standard output.
    ///   - err: Writes one line to standard error.
    ///   - ready: Called when a long-running command listens.
    init(
        isTerminal: Bool, out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void,
        ready: @escaping @Sendable () -> Void = {}
    ) {
        self.isTerminal = isTerminal
        self.writeOut = out
        self.writeErr = err
        self.ready = ready
    }

    /// The process's standard output and error.
    static let standard = CtlOutput(
        isTerminal: isatty(STDOUT_FILENO) == 1,
        out: { line in
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        },
        err: { line in
            FileHandle.standardError.write(Data((line + "\n").utf8))
        })

    /// Writes a line to standard output.
    ///
    /// - Parameters:
    ///   - line: The line, without its newline.
    func out(_ line: String) { writeOut(line) }

    /// Writes a line to standard error.
    ///
    /// - Parameters:
    ///   - line: The line, without its newline.
    func err(_ line: String) { writeErr(line) }
}

/// A lifecyclectl subcommand with a body that writes to a ``CtlOutput``.
protocol CtlCommand: AsyncParsableCommand {
    /// The command's name in messages: its own, or with its group's for a verb of one (`fleet devices`).
    static var displayName: String { get }

    /// Runs the command; throws ``ValidationError`` for bad arguments, ``BusError`` for D-Bus failures.
    ///
    /// - Parameters:
    ///   - output: Where to write.
    func execute(output: CtlOutput) async throws
}

extension CtlCommand {
    /// The command's own name.
    static var displayName: String { configuration.commandName ?? "lifecyclectl" }

    /// Runs ``execute(output:)`` on the standard streams and exits with lifecyclectl's statuses.
    ///
    /// Each command's `run()` calls it (an explicit `run()` keeps ArgumentParser from picking its default).
    func runOnStandardStreams() async throws {
        let status = await Self.finish(output: .standard) { try await execute(output: $0) }
        if status != ExitStatus.success { throw ExitCode(status) }
    }

    /// Runs a body and turns its errors into a message on standard error and an exit status.
    ///
    /// - Parameters:
    ///   - output: Where to write.
    ///   - body: The command's work.
    /// - Returns: 0, 1 for runtime failures (D-Bus errors print their name and message), 2 for usage errors.
    static func finish(output: CtlOutput, _ body: (CtlOutput) async throws -> Void) async -> Int32 {
        let name = displayName
        do {
            try await body(output)
            return ExitStatus.success
        } catch let error as ValidationError {
            output.err("lifecyclectl \(name): \(error.message)")
            return ExitStatus.usage
        } catch let error as BusError {
            output.err("lifecyclectl \(name): \(error.name): \(error.message)")
            if error.name == BusError.Name.serviceUnknown || error.name == BusError.Name.nameHasNoOwner {
                output.err("lifecyclectl \(name): \(CtlFailure.daemonAbsent())")
            } else if let advice = Self.advice(for: error) {
                output.err("lifecyclectl \(name): \(advice)")
            }
            return ExitStatus.failure
        } catch let failure as CtlFailure {
            output.err("lifecyclectl \(name): \(failure.message)")
            return ExitStatus.failure
        } catch let error as HTTPClientError {
            // Its message is for the person; the error underneath (NIO's) is for programs.
            output.err("lifecyclectl \(name): \(error.message)")
            return ExitStatus.failure
        } catch is CancellationError {
            return ExitStatus.success
        } catch {
            output.err("lifecyclectl \(name): \(error)")
            return ExitStatus.failure
        }
    }

    /// What to do about a D-Bus error whose message does not say it: a call lifecycled did not
    /// answer in time, a bus connection lost during the call; `nil` for lifecycled's own errors,
    /// whose messages say it.
    ///
    /// - Parameters:
    ///   - error: The error the call ended with.
    static func advice(for error: BusError) -> String? {
        switch error.name {
        case BusError.Name.noReply, "org.freedesktop.DBus.Error.Timeout":
            "lifecycled did not answer in time; `journalctl --user -u lifecycled` shows what it was doing"
        case BusError.Name.disconnected, "org.freedesktop.DBus.Error.NoServer":
            "the connection to the bus was lost during the call; try again, and if the bus daemon stopped, log in again"
        default:
            nil
        }
    }

    /// Parses arguments and runs the command in-process, as the tests (and embedders) do.
    ///
    /// - Parameters:
    ///   - arguments: The arguments after the subcommand's name.
    ///   - output: Where to write.
    /// - Returns: The exit status: a parse or validation error gives 2 with the parser's message.
    static func invoke(_ arguments: [String], output: CtlOutput) async -> Int32 {
        let command: Self
        do {
            command = try parse(arguments)
        } catch {
            output.err(message(for: error))
            return ExitStatus.of(error, command: Self.self)
        }
        return await finish(output: output) { try await command.execute(output: $0) }
    }
}

/// The calls lifecyclectl makes to lifecycled, on one connection that it owns.
final class DaemonClient: Sendable {
    /// The connection.
    let connection: BusConnection
    private let loop: EventLoop
    /// How long the bus may take to accept the connection (sd-bus's own default call timeout).
    static let connectTimeout = Duration.seconds(25)

    /// Connects to the bus.
    ///
    /// - Parameters:
    ///   - address: The bus lifecycled is on.
    /// - Throws: ``BusError`` when the bus cannot be reached.
    init(address: BusConnection.Address) async throws {
        let loop = try EventLoop(name: "lifecyclectl")
        do {
            connection = try await BusConnection(
                address, loop: loop, description: "lifecyclectl", timeout: Self.connectTimeout)
        } catch let error as BusError {
            loop.shutdown()
            throw CtlFailure.busUnreachable(error, address: address)
        } catch {
            loop.shutdown()
            throw error
        }
        self.loop = loop
    }

    /// Closes the connection and stops its loop.
    func close() {
        connection.close()
        loop.shutdown()
    }

    /// Connects, runs `body`, and closes, even when `body` throws.
    ///
    /// - Parameters:
    ///   - address: The bus lifecycled is on.
    ///   - body: The calls to make.
    static func with<T>(_ address: BusConnection.Address, _ body: (DaemonClient) async throws -> T) async throws -> T {
        let client = try await DaemonClient(address: address)
        defer { client.close() }
        return try await body(client)
    }

    /// Calls a method of lifecycled's interface.
    ///
    /// - Parameters:
    ///   - member: The method.
    func call(_ member: String, _ arguments: [BusValue] = []) async throws -> [BusValue] {
        try await connection.call(
            destination: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
            interface: LifecycledProtocol.interface, member: member, arguments: arguments)
    }

    /// The unique name of lifecycled, started through D-Bus activation first when it is not
    /// running but activatable (its service file is installed); a `ServiceUnknown` error when it is
    /// neither running nor activatable.
    func requireDaemon() async throws -> String {
        guard let owner = try await connection.ownerStartingIfActivatable(LifecycledProtocol.busName) else {
            throw BusError(
                name: BusError.Name.serviceUnknown,
                message:
                    "\(LifecycledProtocol.busName) is neither running nor activatable on the \(connection.address) bus")
        }
        return owner
    }

    /// Every property of lifecycled's interface.
    func properties() async throws -> [String: BusValue] {
        try await connection.getAllProperties(
            destination: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
            interface: LifecycledProtocol.interface)
    }

    /// `ListApps`.
    func listApps() async throws -> [LifecycledApp] {
        LifecycledApp.list(from: try await call(LifecycledProtocol.Method.listApps.name).first)
    }

    /// `DescribeApps`: every app with its windows and why it is where it is.
    ///
    /// - Throws: A ``BusError``, or the codec's error for an entry that is not an `a{sv}`.
    func describeApps() async throws -> [DescribedApp] {
        let reply = try await call(LifecycledProtocol.Method.describeApps.name)
        return try (reply.first?.arrayValue ?? []).map { DescribedApp(try UserInfoBusCodec.decodeUserInfo($0)) }
    }

    /// `GetCounters`: what lifecycled counted of pushes and local notifications, by name
    /// (`push-received`, …); empty from a lifecycled without the method.
    func counters() async throws -> [String: Int] {
        let reply: [BusValue]
        do {
            reply = try await call(LifecycledProtocol.Method.getCounters.name)
        } catch let error as BusError where error.name == BusError.Name.unknownMethod {
            return [:]
        }
        let info = try reply.first.map(UserInfoBusCodec.decodeUserInfo) ?? UserInfo()
        return info.values.compactMapValues { $0.intValue.map { Int($0) } }
    }
}

/// Checks an app id argument.
///
/// - Parameters:
///   - id: The argument.
/// - Throws: ``ValidationError`` when it is not a valid app id.
func validatedAppID(_ id: String) throws -> String {
    guard LifecycledProtocol.isValidAppID(id) else {
        throw ValidationError("'\(id)' is not a valid app id (reverse-DNS, like org.example.App)")
    }
    return id
}
