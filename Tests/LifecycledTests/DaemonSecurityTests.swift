import AppLifecycle
import AppLifecycleSystemd
import AppLifecycleTesting
import Foundation
import Glibc
import LifecycledProtocol
import LifecycledTestSupport
import Synchronization
import SystemdBus
import Testing

@testable import LifecycleDaemon

@Suite("lifecycled security and validation", .serialized, .timeLimit(.minutes(2)))
@MainActor
struct DaemonSecurityTests {
    @Test func theUIDCheckRefusesOtherUsersAndUnknownCredentials() throws {
        let policy = CallerPolicy(uid: 1000)
        #expect(throws: Never.self) {
            try policy.check(BusCredentials(uniqueName: ":1.1", uid: 1000, pid: 1), member: "ListApps")
        }
        for credentials in [
            BusCredentials(uniqueName: ":1.2", uid: 0, pid: 1), BusCredentials(uniqueName: ":1.3", uid: nil, pid: 1),
            nil,
        ] {
            do {
                try policy.check(credentials, member: "ListApps")
                Issue.record("\(String(describing: credentials)) was accepted")
            } catch {
                #expect(error.name == BusError.Name.accessDenied)
            }
        }
        #expect(CallerPolicy.isSameApp(callerPID: 10, appPID: 10, processGroup: { _ in 1 }))
        #expect(CallerPolicy.isSameApp(callerPID: 11, appPID: 10, processGroup: { _ in 10 }))
        #expect(!CallerPolicy.isSameApp(callerPID: 12, appPID: 10, processGroup: { _ in 12 }))
    }

    @Test(.enabled(if: getuid() == 0, "needs root to call as another uid"))
    func aCallerOfAnotherUIDIsRefusedWithAccessDenied() async throws {
        try await withDaemon { (h: DaemonHarness) async throws in
            let call = [
                "/usr/bin/gdbus", "call", "--address", h.bus.address, "--dest", LifecycledProtocol.busName,
                "--object-path", LifecycledProtocol.objectPath, "--method",
            ]
            // A method, and the properties: reading them is a call too (Get and GetAll).
            let calls = [
                call + ["\(LifecycledProtocol.interface).ListApps"],
                call + [
                    "org.freedesktop.DBus.Properties.Get", LifecycledProtocol.interface,
                    LifecycledProtocol.Property.apps.name,
                ],
                call + ["org.freedesktop.DBus.Properties.GetAll", LifecycledProtocol.interface],
                // A Set of a read-only property answered PropertyReadOnly to anyone; it is refused first.
                call + [
                    "org.freedesktop.DBus.Properties.Set", LifecycledProtocol.interface,
                    LifecycledProtocol.Property.simulationEnabled.name, "<false>",
                ],
                // The distributor's interfaces have no properties: GetAll answered {} to anyone.
                [
                    "/usr/bin/gdbus", "call", "--address", h.bus.address, "--dest",
                    UnifiedPush.lifecycledDistributorName, "--object-path", UnifiedPush.distributorPath, "--method",
                    "org.freedesktop.DBus.Properties.GetAll", UnifiedPush.distributor2,
                ],
                [
                    "/usr/bin/gdbus", "call", "--address", h.bus.address, "--dest",
                    UnifiedPush.lifecycledDistributorName, "--object-path", UnifiedPush.distributorPath, "--method",
                    "org.freedesktop.DBus.Properties.GetAll", UnifiedPush.distributor1,
                ],
            ]
            for gdbus in calls {
                let same = try await runTool(gdbus[0], Array(gdbus.dropFirst()))
                let isSet = gdbus.contains("org.freedesktop.DBus.Properties.Set")
                // The daemon's own user gets the real answer: the values, or PropertyReadOnly for a Set.
                #expect(
                    isSet ? same.stderr.contains("PropertyReadOnly") : same.status == 0,
                    "\(gdbus.last!): \(same.stderr)")
                // The private bus lets every uid connect; the daemon itself must refuse.
                let foreign = try await runTool(
                    "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups"] + gdbus)
                #expect(foreign.status != 0, "\(gdbus.last!) as uid 65534: \(foreign.stdout)")
                #expect(foreign.stderr.contains("org.freedesktop.DBus.Error.AccessDenied"), "\(foreign.stderr)")
                #expect(foreign.stderr.contains("uid 65534"), "\(foreign.stderr)")
            }
            // The methods that change what the daemon keeps for a user (background fetch, the
            // refresh switch, exemptions): another uid is refused before any argument is looked at.
            for (member, arguments) in [
                (LifecycledProtocol.Method.performFetch, ["org.example.Any"]),
                (.setBackgroundRefresh, ["org.example.Any", "false"]),
                (.setMinimumBackgroundFetchInterval, ["org.example.Any", "900.0"]),
                (.setFreezeExempt, ["org.example.Any", "true"]),
            ] {
                let foreign = try await runTool(
                    "/usr/bin/setpriv",
                    ["--reuid=65534", "--regid=65534", "--clear-groups"] + call
                        + ["\(LifecycledProtocol.interface).\(member.name)"] + arguments)
                #expect(
                    foreign.stderr.contains("org.freedesktop.DBus.Error.AccessDenied"), "\(member): \(foreign.stderr)")
                #expect(foreign.stderr.contains("uid 65534"), "\(member): \(foreign.stderr)")
            }
        }
    }

    @Test func thePropertiesBehindTheUIDCheckStillAnnounceTheirChanges() async throws {
        try await withDaemon { (h: DaemonHarness) async throws in
            let locked = Mutex<Bool?>(nil)
            let changed = ChangeSignal()
            let subscription = try await h.client.connection.observeProperties(
                sender: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
                interface: LifecycledProtocol.interface
            ) { change in
                guard let state = change.changed[LifecycledProtocol.Property.hostState.name]?.dictionaryValue else {
                    return
                }
                locked.withLock { $0 = state["locked"]?.unwrapped.boolValue }
                changed.signal()
            }
            defer { subscription.cancel() }
            try await h.client.call(LifecycledProtocol.Method.simulate.name, [.string("lock"), encodeInfo([:])])
            try await changed.wait(for: "HostState to change to locked") { locked.withLock { $0 } == true }
        }
    }

    @Test func malformedCallsAreRefusedWithTheRightErrorNames() async throws {
        try await withDaemon(setUp: { dir in
            try writeManifest(dir, id: "org.example.Known", executable: "/bin/true")
        }) { (h: DaemonHarness) async throws in
            typealias M = LifecycledProtocol.Method
            let invalidArgs = BusError.Name.invalidArgs
            let empty = encodeInfo([:])
            var deep: UserInfoValue = .int(1)
            for _ in 0..<12 { deep = .dictionary(["d": deep]) }
            let cases: [(M, [BusValue], String)] = [
                (M.registerApp, [.string("not an id")], invalidArgs),
                (M.registerApp, [.string("org." + String(repeating: "a", count: 300))], invalidArgs),
                (M.registerApp, [.string("1org.example")], invalidArgs),
                (M.registerApp, [.int32(5)], invalidArgs),  // wrong signature: sd-bus refuses it
                (M.reportState, [.string("org.example.Known"), .string("bogus")], invalidArgs),
                (
                    M.reportState, [.string("org.example.Known"), .string("active")],
                    LifecycledProtocol.ErrorName.notRegistered
                ),
                (M.reportNotification, [.string("org.example.Known"), .string(""), empty], invalidArgs),
                (
                    M.reportNotification,
                    [.string("org.example.Known"), .string(String(repeating: "n", count: 256)), empty], invalidArgs
                ),
                (M.post, [.string("org.example.Known"), .string("N"), encodeInfo(["deep": deep])], invalidArgs),
                (
                    M.post,
                    [
                        .string("org.example.Known"), .string("N"),
                        .vardict(["d": .structure([.string("date"), .variant(.double(.nan))])]),
                    ], invalidArgs
                ),
                (
                    M.scheduleNotification,
                    [
                        .string("org.example.Known"),
                        .vardict(["userInfo": .vardict(["d": .structure([.string("date"), .variant(.double(1e300))])])]
                        ),
                    ], invalidArgs
                ),
                (
                    M.post, [.string("org.example.Known"), .string("N"), empty],
                    LifecycledProtocol.ErrorName.notRegistered
                ),
                (M.post, [.string("org.example.Nope"), .string("N"), empty], LifecycledProtocol.ErrorName.unknownApp),
                (
                    M.backgroundTaskBegan, [.string("org.example.Known"), .uint32(1), .string("t")],
                    LifecycledProtocol.ErrorName.notRegistered
                ),
                (M.openURL, [.string(""), empty], LifecycledProtocol.ErrorName.invalidURL),
                (
                    M.openURL, [.string("x://" + String(repeating: "u", count: 9000)), empty],
                    LifecycledProtocol.ErrorName.invalidURL
                ),
                (M.openURL, [.string("nothing-claims-this://x"), empty], LifecycledProtocol.ErrorName.noHandler),
                (M.launch, [.string("org.example.Nope"), empty], LifecycledProtocol.ErrorName.unknownApp),
                (M.terminate, [.string("org.example.Nope")], LifecycledProtocol.ErrorName.unknownApp),
                (M.getState, [.string("org.example.Nope")], LifecycledProtocol.ErrorName.unknownApp),
                (M.getState, [.string("")], invalidArgs),
                (M.simulate, [.string("explode"), empty], invalidArgs),
                (M.simulate, [.string("memory-warning"), encodeInfo(["level": .string("huge")])], invalidArgs),
            ]
            for (member, arguments, expected) in cases {
                let name = await h.client.errorName(member.name, arguments)
                #expect(name == expected, "\(member)\(arguments.map(\.signature)) gave \(name ?? "success")")
            }
            // Nothing crashed and nothing was stored: the daemon still answers, the app is not running.
            #expect(
                try await h.client.call(M.getState.name, [.string("org.example.Known")]).first?.stringValue
                    == "not-running")
        }
    }

    @Test func simulateIsRefusedUnlessEnabled() async throws {
        try await withDaemon(simulate: false) { (h: DaemonHarness) async throws in
            #expect(
                await h.client.errorName(LifecycledProtocol.Method.simulate.name, [.string("sleep"), encodeInfo([:])])
                    == LifecycledProtocol.ErrorName.simulationDisabled)
            #expect(try await h.client.property(LifecycledProtocol.Property.simulationEnabled.name) == .bool(false))
            #expect(
                try await h.client.property(LifecycledProtocol.Property.hostState.name).dictionaryValue?["sleeping"]?
                    .unwrapped == .bool(false))
            #expect(try await h.client.property(LifecycledProtocol.Property.version.name) == .uint32(1))
        }
        try await withDaemon(simulate: true) { (h: DaemonHarness) async throws in
            #expect(try await h.client.property(LifecycledProtocol.Property.simulationEnabled.name) == .bool(true))
            try await h.client.call(LifecycledProtocol.Method.simulate.name, [.string("lock"), encodeInfo([:])])
            #expect(
                try await h.client.property(LifecycledProtocol.Property.hostState.name).dictionaryValue?["locked"]?
                    .unwrapped
                    == .bool(true))
        }
    }

    @Test func simulationKindsParse() throws {
        #expect(try Simulation.parse(kind: "sleep", arguments: [:]) == .event(.sleeping(true)))
        #expect(try Simulation.parse(kind: "unlock", arguments: [:]) == .event(.locked(false)))
        #expect(
            try Simulation.parse(kind: "memory-warning", arguments: ["level": .string("low")])
                == .event(.memoryWarning(MemoryWarning(level: .low, source: "simulate"))))
        #expect(
            try Simulation.parse(
                kind: "time-change", arguments: ["reason": .string("timezone"), "timezone": .string("Europe/Paris")])
                == .event(
                    .significantTimeChange(SignificantTimeChange(reason: .timeZone, timeZoneIdentifier: "Europe/Paris"))
                ))
        #expect(
            try Simulation.parse(kind: "terminate", arguments: ["app": .string("org.example.A")])
                == .terminateApp("org.example.A"))
        #expect(try Simulation.parse(kind: "terminate", arguments: [:]) == .event(.terminate(.hostRequest)))
        #expect(throws: BusError.self) { try Simulation.parse(kind: "terminate", arguments: ["app": .int(3)]) }
    }

    @Test func onlyCommandsThatCanMoveASuspendedAppResumeIt() {
        func resumes(_ event: HostEvent) -> Bool { LifecycledCommand.hostEvent(event).resumesSuspendedApp }
        #expect(resumes(.sleeping(false)))
        #expect(!resumes(.sleeping(true)))
        #expect(resumes(.foreground(true)))
        #expect(!resumes(.foreground(false)))
        #expect(resumes(.sessionActive(true)))
        #expect(!resumes(.locked(false)))
        #expect(!resumes(.significantTimeChange(SignificantTimeChange(reason: .midnight))))
        let note = LocalNotification(identifier: "n")
        for event: HostEvent in [
            .openURL(URL(string: "counter://x")!, OpenURLOptions()), .terminate(.hostRequest), .backgroundFetch,
            .localNotification(note), .localNotificationOpened(note),
            .localNotificationAction(identifier: "a", notification: note),
            .shortcutItem(ShortcutItem(type: "t", localizedTitle: "T")),
        ] {
            #expect(resumes(event), "\(event)")
        }
        #expect(LifecycledCommand.post(name: "n", userInfo: [:]).resumesSuspendedApp)
        // Facts about the schedule and the badge wait in the socket until the app runs again.
        #expect(!LifecycledCommand.scheduleChanged(removed: [], updated: []).resumesSuspendedApp)
        #expect(!resumes(.scheduledLocalNotifications([])))
        #expect(!resumes(.applicationIconBadgeNumber(1)))
    }
}
