import Glibc

/// The fuzz binary's entry point.
///
/// In the fuzz build (`-DFUZZING -sanitize=fuzzer,address`, `make fuzz-smoke`) `main` hands the
/// command line to libFuzzer's driver with the target named by `FUZZ_TARGET`; every libFuzzer flag
/// works, and files given as arguments are replayed (`FUZZ_TARGET=manifest LifecycleFuzz crash-…`).
/// In the normal build it only explains this and exits 2, so `swift build --build-tests` still
/// compiles every target. Both builds take `--list` (the targets' names) and `--write-seeds DIR`
/// (``SeedWriter``).
@main
enum LifecycleFuzz {
    static func main() {
        let arguments = CommandLine.arguments
        if arguments.count == 2, arguments[1] == "--list" {
            for target in FuzzTarget.all { print(target.name) }
            exit(0)
        }
        if arguments.count == 3, arguments[1] == "--write-seeds" {
            do {
                try SeedWriter.write(to: arguments[2])
                exit(0)
            } catch {
                print("LifecycleFuzz: cannot write the seeds: \(error)")
                exit(1)
            }
        }
        let environment = getenv("FUZZ_TARGET").map { String(cString: $0) }
        guard let name = environment, let target = FuzzTarget.named(name) else {
            printUsage(unknown: environment)
            exit(2)
        }
        #if FUZZING
            selected = target
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            exit(
                runFuzzerDriver(&argc, &argv) { data, size in
                    LifecycleFuzz.runSelected(data, size)
                })
        #else
            _ = target
            printUsage(unknown: nil)
            exit(2)
        #endif
    }

    /// The target of this process (set once, before libFuzzer starts).
    nonisolated(unsafe) static var selected: FuzzTarget?

    /// Runs one input through the selected target.
    static func runSelected(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        selected?.run(bytes)
        return 0
    }

    private static func printUsage(unknown: String?) {
        var text = ""
        if let unknown { text += "LifecycleFuzz: no fuzz target '\(unknown)'\n" }
        #if !FUZZING
            text += "LifecycleFuzz: this is the normal build; fuzzing needs the libFuzzer build (make fuzz-smoke).\n"
        #endif
        text += "usage: FUZZ_TARGET=<target> LifecycleFuzz [libFuzzer flags] [corpus directory | input file]...\n"
        text += "targets:\n"
        for target in FuzzTarget.all {
            text +=
                "  \(target.name)\(String(repeating: " ", count: max(1, 22 - target.name.count)))\(target.summary)\n"
        }
        text += "See Fuzz/README.md.\n"
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}

#if FUZZING
    /// libFuzzer's driver (compiler-rt, linked by `-sanitize=fuzzer`): parses the flags, runs the
    /// corpus and the mutation loop, calling `callback` with each input.
    @_silgen_name("LLVMFuzzerRunDriver")
    func runFuzzerDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    /// The entry libFuzzer's own `main` would call; `main` above replaces that `main` (SwiftPM links
    /// an executable's entry as `main`), so this only satisfies the reference from libFuzzer's
    /// archive and forwards to the same target.
    @_cdecl("LLVMFuzzerTestOneInput")
    func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        LifecycleFuzz.runSelected(data, size)
    }
#endif
