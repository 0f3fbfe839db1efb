import AppLifecycle

#if canImport(Glibc)
    import Glibc
#endif

/// The kernel's thermal zones under a sysfs root (`/sys/class/thermal`) and the thermal state they imply.
///
/// A zone is a `thermal_zone<N>` directory with `temp` (millidegrees Celsius) and trip points
/// `trip_point_<K>_type` (`passive`, `active`, `hot`, `critical`) and `trip_point_<K>_temp`. A zone
/// whose `temp` cannot be read (some sensors answer `EAGAIN` or `ENODATA` while asleep) is left
/// out; so is a trip point at or below 0 m°C (drivers report disabled trips that way).
package enum ThermalZones {
    /// How far below a passive trip point a zone counts as `fair`: 5 °C.
    package static let fairMargin = 5000

    /// One zone's reading.
    package struct Zone: Sendable, Hashable {
        /// `thermal_zone<N>`.
        package var name: String
        /// `temp`, in millidegrees Celsius.
        package var temperature: Int
        /// The trip points' types and temperatures (m°C), in the kernel's order.
        package var trips: [Trip]

        package init(name: String, temperature: Int, trips: [Trip]) {
            self.name = name
            self.temperature = temperature
            self.trips = trips
        }
    }

    /// One trip point of a zone.
    package struct Trip: Sendable, Hashable {
        package var type: String
        package var temperature: Int

        package init(type: String, temperature: Int) {
            self.type = type
            self.temperature = temperature
        }
    }

    /// The state of one zone: at or above a `hot` or `critical` trip `critical`, at or
    /// above a `passive` trip `serious`, within ``fairMargin`` below one
    /// `fair`, else `nominal` (also for a zone with no such trips).
    package static func state(of zone: Zone) -> ThermalState {
        let severe = zone.trips.filter { $0.type == "hot" || $0.type == "critical" }.map(\.temperature).min()
        if let severe, zone.temperature >= severe { return .critical }
        guard let passive = zone.trips.filter({ $0.type == "passive" }).map(\.temperature).min() else {
            return .nominal
        }
        if zone.temperature >= passive { return .serious }
        if zone.temperature >= passive - fairMargin { return .fair }
        return .nominal
    }

    /// The hottest state over the zones, or `nil` when there is no readable zone.
    package static func state(of zones: [Zone]) -> ThermalState? {
        zones.map(state(of:)).max()
    }

    /// Reads every zone under `root`, in name order; an empty array if `root` has none or is missing.
    package static func read(root: String) -> [Zone] {
        zoneNames(root: root).compactMap { readZone(root + "/" + $0, name: $0) }
    }

    private static func zoneNames(root: String) -> [String] {
        guard let directory = opendir(root) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            let suffix = name.dropFirst("thermal_zone".count)
            if name.hasPrefix("thermal_zone"), !suffix.isEmpty, suffix.allSatisfy(\.isASCII), Int(suffix) != nil {
                names.append(name)
            }
        }
        return names.sorted { Int($0.dropFirst(12)) ?? 0 < Int($1.dropFirst(12)) ?? 0 }
    }

    private static func readZone(_ directory: String, name: String) -> Zone? {
        guard let temperature = readInteger(directory + "/temp") else { return nil }
        var trips: [Trip] = []
        var index = 0
        while let type = KernelInterfaces.readText(directory + "/trip_point_\(index)_type") {
            if let value = readInteger(directory + "/trip_point_\(index)_temp"), value > 0 {
                trips.append(Trip(type: firstWord(type), temperature: value))
            }
            index += 1
        }
        return Zone(name: name, temperature: temperature, trips: trips)
    }

    private static func readInteger(_ path: String) -> Int? {
        KernelInterfaces.readText(path).flatMap { Int(firstWord($0)) }
    }

    /// A sysfs value without its trailing newline.
    private static func firstWord(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).first.map(String.init) ?? ""
    }
}
