import ArgumentParser
import CommandLineSupport
import Foundation
import Testing

/// A command with the kinds of options a configuration file sets.
private struct Served: ParsableCommand, UsageErrorExit {
    @Option var config: String?
    @Option var listen = "127.0.0.1:8080"
    @Option(name: .customLong("public-url")) var publicURL: String
    @Option(name: .customLong("max-connections")) var maximumConnections: Int?
    @Flag var verbose = false

    func validate() throws {
        if let maximumConnections, maximumConnections < 1 {
            throw ValidationError("--max-connections must be at least 1")
        }
    }
}

/// A configuration file in a directory of its own, removed at the end of the test.
private final class ConfigurationFile {
    let directory: String
    let path: String

    init(_ text: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        path = directory + "/served.conf"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}

@Suite("ConfigurationFileArguments: every long option from a file, the command line winning")
struct ConfigurationFileArgumentsTests {
    private func merged(_ commandLine: [String], defaultPath: String = "/nonexistent/served.conf") throws
        -> ConfigurationFileArguments
    {
        try ConfigurationFileArguments(
            commandLine: commandLine, defaultPath: defaultPath, section: "served", command: Served.self)
    }

    @Test func theFileSetsEveryLongOptionUnderItsOwnName() throws {
        let file = try ConfigurationFile(
            """
            # the gateway's settings
            [served]
            listen = 0.0.0.0:80   ; a comment
            public-url = https://push.example.net
            max-connections = 7
            verbose = true
            """)
        let command = try Served.parseAsRoot(merged(["--config", file.path]).arguments) as! Served
        #expect(command.listen == "0.0.0.0:80")
        #expect(command.publicURL == "https://push.example.net")
        #expect(command.maximumConnections == 7)
        #expect(command.verbose)
    }

    /// A value that starts with a dash is the setting's value, not an option (`--name=value`).
    @Test func aValueThatStartsWithADashStaysAValue() throws {
        let file = try ConfigurationFile("[served]\nlisten = -odd-but-mine\npublic-url = https://a.example\n")
        let command = try Served.parseAsRoot(merged(["--config", file.path]).arguments) as! Served
        #expect(command.listen == "-odd-but-mine")
    }

    @Test func theCommandLineWinsOverTheFile() throws {
        let file = try ConfigurationFile("[served]\nlisten = 0.0.0.0:80\npublic-url = https://a.example\n")
        let arguments = try merged(["--listen=127.0.0.1:9", "--config=\(file.path)"]).arguments
        let command = try Served.parseAsRoot(arguments) as! Served
        #expect(command.listen == "127.0.0.1:9")
        #expect(command.publicURL == "https://a.example")
        #expect(!arguments.contains("0.0.0.0:80"))
    }

    @Test func theDefaultFileIsReadOnlyWhenItExists() throws {
        let file = try ConfigurationFile("[served]\npublic-url = https://default.example\n")
        let command = try Served.parseAsRoot(merged([], defaultPath: file.path).arguments) as! Served
        #expect(command.publicURL == "https://default.example")
        let none = try merged(["--public-url", "https://x.example"])
        #expect(none.file == nil)
        #expect(none.arguments == ["--public-url", "https://x.example"])
    }

    @Test func anUnknownSettingOrSectionNamesTheLineAndTheSettings() throws {
        let file = try ConfigurationFile("[served]\n\nlisen = 0.0.0.0:80\n")
        #expect {
            try merged(["--config", file.path])
        } throws: { error in
            let error = error as! INIFileError
            return error.code == .setting && error.message.hasPrefix("\(file.path):3: unknown setting 'lisen'")
                && error.message.contains("listen, max-connections, public-url, verbose")
                && !error.message.contains("config,")
        }
        let section = try ConfigurationFile("[server]\nlisten = 0.0.0.0:80\n")
        #expect {
            try merged(["--config", section.path])
        } throws: { error in
            (error as! INIFileError).message == "\(section.path): unknown section [server]; the settings go in [served]"
        }
        let config = try ConfigurationFile("[served]\nconfig = /etc/other.conf\n")
        #expect(throws: INIFileError.self) { try merged(["--config", config.path]) }
    }

    @Test func aBadSwitchValueAndBadSyntaxAreRefusedWithTheirLine() throws {
        let flag = try ConfigurationFile("[served]\nverbose = maybe\n")
        #expect {
            try merged(["--config", flag.path])
        } throws: { error in
            (error as! INIFileError).message
                == "\(flag.path):2: verbose is a switch: write verbose = true or verbose = false"
        }
        let syntax = try ConfigurationFile("[served]\nlisten 0.0.0.0:80\n")
        #expect {
            try merged(["--config", syntax.path])
        } throws: { error in
            let error = error as! INIFileError
            return error.code == .syntax && error.message == "\(syntax.path):2: 'listen 0.0.0.0:80' is not key = value"
        }
    }

    @Test func aMissingFileSaysWhatToDo() {
        #expect {
            try merged(["--config", "/nonexistent/served.conf"])
        } throws: { error in
            let error = error as! INIFileError
            return error.code == .unreadable
                && error.message
                    == "/nonexistent/served.conf: cannot read it: no such file; create it or name another one"
        }
    }

    @Test func aBadValueFromTheFileIsTracedToItsLine() throws {
        let file = try ConfigurationFile("[served]\npublic-url = https://a.example\nmax-connections = 0\n")
        let arguments = try merged(["--config", file.path])
        do {
            _ = try Served.parseAsRoot(arguments.arguments)
            Issue.record("max-connections = 0 was accepted")
        } catch {
            let message = arguments.explain(Served.fullMessage(for: error))
            #expect(message.hasPrefix("Error: --max-connections must be at least 1"))
            #expect(
                message.hasSuffix(
                    "(max-connections = 0 is set on line 3 of \(file.path): correct it there, or override it with --max-connections)"
                ))
            #expect(!message.contains("public-url = "))
        }
    }
}
