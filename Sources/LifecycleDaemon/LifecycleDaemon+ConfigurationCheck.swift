import FoundationEssentials

extension LifecycleDaemon {
    /// What `lifecycled --check` says of `lifecycled.conf`: the file it would read, and each reason
    /// the daemon would not apply part of it (which it only logs when it starts: the fleet, or the
    /// `[lifecycle]` settings, are then left out).
    package struct ConfigurationCheck: Sendable {
        /// The file found, if any (`--config`, else the XDG and /etc paths).
        package var path: String?
        /// What is wrong with it, each naming the file and what to change; empty when it is good.
        package var problems: [String]

        /// Reads and checks the file the daemon would read, as the daemon reads it.
        ///
        /// - Parameters:
        ///   - explicit: `--config`, if given: a missing file is then a problem.
        ///   - environment: Where the default paths come from (`XDG_CONFIG_HOME`, `HOME`).
        package init(explicit: String?, environment: [String: String]) {
            guard let path = FleetConfiguration.locate(explicit: explicit, environment: environment) else {
                self.init(path: nil, problems: [])
                return
            }
            if explicit != nil, !FileManager.default.fileExists(atPath: path) {
                self.init(
                    path: path,
                    problems: ["\(path) does not exist: check --config, or leave it out to use the default paths"])
                return
            }
            var problems: [String] = []
            do {
                let sections = try FleetConfiguration.readSections(path: path)
                do {
                    _ = try FleetConfiguration.load(sections: sections, path: path)
                } catch {
                    problems.append("\(error.message); without it lifecycled starts with no fleet (no push)")
                }
                if let section = sections["lifecycle"] {
                    do {
                        _ = try LifecycleSettings(section: section, defaults: .defaults, path: path)
                    } catch {
                        problems.append("\(error.message); without it the [lifecycle] settings are not applied")
                    }
                }
            } catch {
                problems.append("\(error.message); lifecycled would start without any of the file's settings")
            }
            self.init(path: path, problems: problems)
        }

        private init(path: String?, problems: [String]) {
            self.path = path
            self.problems = problems
        }
    }
}
