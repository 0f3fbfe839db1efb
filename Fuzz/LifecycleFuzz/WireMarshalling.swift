import CSystemd
import Glibc

@testable import SystemdBus

/// Sends a generated value through real D-Bus marshalling: sd-bus appends it to a signal message
/// (`BusMessageCodec.append`, as every reply and signal is built), seals it (the wire bytes are
/// final), and reads it back from those bytes (`BusMessageCodec.readAll`, as every incoming call
/// is read). The codecs are then fed what came back, so they decode what a peer's bytes decode to.
///
/// sd-bus makes messages only on a started bus: this one is one end of a socket pair whose other
/// end nobody reads; nothing is ever sent.
enum WireMarshalling {
    nonisolated(unsafe) private static let bus: OpaquePointer = {
        var pair: [Int32] = [-1, -1]
        var bus: OpaquePointer?
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0,
            sd_bus_new(&bus) >= 0, let bus, sd_bus_set_fd(bus, pair[0], pair[0]) >= 0, sd_bus_start(bus) >= 0
        else {
            fatalError("LifecycleFuzz: cannot make an sd-bus object for marshalling")
        }
        return bus
    }()

    /// The value after a trip through the wire format, or `nil` when no peer could send it: it is
    /// beyond the D-Bus specification's limits, sd-bus refuses to marshal it, or sd-bus marshals
    /// it and then refuses to read the sealed message (`EBADMSG`; it does so for some deeply
    /// nested values, see Fuzz/README.md). A value read back must be the value sent.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - mustArrive: The value is one the project's own encoder wrote (what lifecycled or an app
    ///     sends), so it must marshal and read back: a failure is a defect, not a skip.
    static func roundTrip(_ value: BusValue, mustArrive: Bool = false) -> BusValue? {
        func undeliverable(_ why: String) -> BusValue? {
            if mustArrive { FuzzTarget.fail("an encoded value cannot be sent: \(why); the value: \(value)") }
            return nil
        }
        guard isWithinSpecificationLimits(value) else { return undeliverable("beyond the D-Bus limits") }
        var message: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &message, "/org/applifecycle/Fuzz", "org.applifecycle.Fuzz", "Value") >= 0,
            let message
        else {
            fatalError("LifecycleFuzz: sd-bus cannot make a signal message")
        }
        defer { sd_bus_message_unref(message) }
        do {
            try BusMessageCodec.append(value, to: message)
        } catch {
            return undeliverable("sd-bus does not marshal it: \(error)")
        }
        guard sd_bus_message_seal(message, 1, 0) >= 0 else { return undeliverable("sd-bus does not seal it") }
        guard sd_bus_message_rewind(message, 1) >= 0 else { FuzzTarget.fail("a sealed message does not rewind") }
        let values: [BusValue]
        do {
            values = try BusMessageCodec.readAll(from: message)
        } catch {
            return undeliverable("sd-bus marshals it but does not read it back: \(error)")
        }
        guard values.count == 1, values[0] == value else {
            FuzzTarget.fail("\(value) came back from the wire as \(values)")
        }
        return values[0]
    }

    /// The D-Bus specification's limits on what a message can hold: every signature (the value's,
    /// and each variant's contents) at most 255 characters with at most 32 nested arrays (here: 32
    /// arrays) and 32 nested structs, and at most 64 containers of any kind, variants included, inside each other.
    static func isWithinSpecificationLimits(_ value: BusValue) -> Bool {
        // Conservative: every `a` counts as nested (the specification limits the nesting).
        func signatureFits(_ signature: String) -> Bool {
            guard signature.utf8.count <= 255, signature.utf8.count(where: { $0 == UInt8(ascii: "a") }) <= 32 else {
                return false
            }
            var structs = 0
            for character in signature.utf8 {
                if character == UInt8(ascii: "(") || character == UInt8(ascii: "{") { structs += 1 }
                if character == UInt8(ascii: ")") || character == UInt8(ascii: "}") { structs -= 1 }
                if structs > 32 { return false }
            }
            return true
        }
        func fits(_ value: BusValue, depth: Int) -> Bool {
            guard depth <= 64 else { return false }
            switch value {
            case .variant(let inner): return signatureFits(inner.signature) && fits(inner, depth: depth + 1)
            case .array(_, let elements), .structure(let elements):
                return elements.allSatisfy { fits($0, depth: depth + 1) }
            case .dictionary(_, _, let entries): return entries.allSatisfy { fits($0.value, depth: depth + 2) }
            default: return true
            }
        }
        return signatureFits(value.signature) && fits(value, depth: 0)
    }
}
