import ArgumentParser
import Foundation

/// The `lifecycled` command: the per-session host daemon.
///
/// For now it loads the app manifests from the XDG data directories (or the directories
/// given with `--apps-directory`), prints the apps it found and every rejected file, and
/// exits; with `--check` a rejected file makes the exit status 1. The session-bus service
/// comes later.
@main
struct Lifecycled: ParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "lifecycled",
        abstract: "Host Linux apps with the iOS app lifecycle (manifest check only, for now).")

    /// Apps directories to read instead of the XDG ones, most important first.
    @Option(name: .customLong("apps-directory"), help: "An apps directory to read instead of the XDG ones (repeatable, most important first).")
    var appsDirectories: [String] = []

    /// Whether a rejected manifest fails the command.
    @Flag(help: "Exit with status 1 if any manifest is rejected.")
    var check = false

    /// Loads the manifests and reports them.
    ///
    /// - Throws: `ExitCode(1)` with `--check` when a manifest was rejected.
    func run() throws {
        let store = appsDirectories.isEmpty ? ManifestStore() : ManifestStore(directories: appsDirectories)
        for entry in store.entries.values.sorted(by: { $0.manifest.id < $1.manifest.id }) {
            let schemes = entry.manifest.urlSchemes.isEmpty ? "" : " schemes=\(entry.manifest.urlSchemes.joined(separator: ","))"
            print("\(entry.manifest.id)\t\(entry.manifest.executable)\(schemes)\t(\(entry.path))")
        }
        for error in store.errors {
            FileHandle.standardError.write(Data("lifecycled: \(error)\n".utf8))
        }
        if check && !store.errors.isEmpty { throw ExitCode(1) }
    }
}
