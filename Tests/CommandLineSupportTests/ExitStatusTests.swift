import ArgumentParser
import CommandLineSupport
import Testing

/// A command to classify parse errors with, as the executables do.
private struct Sample: ParsableCommand, UsageErrorExit {
    @Option var count = 1
}

private struct RuntimeFailure: Error {}

@Suite("ExitStatus: one mapping from errors to 0, 1 and 2")
struct ExitStatusTests {
    @Test func usageErrorsAreTwo() {
        #expect(ExitStatus.of(ValidationError("bad"), command: Sample.self) == 2)
        do {
            _ = try Sample.parseAsRoot(["--bogus"])
            Issue.record("an unknown option was accepted")
        } catch {
            #expect(ExitStatus.of(error, command: Sample.self) == 2)
            #expect(Sample.exitStatus(for: error) == 2)
        }
        do {
            _ = try Sample.parseAsRoot(["--count", "many"])
            Issue.record("a bad value was accepted")
        } catch {
            #expect(ExitStatus.of(error, command: Sample.self) == 2)
        }
    }

    @Test func helpAndCancellationAreSuccess() {
        #expect(ExitStatus.of(CleanExit.helpRequest(), command: Sample.self) == 0)
        #expect(ExitStatus.of(CancellationError(), command: Sample.self) == 0)
    }

    @Test func runtimeFailuresAreOneAndExplicitCodesKept() {
        #expect(ExitStatus.of(RuntimeFailure(), command: Sample.self) == 1)
        #expect(ExitStatus.of(ExitCode(1), command: Sample.self) == 1)
        #expect(ExitStatus.of(ExitCode(5), command: Sample.self) == 5)
    }
}
