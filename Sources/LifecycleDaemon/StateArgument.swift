import AppLifecycle
import SystemdBus

/// An app state as a method argument (`s`, an ``ApplicationState`` raw value), else `InvalidArgs`.
struct StateArgument: BusArgument {
    /// The state.
    let state: ApplicationState

    static var busSignature: String { "s" }

    init(busValue: BusValue) throws(BusError) {
        let text = try String(busValue: busValue)
        guard let state = ApplicationState(rawValue: text) else {
            throw DaemonError.invalidArgs(
                "'\(text.prefix(64))' is not a state (one of \(ApplicationState.allCases.map(\.rawValue).joined(separator: ", ")))"
            )
        }
        self.state = state
    }

    var busValue: BusValue { .string(state.rawValue) }
}
