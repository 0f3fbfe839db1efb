import AppLifecycle
import SystemdBus

@testable import LifecycledProtocol

/// The userInfo codec (`UserInfoBusCodec`): a D-Bus value tree drawn from the input
/// (``BusValueGenerator``) and sent through sd-bus's marshalling (``WireMarshalling``) is decoded as a userInfo and as a single value, checked with the
/// protocol's limits, and what decodes must encode and decode back to itself (the codec's
/// lenient reading is idempotent).
enum UserInfoCodecFuzzing {
    static let target = FuzzTarget(name: "userinfo-codec", summary: "userInfo D-Bus codec (generated BusValue trees)") {
        bytes in
        var generator = BusValueGenerator(input: FuzzInput(bytes))
        let generated = generator.input.flag() ? generator.vardict() : generator.value()
        guard let value = WireMarshalling.roundTrip(generated) else { return }
        _ = UserInfoBusCodec.wireSize(of: value)
        if let userInfo = try? UserInfoBusCodec.decodeUserInfo(value) {
            try? LifecycledProtocol.validate(userInfo)
            let encoded = UserInfoBusCodec.encode(userInfo)
            // What lifecycled and apps send: sd-bus must marshal it and read it back.
            guard let sent = WireMarshalling.roundTrip(encoded, mustArrive: true),
                let again = try? UserInfoBusCodec.decodeUserInfo(sent)
            else {
                FuzzTarget.fail("a decoded userInfo does not decode after encoding: \(encoded)")
            }
            if !FuzzValues.containsNaN(.dictionary(userInfo.values)), again != userInfo {
                FuzzTarget.fail("userInfo changed on a round trip: \(userInfo) → \(again)")
            }
            guard UserInfoBusCodec.wireSize(of: userInfo) == UserInfoBusCodec.wireSize(of: encoded) else {
                FuzzTarget.fail("wireSize disagrees with the encoded form")
            }
        }
        if let decoded = try? UserInfoBusCodec.decode(value) {
            guard let again = try? UserInfoBusCodec.decode(UserInfoBusCodec.encode(decoded)) else {
                FuzzTarget.fail("a decoded value does not decode after encoding: \(decoded)")
            }
            if !FuzzValues.containsNaN(decoded), again != decoded {
                FuzzTarget.fail("value changed on a round trip: \(decoded) → \(again)")
            }
        }
    }
}
