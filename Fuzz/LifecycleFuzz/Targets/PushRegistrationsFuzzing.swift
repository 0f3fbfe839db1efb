import FoundationEssentials

@testable import LifecycleDaemon

/// lifecycled's distributor registrations (`push-registrations.json`): the input is the file,
/// decoded as the distributor does at start, and checked to encode and decode back to itself.
enum PushRegistrationsFuzzing {
    static let target = FuzzTarget(name: "push-registrations", summary: "lifecycled push-registrations.json") {
        bytes in
        guard let registrations = try? JSONDecoder().decode([PushRegistration].self, from: Data(bytes)) else {
            return
        }
        do {
            let again = try JSONDecoder().decode([PushRegistration].self, from: JSONEncoder().encode(registrations))
            guard again == registrations else { FuzzTarget.fail("registrations changed on a round trip") }
        } catch {
            FuzzTarget.fail("loaded registrations do not read back: \(error)")
        }
    }
}
