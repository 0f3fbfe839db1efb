import Glibc
import SystemdBus

extension BusConnection {
    /// Runs `body`, then stops whatever owns each of `names` on this bus, by its pid, also when
    /// `body` throws: the services a test made the bus daemon activate are not the test's children,
    /// so nothing else would stop them.
    ///
    /// - Parameters:
    ///   - names: The well-known names of the activatable services.
    ///   - isolation: The caller's actor, where `body` runs.
    ///   - body: The test.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` threw.
    public func stoppingActivatedServices<T>(
        _ names: [String], isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
    ) async throws -> T {
        do {
            let result = try await body()
            for name in names { await stopOwner(of: name) }
            return result
        } catch {
            for name in names { await stopOwner(of: name) }
            throw error
        }
    }

    /// Stops the process that owns `name` now (SIGTERM, then SIGKILL after 5 s) and waits until it
    /// is gone; nothing when the name has no owner. The pid is asked of the bus at this moment, so
    /// it is never one that has exited and been reused.
    ///
    /// - Parameters:
    ///   - name: A well-known name.
    /// - Returns: The pid that was stopped, or `nil`.
    @discardableResult
    public func stopOwner(of name: String) async -> pid_t? {
        guard let owner = try? await nameOwner(name), let pid = try? await credentials(of: owner).pid else {
            return nil
        }
        ChildProcess.terminate(activatedService: pid_t(pid))
        return pid_t(pid)
    }
}
