import ArgumentParser

/// The exit statuses of the project's executables, and the one place that maps errors to them.
///
/// `0` success (also `--help`, `--version`, and a command cancelled by the user); `1` a runtime
/// failure (the daemon is absent, a D-Bus error, an I/O error); `2` a usage error (a bad option or
/// argument, ArgumentParser's `ValidationError`), as GNU tools and shells expect, instead of
/// ArgumentParser's `EX_USAGE` (64).
public enum ExitStatus {
    /// Success.
    public static let success: Int32 = 0
    /// A runtime failure.
    public static let failure: Int32 = 1
    /// A usage error.
    public static let usage: Int32 = 2

    /// The status a command that threw `error` ends with.
    ///
    /// - Parameters:
    ///   - error: What parsing or running threw.
    ///   - command: The command type, for ArgumentParser's own classification of parse errors.
    public static func of(_ error: any Error, command: any ParsableCommand.Type) -> Int32 {
        if error is CancellationError { return success }
        if let exit = error as? ExitCode { return exit.rawValue }
        let code = command.exitCode(for: error)
        if code == .validationFailure { return usage }
        if code == .success { return success }
        return failure
    }
}
