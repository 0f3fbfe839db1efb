import DesktopIntegration
import FleetProtocol

/// One fuzz target: a decoder of outside input, driven with one input at a time.
///
/// `run` must return normally for every input: a decoder answers bad input with an error, never a
/// trap. A target may also check a property of what decoded (that it encodes and decodes back to
/// itself); a broken property is reported with ``FuzzTarget/fail(_:)``, which traps so libFuzzer
/// records the input as a crash.
struct FuzzTarget: Sendable {
    /// The name `FUZZ_TARGET` selects, and the directory of its corpus under `Fuzz/Corpus/`.
    let name: String
    /// What it feeds, for the usage text.
    let summary: String
    /// Runs one input.
    let run: @Sendable ([UInt8]) -> Void

    /// Every target, in the order `make fuzz-smoke` runs them.
    static let all: [FuzzTarget] = [
        ManifestFuzzing.target,
        ScheduleFileFuzzing.target,
        FetchScheduleFuzzing.target,
        PushQueueFuzzing.target,
        PushRegistrationsFuzzing.target,
        FleetConfigurationFuzzing.target,
        DesktopEntryFuzzing.target,
        MIMEAppsFuzzing.target,
        UserInfoCodecFuzzing.target,
        CommandCodecFuzzing.target,
        WebPushDecryptionFuzzing.target,
        VAPIDFuzzing.target,
        PushEnvelopeFuzzing.target,
        RegistrationRecordFuzzing.target,
        GatewayHTTPFuzzing.target,
        GatewayRequestFuzzing.target,
    ]

    /// The target called `name`, if there is one.
    static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }

    /// Reports a broken property of a decoder: traps, so libFuzzer saves the input.
    static func fail(_ message: String, file: StaticString = #file, line: UInt = #line) -> Never {
        fatalError("fuzz property broken: \(message)", file: file, line: line)
    }
}
