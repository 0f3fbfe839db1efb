@testable import BrokerLink
@testable import LifecycleDaemon

/// `lifecycled.conf` (its INI parser, the fleet's and the `[lifecycle]` settings' checks and `BrokerConfiguration`'s URL
/// parser): the input is the file. The device id is given, as `/etc/machine-id` is not input.
/// Each line is also given to `BrokerConfiguration` as a broker URL, so the URL parser sees
/// inputs the INI layer would have stopped.
enum FleetConfigurationFuzzing {
    static let target = FuzzTarget(name: "fleet-config", summary: "lifecycled.conf and broker URLs") { bytes in
        let path = ScratchDirectory.write(bytes, to: "lifecycled.conf")
        let sections = try? FleetConfiguration.readSections(path: path)
        if let sections, let lifecycle = sections["lifecycle"] {
            let defaults = LifecycleSettings.defaults
            if let settings = try? LifecycleSettings(section: lifecycle, defaults: defaults, path: path) {
                guard settings.freezeDelay >= .zero, settings.freezeDelay <= .seconds(3600) else {
                    FuzzTarget.fail("freeze-delay \(settings.freezeDelay) accepted")
                }
            }
        }
        if let sections,
            let configuration = try? FleetConfiguration.load(
                sections: sections, path: path, deriveDeviceID: { "fuzz-device" })
        {
            guard configuration.broker.port > 0, configuration.broker.port <= 65_535 else {
                FuzzTarget.fail("port \(configuration.broker.port) accepted")
            }
            try? configuration.broker.validate()
        }
        let text = String(decoding: bytes, as: UTF8.self)
        for line in text.split(separator: "\n").prefix(8) {
            if let broker = try? BrokerConfiguration(url: String(line), clientID: "fuzz") {
                guard (1...65_535).contains(broker.port), !broker.host.isEmpty else {
                    FuzzTarget.fail("broker URL '\(line)' accepted as host '\(broker.host)' port \(broker.port)")
                }
            }
        }
    }
}
