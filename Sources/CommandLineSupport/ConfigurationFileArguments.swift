import ArgumentParser
import FoundationEssentials
import Glibc

/// A command's long options read from a configuration file, ahead of its command line.
///
/// Every long option of the command can be set in the file's one section under the same name,
/// without the dashes (`listen = 127.0.0.1:8080` is `--listen 127.0.0.1:8080`; a flag takes
/// `true` or `false`), so an option added to the command works in the file too. An option given on
/// the command line wins: the file's setting of it is left out. The file is `--config FILE`, else
/// the command's default path when that file exists, else none.
///
/// ```swift
/// let arguments = try ConfigurationFileArguments(
///     commandLine: Array(CommandLine.arguments.dropFirst()), defaultPath: "/etc/applifecycle/push-gateway.conf",
///     section: "gateway", command: PushGatewayCommand.self)
/// await PushGatewayCommand.runMain(arguments: arguments.arguments, explain: arguments.explain)
/// ```
public struct ConfigurationFileArguments: Sendable {
    /// The file's settings as options, then the command line.
    public let arguments: [String]
    /// The file read, if any.
    public let file: INIFile?
    /// The file's settings used, in file order: option name, value, line.
    private let used: [(name: String, value: String, line: Int)]

    /// The long options that only the command line takes.
    public static let commandLineOnly: Set<String> = [
        "config", "help", "version", "generate-completion-script", "experimental-dump-help",
    ]

    /// Reads the file (if any) and merges it with `commandLine`.
    ///
    /// - Parameters:
    ///   - commandLine: The arguments after the program name.
    ///   - defaultPath: The file read when `--config` is not given, if it exists.
    ///   - section: The file's one section (`[gateway]`).
    ///   - command: The command whose long options the file may set.
    /// - Throws: ``INIFileError``: the file cannot be read, bad syntax, or a section or key the
    ///   command does not know, each naming the file, the line and what to do.
    public init(
        commandLine: [String], defaultPath: String, section: String, command: any ParsableCommand.Type
    ) throws(INIFileError) {
        let explicit = Self.configOption(in: commandLine)
        let path: String
        if let explicit {
            path = explicit
        } else if access(defaultPath, F_OK) == 0 {
            path = defaultPath
        } else {
            self.init(arguments: commandLine, file: nil, used: [])
            return
        }
        let file = try INIFile(contentsOf: path)
        let options = Self.longOptions(of: command)
        for name in file.entries.keys where name != section {
            throw INIFileError(
                .setting, "\(path): unknown section [\(name)]; the settings go in [\(section)]")
        }
        var fileArguments: [String] = []
        var used: [(name: String, value: String, line: Int)] = []
        let entries = (file.entries[section] ?? [:]).sorted { $0.value.line < $1.value.line }
        for (name, entry) in entries {
            let location = "\(path):\(entry.line)"
            guard let kind = options[name], !Self.commandLineOnly.contains(name) else {
                let known = options.keys.filter { !Self.commandLineOnly.contains($0) }.sorted()
                throw INIFileError(
                    .setting,
                    "\(location): unknown setting '\(name)'; the settings are the long options of --help without "
                        + "the dashes: \(known.joined(separator: ", "))")
            }
            if Self.given(name, in: commandLine) { continue }
            switch kind {
            case .option:
                // One argument: a value that starts with a dash (a path, a password file) stays a value.
                fileArguments.append("--\(name)=\(entry.value)")
            case .flag:
                switch entry.value {
                case "true", "yes", "on": fileArguments.append("--\(name)")
                case "false", "no", "off": break
                default:
                    throw INIFileError(
                        .setting, "\(location): \(name) is a switch: write \(name) = true or \(name) = false")
                }
            }
            used.append((name, entry.value, entry.line))
        }
        self.init(arguments: fileArguments + commandLine, file: file, used: used)
    }

    private init(arguments: [String], file: INIFile?, used: [(name: String, value: String, line: Int)]) {
        self.arguments = arguments
        self.file = file
        self.used = used
    }

    /// `message` (a usage error) with, for each option its first line names that came from the
    /// file, where in the file it is set and what to do.
    ///
    /// - Parameters:
    ///   - message: ArgumentParser's or the command's message.
    public func explain(_ message: String) -> String {
        guard let file else { return message }
        let error = String(message.prefix { $0 != "\n" })
        var lines = [message]
        for setting in used where Self.names(error, option: setting.name) {
            lines.append(
                "(\(setting.name) = \(setting.value) is set on line \(setting.line) of \(file.path): "
                    + "correct it there, or override it with --\(setting.name))")
        }
        return lines.joined(separator: "\n")
    }

    /// The value of `--config` on the command line, if given (`--config FILE` or `--config=FILE`).
    static func configOption(in commandLine: [String]) -> String? {
        var index = 0
        while index < commandLine.count {
            let argument = commandLine[index]
            if argument == "--" { return nil }
            if argument == "--config", index + 1 < commandLine.count { return commandLine[index + 1] }
            if argument.hasPrefix("--config=") { return String(argument.dropFirst("--config=".count)) }
            index += 1
        }
        return nil
    }

    /// Whether the command line gives `--name` (`--name VALUE`, `--name=VALUE`, or the flag).
    private static func given(_ name: String, in commandLine: [String]) -> Bool {
        commandLine.prefix { $0 != "--" }.contains { $0 == "--\(name)" || $0.hasPrefix("--\(name)=") }
    }

    /// Whether `message` names `--option` (and not a longer option that starts with it).
    private static func names(_ message: String, option: String) -> Bool {
        message.split { !($0.isLetter || $0.isNumber || $0 == "-") }.contains { $0 == "--\(option)" }
    }

    private enum Kind { case option, flag }

    /// The command's long option names and whether each takes a value, from ArgumentParser's own
    /// description of the command (`--experimental-dump-help`'s JSON).
    private static func longOptions(of command: any ParsableCommand.Type) -> [String: Kind] {
        struct Dump: Decodable {
            struct Command: Decodable { var arguments: [Argument]? }
            struct Argument: Decodable {
                struct Name: Decodable {
                    var kind: String
                    var name: String
                }
                var kind: String
                var names: [Name]?
            }
            var command: Command
        }
        guard let dump = try? JSONDecoder().decode(Dump.self, from: Data(command._dumpHelp().utf8)) else { return [:] }
        var options: [String: Kind] = [:]
        for argument in dump.command.arguments ?? [] {
            let kind: Kind
            switch argument.kind {
            case "option": kind = .option
            case "flag": kind = .flag
            default: continue
            }
            for name in argument.names ?? [] where name.kind == "long" { options[name.name] = kind }
        }
        return options
    }
}
