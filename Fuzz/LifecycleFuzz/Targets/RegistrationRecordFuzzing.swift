import FleetProtocol
import FoundationEssentials

/// Registration records (the retained JSON the gateway reads from the broker for every endpoint):
/// one that decodes is valid, and encodes and decodes back to itself.
enum RegistrationRecordFuzzing {
    static let target = FuzzTarget(name: "registration-record", summary: "retained push registration records") {
        bytes in
        guard let record = try? PushRegistrationRecord.decode(bytes) else { return }
        do {
            try record.validate()
        } catch {
            FuzzTarget.fail("a decoded record is invalid: \(error)")
        }
        do {
            let again = try PushRegistrationRecord.decode(record.encoded())
            guard again == record else { FuzzTarget.fail("record changed on a round trip") }
        } catch {
            FuzzTarget.fail("a decoded record does not read back: \(error)")
        }
    }
}
