import Foundation
import Glibc
import SystemdBusTesting
import Testing

@Suite("ChildProcess: exit codes, and terminating a child whose output a reader is blocked on", .timeLimit(.minutes(1)))
struct ChildProcessTests {
    @Test func exitCodesAreTheStatusOr128PlusTheSignal() throws {
        #expect(try ChildProcess.run("/bin/sh", ["-c", "echo out; exit 3"]) == (3, "out\n"))
        let sleeper = try ChildProcess.spawn("/bin/sleep", ["600"])
        #expect(!sleeper.hasExited)
        sleeper.terminateAndWait()
        #expect(sleeper.hasExited)
        #expect(sleeper.waitForExit() == 128 + SIGTERM)
        sleeper.terminateAndWait()  // reaped: no signal to anyone, returns at once
    }

    @Test func terminateDoesNotWaitForAReaderBlockedOnTheChildsOutput() async throws {
        let child = try ChildProcess.spawn("/bin/sleep", ["600"], stdout: .pipe)
        // A reader blocks in read(2): the child never writes.
        let line = Task.detached { child.readLine() }
        try await Task.sleep(for: .milliseconds(50))  // let the reader block; not an assertion
        child.terminateAndWait()
        #expect(child.waitForExit() == 128 + SIGTERM)
        #expect(await line.value == nil)  // end of file once the child is gone
    }

    @Test func concurrentWaitersAllSeeTheSameExit() async throws {
        let child = try ChildProcess.spawn("/bin/sh", ["-c", "read x; exit 7"], stdout: .null)
        // stdin is /dev/null: `read` fails at once and the shell exits 7.
        async let first = Task.detached { child.waitForExit() }.value
        async let second = Task.detached { child.waitForExit() }.value
        #expect(await [first, second] == [7, 7])
    }

    @Test func aChildThatIgnoresSIGTERMIsKilledAfterTheGrace() throws {
        // SIG_IGN survives exec, so `sleep` ignores SIGTERM too; "ready" says the trap is set.
        let child = try ChildProcess.spawn(
            "/bin/sh", ["-c", "trap '' TERM; echo ready; exec sleep 600"], stdout: .pipe)
        #expect(child.readLine() == "ready")
        #expect(child.terminateAndWait(escalatingAfter: .milliseconds(200)))
        #expect(child.waitForExit() == 128 + SIGKILL)
    }

    @Test func aChildThatEndsOnSIGTERMIsNotKilled() throws {
        let child = try ChildProcess.spawn("/bin/sleep", ["600"])
        #expect(!child.terminateAndWait(escalatingAfter: .seconds(30)))
        #expect(child.waitForExit() == 128 + SIGTERM)
    }

    @Test func theChildGetsNoDescriptorAboveStderrAndStdinFromDevNull() throws {
        // A descriptor of this process without close-on-exec must not reach the child.
        let leaked = open("/dev/null", O_RDONLY)
        defer { close(leaked) }
        let result = try ChildProcess.run("/bin/sh", ["-c", "ls /proc/$$/fd; readlink /proc/$$/fd/0"])
        let lines = result.output.split(separator: "\n")
        #expect(!lines.contains(Substring("\(leaked)")))
        #expect(lines.last == "/dev/null")
    }
}
