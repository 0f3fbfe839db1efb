import Glibc

/// How a hosted app's process ended.
enum AppExitStatus: Sendable, Hashable, CustomStringConvertible {
    /// The process called `exit` with this code.
    case exited(code: Int32)
    /// A signal ended the process (`coreDumped` when it left a core).
    case signaled(signal: Int32, coreDumped: Bool)
    /// Someone else reaped the process first, so its status is not known.
    case unknown

    /// Builds a status from waitid's `si_code` and `si_status`.
    ///
    /// - Parameters:
    ///   - code: `CLD_EXITED`, `CLD_KILLED` or `CLD_DUMPED`.
    ///   - status: The exit code or the signal number.
    init(code: Int32, status: Int32) {
        switch code {
        case Int32(CLD_EXITED): self = .exited(code: status)
        case Int32(CLD_KILLED): self = .signaled(signal: status, coreDumped: false)
        case Int32(CLD_DUMPED): self = .signaled(signal: status, coreDumped: true)
        default: self = .unknown
        }
    }

    /// The signal that ended the process, if one did.
    var signal: Int32? {
        if case .signaled(let signal, _) = self { return signal }
        return nil
    }

    /// `exited 3`, `killed by signal 9`, `killed by signal 11 (core dumped)`, `unknown`.
    var description: String {
        switch self {
        case .exited(let code): return "exited \(code)"
        case .signaled(let signal, let dumped): return "killed by signal \(signal)" + (dumped ? " (core dumped)" : "")
        case .unknown: return "unknown"
        }
    }
}
