import AppLifecycle
import Foundation
import LifecycledProtocol
import SystemdBus
import Testing

@Suite("lifecycled protocol encodings")
struct LifecycledProtocolTests {
    @Test("every forwarded host event survives a Command round trip")
    func commandRoundTrip() throws {
        let events: [HostEvent] = [
            .sleeping(true), .locked(false), .sessionActive(true), .foreground(false), .focused(false),
            .terminate(.shutdown),
            .significantTimeChange(.init(reason: .timeZone, timeZoneIdentifier: "Europe/Berlin")),
            .memoryWarning(.init(level: .critical, source: "psi")),
            .openURL(
                URL(string: "notes://n/1")!, OpenURLOptions(sourceApplication: "org.example.Mail", annotation: ["k": 1])
            ),
            .remoteNotification(["aps": ["alert": "hi"]]),
            .localNotification(LocalNotification(identifier: "tea", alertBody: "Tea")),
            .backgroundFetch,
        ]
        for event in events {
            let (command, arguments) = try #require(HostEventBusCodec.encode(event))
            #expect(HostEventBusCodec.decode(command: command, arguments: arguments) == event, "\(command)")
        }
        #expect(HostEventBusCodec.encode(.statusBarFrame(.zero)) == nil)
    }

    @Test("bad commands and arguments decode to nil")
    func badCommands() {
        #expect(HostEventBusCodec.decode(command: "reboot", arguments: [:]) == nil)
        #expect(HostEventBusCodec.decode(command: "sleeping", arguments: ["value": "yes"]) == nil)
        #expect(HostEventBusCodec.decode(command: "memory-warning", arguments: ["level": "huge"]) == nil)
        #expect(HostEventBusCodec.decode(command: "open-url", arguments: ["url": "no scheme"]) == nil)
        #expect(
            HostEventBusCodec.decode(
                command: "open-url", arguments: ["url": .string("x://" + String(repeating: "a", count: 9000))]) == nil)
    }

    @Test("app ids and userInfo limits")
    func validation() {
        #expect(LifecycledProtocol.isValidAppID("org.example.Notes"))
        #expect(LifecycledProtocol.isValidAppID("io.github.my-app_2"))
        #expect(LifecycledProtocol.isValidAppID("_org.Example9.a-1"))
        for bad in [
            "", "notes", "org..example", "org.1example", "org.example.-x", "org.exa mple", "org.ex/ample",
            "org.example.",
            ".org.example", "org.exämple.x", String(repeating: "a.", count: 200) + "a",
        ] {
            #expect(!LifecycledProtocol.isValidAppID(bad), "\(bad)")
        }
        var deep: UserInfoValue = "leaf"
        for _ in 0..<10 { deep = ["k": deep] }
        #expect(throws: ApplicationError.self) { try LifecycledProtocol.validate(["deep": deep]) }
        #expect(throws: Never.self) { try LifecycledProtocol.validate(["ok": ["a": 1]]) }
        let many = UserInfo(
            Dictionary(uniqueKeysWithValues: (0..<2000).map { ("k\($0)", UserInfoValue.int(Int64($0))) }))
        #expect(throws: ApplicationError.self) { try LifecycledProtocol.validate(many) }
    }

    @Test("a NaN or infinity is refused wherever it sits, and cannot hide a payload over the size limit")
    func nonFiniteNumbersAndTheSizeOfWhatIsSent() throws {
        for bad: UserInfoValue in [.double(.nan), .double(.infinity), .double(-.infinity)] {
            let refused = #expect(throws: ApplicationError.self) {
                try LifecycledProtocol.validate(["n": ["deep": [1, bad]]])
            }
            #expect(refused?.description.contains("n.deep[1]") == true, "\(String(describing: refused))")
        }
        // 4 MiB next to an infinity: before, the JSON encoder threw on the infinity, the size check
        // measured "{}" (2 bytes) and the payload went through.
        let big = UserInfoValue.string(String(repeating: "x", count: 4 << 20))
        #expect(throws: ApplicationError.self) { try LifecycledProtocol.validate(["b": big, "n": .double(.infinity)]) }
        #expect(throws: ApplicationError.self) { try LifecycledProtocol.validate(["b": big]) }
        // The size is the D-Bus form's: just under the limit passes, just over does not.
        let overhead = UserInfoBusCodec.wireSize(of: ["k": ""])
        let limit = LifecycledProtocol.Limits.userInfoBytes
        let fits: UserInfo = ["k": .string(String(repeating: "y", count: limit - overhead))]
        #expect(UserInfoBusCodec.wireSize(of: fits) == limit)
        #expect(throws: Never.self) { try LifecycledProtocol.validate(fits) }
        let over: UserInfo = ["k": .string(String(repeating: "y", count: limit - overhead + 1))]
        #expect(throws: ApplicationError.self) { try LifecycledProtocol.validate(over) }
        // The JSON text never drops keys for a number JSON cannot spell.
        #expect(UserInfo(["a": 1, "n": .double(.nan)]).json == #"{"a":1,"n":"nan"}"#)
    }

    /// A date is a number too: NaN became -4712-01-01 and 1e300 the year 506713 on their way
    /// through the calendar, silently. Year 1 to 9999 pass; anything else is refused, by the
    /// validation and by the D-Bus decoder alike.
    @Test func datesOutsideYearOneToNineThousandNineHundredNinetyNineAreRefused() throws {
        for seconds in [Double.nan, .infinity, -.infinity, 1e300, -1e300, 253_402_300_800, -62_135_596_801] {
            let refused = #expect(throws: ApplicationError.self) {
                try LifecycledProtocol.validate(["when": ["at": [.date(Date(timeIntervalSince1970: seconds))]]])
            }
            #expect(refused?.description.contains("when.at[0]") == true, "\(String(describing: refused))")
            #expect(refused?.description.contains("date") == true)
            let wire = BusValue.vardict(["d": .structure([.string("date"), .variant(.double(seconds))])])
            #expect(throws: ApplicationError.self, "\(seconds) decoded") {
                try UserInfoBusCodec.decodeUserInfo(wire)
            }
        }
        for seconds in [253_402_300_799, -62_135_596_800, 0, 1_800_000_000.5] {
            let info: UserInfo = ["d": .date(Date(timeIntervalSince1970: seconds))]
            #expect(throws: Never.self) { try LifecycledProtocol.validate(info) }
            #expect(try UserInfoBusCodec.decodeUserInfo(UserInfoBusCodec.encode(info)) == info)
        }
    }
}
