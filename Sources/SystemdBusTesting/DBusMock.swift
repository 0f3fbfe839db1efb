import Foundation

/// A python-dbusmock service on a test bus, driven through its `org.freedesktop.DBus.Mock` interface.
///
/// Starts `/usr/bin/python3 -m dbusmock --template <name>` against a bus address (usually a
/// ``PrivateBus``), waits until the template's well-known name is owned by *this* process,
/// and stops it by its own pid. The helpers call the mock's control interface with
/// `gdbus call --address …`, so the fixture needs nothing but Foundation.
///
/// Arguments to the helpers are GVariant text (what `gdbus call` accepts): `"true"`,
/// `"uint32 1000"`, `"'a string'"`, `"@as []"`; use ``quote(_:)`` for strings.
///
/// Facts about python-dbusmock 0.28.7's templates that tests rely on:
/// - logind: `Suspend`/`PowerOff`/… do nothing (no `PrepareForSleep`/`PrepareForShutdown`;
///   emit those with ``emitSignal(path:interface:name:signature:arguments:)``). `Inhibit(ssss)`
///   returns `h`, the write end of a pipe; the inhibitor is listed by `ListInhibitors`
///   (`a(ssssuu)`, uid 1000, pid 123456) until every copy of the fd is closed.
///   The Manager has no `InhibitDelayMaxUSec` (add it with ``addProperty(path:interface:name:value:)``).
///   Sessions exist only after ``addSession(id:seat:uid:username:active:)``.
/// - Every `Set`/`UpdateProperties` emits `PropertiesChanged(sa{sv}as)` with no invalidated names.
/// - networkmanager: the manager object is `/org/freedesktop/NetworkManager` (the template's main
///   object is `/org/freedesktop`); it has no `Metered`, `PrimaryConnection` or
///   `PrimaryConnectionType` (add them). Its `SetConnectivity(u)` emits the standard
///   `PropertiesChanged` and NetworkManager's old `org.freedesktop.NetworkManager.PropertiesChanged(a{sv})`.
/// - upower: the display device `/org/freedesktop/UPower/devices/DisplayDevice` starts not present
///   (`IsPresent` false, `Percentage` 0, `WarningLevel` 1).
/// - iio-sensors-proxy: set `HasAccelerometer` and `AccelerometerOrientation` with the mock's
///   `SetInternalProperty(ssv)`; an orientation change reaches only the connections that claimed the
///   accelerometer (a unicast `PropertiesChanged`); `GetInternalProperty('AccelerometerOwners')` lists them.
///   Its `Get` answers the value at start: read it with `GetAll`.
///
/// Templates and their names: `logind` (`org.freedesktop.login1`, system),
/// `timedated` (`org.freedesktop.timedate1`, system), `low_memory_monitor`
/// (`org.freedesktop.LowMemoryMonitor`, system), `upower`, `networkmanager`, `power_profiles_daemon`
/// (`net.hadess.PowerProfiles`, system), `iio-sensors-proxy` (`net.hadess.SensorProxy`, system), `notification_daemon`
/// (`org.freedesktop.Notifications`, session), `gnome_screensaver` (`org.gnome.ScreenSaver`, session).
public final class DBusMock: @unchecked Sendable {
    // Why @unchecked Sendable is safe: all stored properties are immutable except `process`,
    // which is only touched while holding `lock`.

    /// The template that was loaded, for example `logind`.
    public let template: String
    /// The well-known name the mock owns, for example `org.freedesktop.login1`.
    public let busName: String
    /// The path of the template's main object, for example `/org/freedesktop/login1`.
    public let mainPath: String
    /// The address of the bus the mock is on.
    public let address: String
    /// The file that receives the mock's output (its method-call log).
    public let logPath: String

    private let lock = NSLock()
    private var process: ChildProcess?

    /// The bus name and main object path of the templates this project uses.
    public static let knownTemplates: [String: (name: String, path: String, system: Bool)] = [
        "logind": ("org.freedesktop.login1", "/org/freedesktop/login1", true),
        "timedated": ("org.freedesktop.timedate1", "/org/freedesktop/timedate1", true),
        "low_memory_monitor": ("org.freedesktop.LowMemoryMonitor", "/org/freedesktop/LowMemoryMonitor", true),
        "notification_daemon": ("org.freedesktop.Notifications", "/org/freedesktop/Notifications", false),
        "gnome_screensaver": ("org.gnome.ScreenSaver", "/org/gnome/ScreenSaver", false),
        "upower": ("org.freedesktop.UPower", "/org/freedesktop/UPower", true),
        "networkmanager": ("org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager", true),
        "power_profiles_daemon": ("net.hadess.PowerProfiles", "/net/hadess/PowerProfiles", true),
        "iio-sensors-proxy": ("net.hadess.SensorProxy", "/net/hadess/SensorProxy", true),
    ]

    /// Starts a mock from a template and waits until it owns its name.
    ///
    /// - Parameters:
    ///   - template: A python-dbusmock template name (see ``knownTemplates``).
    ///   - address: The bus address (for example ``PrivateBus/address``).
    ///   - system: Whether the mock should see the bus as the system bus (`--system`) or the
    ///     session bus (`--session`); `nil` uses the template's own choice.
    ///   - parameters: The template parameters as a JSON object text, for example `{"CanSuspend": "no"}`.
    ///   - timeout: A hang guard for the start, in seconds.
    /// - Throws: ``FixtureError`` if the template is unknown, the process dies, or the name never appears.
    public init(template: String, address: String, system: Bool? = nil, parameters: String? = nil, timeout: Int = 30)
        throws
    {
        guard let known = DBusMock.knownTemplates[template] else {
            throw FixtureError("unknown dbusmock template \(template); add it to DBusMock.knownTemplates")
        }
        self.template = template
        self.busName = known.name
        self.mainPath = known.path
        self.address = address
        let onSystem = system ?? known.system
        logPath =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("dbusmock-\(template)-\(getpid())-\(UUID().uuidString.prefix(8)).log").path

        var arguments = ["-m", "dbusmock", onSystem ? "--system" : "--session", "--template", template]
        if let parameters { arguments += ["-p", parameters] }
        try launch(arguments, system: onSystem, timeout: timeout)
    }

    /// Starts `python3 <arguments>` on the bus and waits until it owns ``busName``.
    private func launch(_ arguments: [String], system: Bool, timeout: Int) throws {
        var environment = ProcessInfo.processInfo.environment
        environment[system ? "DBUS_SYSTEM_BUS_ADDRESS" : "DBUS_SESSION_BUS_ADDRESS"] = address
        let child = try ChildProcess.spawn(
            "/usr/bin/python3", arguments, environment: environment, stdout: .file(logPath))
        lock.withLock { process = child }
        do {
            try waitUntilOwned(by: child, timeout: timeout)
        } catch {
            stop()
            throw error
        }
    }

    /// Starts a bare mock (python-dbusmock without a template): one object with one interface and
    /// no methods yet, for a service that has no template (add them with ``addMethod(path:interface:name:inSignature:outSignature:code:)``).
    ///
    /// - Parameters:
    ///   - name: The bus name to own, for example `org.freedesktop.portal.Desktop`.
    ///   - path: The main object's path.
    ///   - interface: The main object's interface.
    ///   - address: The bus address.
    ///   - system: Whether the mock sees the bus as the system bus.
    ///   - timeout: A hang guard for the start, in seconds.
    /// - Throws: ``FixtureError`` if the process dies or the name never appears.
    public init(name: String, path: String, interface: String, address: String, system: Bool = false, timeout: Int = 30)
        throws
    {
        self.template = ""
        self.busName = name
        self.mainPath = path
        self.address = address
        logPath =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("dbusmock-\(name)-\(getpid())-\(UUID().uuidString.prefix(8)).log").path
        try launch(
            ["-m", "dbusmock", system ? "--system" : "--session", name, path, interface], system: system,
            timeout: timeout)
    }

    /// A stand-in for the desktop's `org.freedesktop.ScreenSaver` (no python-dbusmock template has
    /// it), from its interface: `Inhibit(s application, s reason) → u cookie` answering `cookie`,
    /// and `UnInhibit(u cookie)`. ``methodCalls(_:path:)`` shows what it received.
    ///
    /// - Parameters:
    ///   - address: The session bus address.
    ///   - cookie: What `Inhibit` returns.
    /// - Throws: ``FixtureError`` if the mock does not start.
    public static func freedesktopScreenSaver(address: String, cookie: UInt32) throws -> DBusMock {
        let mock = try DBusMock(
            name: "org.freedesktop.ScreenSaver", path: "/org/freedesktop/ScreenSaver",
            interface: "org.freedesktop.ScreenSaver", address: address)
        try mock.addMethod(
            interface: "org.freedesktop.ScreenSaver", name: "Inhibit", inSignature: "ss", outSignature: "u",
            code: "ret = dbus.UInt32(\(cookie))")
        try mock.addMethod(
            interface: "org.freedesktop.ScreenSaver", name: "UnInhibit", inSignature: "u", outSignature: "", code: "")
        return mock
    }

    /// How many calls of `method` the mock received (``calls(_:path:)``, counted).
    public func callCount(_ method: String, path: String? = nil) throws -> Int {
        try calls(method, path: path).count
    }

    /// The calls of `method` the mock received, oldest first: each call's arguments as gdbus
    /// text, for example `[<'app'>, <uint32 0>, <'summary'>]`.
    ///
    /// - Parameters:
    ///   - method: The method name.
    ///   - path: The object; defaults to the main object.
    /// - Throws: ``FixtureError`` if the call fails or its reply is not `a(tav)` text.
    public func calls(_ method: String, path: String? = nil) throws -> [String] {
        try callRecords(method, path: path).map(\.arguments)
    }

    /// When the mock received each call of `method`, oldest first, in whole seconds since the
    /// epoch (python-dbusmock records `int(time.time())`): for a test that a call came no earlier
    /// than a time, without a wall-clock wait before looking.
    ///
    /// - Parameters:
    ///   - method: The method name.
    ///   - path: The object; defaults to the main object.
    /// - Throws: ``FixtureError`` if the call fails or its reply is not `a(tav)` text.
    public func callTimes(_ method: String, path: String? = nil) throws -> [UInt64] {
        try callRecords(method, path: path).map(\.time)
    }

    private func callRecords(_ method: String, path: String?) throws -> [(time: UInt64, arguments: String)] {
        let text = try methodCalls(method, path: path)
        guard let calls = DBusMock.parseMethodCallRecords(text) else {
            throw FixtureError("GetMethodCalls(\(method)) answered what is not a(tav): \(text)")
        }
        return calls
    }

    /// The time and the arguments of each call in `GetMethodCalls`' gdbus text,
    /// `([(uint64 t, [<arg>, …]), (t, [<arg>, …])],)` (gdbus names the type of the first element only),
    /// or `(@a(tav) [],)` for none; `nil` for other text.
    ///
    /// The text is split where it is at depth 0 outside string literals, so an argument that
    /// contains `(1, [` or a quote counts as one argument.
    static func parseMethodCallRecords(_ text: String) -> [(time: UInt64, arguments: String)]? {
        let characters = Array(text.trimmingCharacters(in: .whitespacesAndNewlines))
        guard characters.first == "(", let open = characters.firstIndex(of: "[") else { return nil }
        // The top-level array's elements: (t, av) tuples, split at depth-0 commas.
        var elements: [String] = []
        var depth = 0
        var quote: Character?
        var escaped = false
        var start: Int?
        for index in (open + 1)..<characters.count {
            let character = characters[index]
            if let closing = quote {
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == closing {
                    quote = nil
                }
                continue
            }
            switch character {
            case "'", "\"": quote = character
            case "(", "[", "{", "<":
                if depth == 0, character == "(" { start = index }
                depth += 1
            case ")", "]", "}", ">":
                if depth == 0 {
                    // The end of the top-level array: each element's arguments, after its time
                    // ("uint64 1764142667, [<'app'>, …]" or "1764142668, […]").
                    guard character == "]" else { return nil }
                    var records: [(time: UInt64, arguments: String)] = []
                    for element in elements {
                        guard let comma = element.firstIndex(of: ",") else { return nil }
                        let timeText = element[..<comma].split(separator: " ").last.map(String.init) ?? ""
                        guard let time = UInt64(timeText) else { return nil }
                        records.append(
                            (time, element[element.index(after: comma)...].trimmingCharacters(in: .whitespaces)))
                    }
                    return records
                }
                depth -= 1
                if depth == 0, character == ")", let first = start {
                    elements.append(String(characters[(first + 1)..<index]))
                    start = nil
                }
            default: break
            }
        }
        return nil
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: logPath)
    }

    /// The pid of the mock process, or `nil` after ``stop()``.
    public var pid: pid_t? { lock.withLock { process?.pid } }

    /// Stops the mock (SIGTERM to its own pid, then reaps it). Safe to call more than once.
    public func stop() {
        let child = lock.withLock { () -> ChildProcess? in
            defer { process = nil }
            return process
        }
        child?.terminateAndWait()
    }

    /// The mock's output so far (its log of method calls), for diagnosing a failed test.
    public var log: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    // MARK: Driving the mock

    /// Calls any method on the bus with `gdbus call` and returns gdbus's printed reply.
    ///
    /// - Parameters:
    ///   - path: The object path; defaults to the template's main object.
    ///   - interface: The method's interface.
    ///   - method: The method name.
    ///   - arguments: The arguments as GVariant text.
    ///   - destination: The bus name to call; defaults to the mock's name.
    /// - Returns: gdbus's output, for example `('/org/freedesktop/login1/session/c1',)`.
    /// - Throws: ``FixtureError`` with gdbus's output if the call fails.
    @discardableResult
    public func call(
        path: String? = nil, interface: String, method: String, arguments: [String] = [], destination: String? = nil
    ) throws -> String {
        let result = try ChildProcess.run(
            "/usr/bin/gdbus",
            [
                "call", "--address", address, "--dest", destination ?? busName,
                "--object-path", path ?? mainPath, "--method", "\(interface).\(method)", "--",
            ] + arguments)
        guard result.status == 0 else {
            throw FixtureError("gdbus call \(interface).\(method) failed (\(result.status)): \(result.output)")
        }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Emits a signal from a mock object (`org.freedesktop.DBus.Mock.EmitSignal`).
    ///
    /// - Parameters:
    ///   - path: The emitting object; defaults to the main object.
    ///   - interface: The signal's interface (`""` means the object's main interface).
    ///   - name: The signal name, for example `PrepareForSleep`.
    ///   - signature: The signal's signature, for example `b`.
    ///   - arguments: Each argument as GVariant text, for example `["true"]`.
    /// - Throws: ``FixtureError`` if the call fails.
    public func emitSignal(path: String? = nil, interface: String, name: String, signature: String, arguments: [String])
        throws
    {
        let av = arguments.isEmpty ? "@av []" : "[" + arguments.map { "<\($0)>" }.joined(separator: ", ") + "]"
        try call(
            path: path, interface: DBusMock.mockInterface, method: "EmitSignal",
            arguments: [DBusMock.quote(interface), DBusMock.quote(name), DBusMock.quote(signature), av])
    }

    /// Sets properties and emits `PropertiesChanged` (`org.freedesktop.DBus.Mock.UpdateProperties`).
    ///
    /// The properties must already exist on the object.
    ///
    /// - Parameters:
    ///   - path: The object; defaults to the main object.
    ///   - interface: The properties' interface.
    ///   - properties: Property names to GVariant text values, for example `["LockedHint": "true"]`.
    /// - Throws: ``FixtureError`` if the call fails (for example an unknown property).
    public func updateProperties(path: String? = nil, interface: String, properties: [String: String]) throws {
        let dict =
            properties.isEmpty
            ? "@a{sv} {}"
            : "{"
                + properties.sorted { $0.key < $1.key }.map { "\(DBusMock.quote($0.key)): <\($0.value)>" }
                .joined(separator: ", ") + "}"
        try call(
            path: path, interface: DBusMock.mockInterface, method: "UpdateProperties",
            arguments: [DBusMock.quote(interface), dict])
    }

    /// Adds a method to a mock object (`org.freedesktop.DBus.Mock.AddMethod`).
    ///
    /// - Parameters:
    ///   - path: The object; defaults to the main object.
    ///   - interface: The method's interface.
    ///   - name: The method name.
    ///   - inSignature: The input signature.
    ///   - outSignature: The output signature.
    ///   - code: Python code run on call; `args` holds the arguments, set `ret` for the reply.
    /// - Throws: ``FixtureError`` if the call fails.
    public func addMethod(
        path: String? = nil, interface: String, name: String, inSignature: String, outSignature: String, code: String
    ) throws {
        try call(
            path: path, interface: DBusMock.mockInterface, method: "AddMethod",
            arguments: [
                DBusMock.quote(interface), DBusMock.quote(name), DBusMock.quote(inSignature),
                DBusMock.quote(outSignature), DBusMock.quote(code),
            ])
    }

    /// Adds a property to a mock object (`org.freedesktop.DBus.Mock.AddProperty`).
    ///
    /// For example logind's `InhibitDelayMaxUSec`, which the 0.28.7 template does not define:
    /// `addProperty(interface: "org.freedesktop.login1.Manager", name: "InhibitDelayMaxUSec", value: "uint64 5000000")`.
    ///
    /// - Parameters:
    ///   - path: The object; defaults to the main object.
    ///   - interface: The property's interface.
    ///   - name: The property name.
    ///   - value: The value as GVariant text (its type becomes the property's type).
    /// - Throws: ``FixtureError`` if the call fails (for example the property exists).
    public func addProperty(path: String? = nil, interface: String, name: String, value: String) throws {
        try call(
            path: path, interface: DBusMock.mockInterface, method: "AddProperty",
            arguments: [DBusMock.quote(interface), DBusMock.quote(name), "<\(value)>"])
    }

    /// Adds a logind session (logind template's `org.freedesktop.DBus.Mock.AddSession`).
    ///
    /// Creates the seat and user objects if needed. The session object
    /// (`org.freedesktop.login1.Session`) has `Lock`/`Unlock` methods that emit the `Lock`/`Unlock`
    /// signals and `SetLockedHint(b)` that updates `LockedHint` with `PropertiesChanged`.
    ///
    /// - Parameters:
    ///   - id: The session id, for example `c1`.
    ///   - seat: The seat, for example `seat0`.
    ///   - uid: The user id.
    ///   - username: The user name.
    ///   - active: The initial `Active` property.
    /// - Returns: The session's object path, `/org/freedesktop/login1/session/<id>`.
    /// - Throws: ``FixtureError`` if the call fails (for example the session exists).
    @discardableResult
    public func addSession(id: String, seat: String = "seat0", uid: UInt32, username: String, active: Bool) throws
        -> String
    {
        let output = try call(
            interface: DBusMock.mockInterface, method: "AddSession",
            arguments: [
                DBusMock.quote(id), DBusMock.quote(seat), "uint32 \(uid)", DBusMock.quote(username),
                active ? "true" : "false",
            ])
        return DBusMock.firstString(in: output) ?? "/org/freedesktop/login1/session/\(id)"
    }

    /// The calls the mock has recorded for a method (`org.freedesktop.DBus.Mock.GetMethodCalls`), as gdbus text.
    ///
    /// - Parameters:
    ///   - method: The method name.
    ///   - path: The object; defaults to the main object.
    /// - Throws: ``FixtureError`` if the call fails.
    public func methodCalls(_ method: String, path: String? = nil) throws -> String {
        try call(
            path: path, interface: DBusMock.mockInterface, method: "GetMethodCalls", arguments: [DBusMock.quote(method)]
        )
    }

    /// The mock control interface, `org.freedesktop.DBus.Mock`.
    public static let mockInterface = "org.freedesktop.DBus.Mock"

    /// Quotes a string as a GVariant text literal (single quotes, escaped).
    ///
    /// - Parameters:
    ///   - string: The raw string.
    public static func quote(_ string: String) -> String {
        var result = "'"
        for character in string {
            switch character {
            case "'": result += "\\'"
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            default: result.append(character)
            }
        }
        return result + "'"
    }

    static func firstString(in output: String) -> String? {
        guard let start = output.firstIndex(of: "'") else { return nil }
        let rest = output[output.index(after: start)...]
        guard let end = rest.firstIndex(of: "'") else { return nil }
        return String(rest[..<end])
    }

    /// Waits until `busName` is owned by `child`'s process.
    ///
    /// The wait is on `gdbus wait` (it returns when the name appears). A previous owner that
    /// has just been killed may still hold the name for a moment, so the owner's pid is
    /// checked, and the wait repeated only while the name still belongs to someone else.
    private func waitUntilOwned(by child: ChildProcess, timeout: Int) throws {
        let deadline = Date().addingTimeInterval(TimeInterval(timeout))
        while Date() < deadline {
            if child.hasExited {
                throw FixtureError("dbusmock \(template) exited early; log:\n\(log)")
            }
            let wait = try ChildProcess.run(
                "/usr/bin/gdbus", ["wait", "--address", address, "--timeout", "\(timeout)", busName])
            guard wait.status == 0 else { continue }
            let owner = try ChildProcess.run(
                "/usr/bin/gdbus",
                [
                    "call", "--address", address, "--dest", "org.freedesktop.DBus", "--object-path",
                    "/org/freedesktop/DBus",
                    "--method", "org.freedesktop.DBus.GetConnectionUnixProcessID", busName,
                ])
            if owner.status == 0, owner.output.contains("uint32 \(child.pid),") {
                return
            }
            usleep(10_000)
        }
        throw FixtureError("dbusmock \(template) did not own \(busName) within \(timeout) s; log:\n\(log)")
    }
}
