import Foundation

// The coverage-guided fuzz target for the request decoder and the state controller.
//
// Built with `-sanitize=fuzzer -DCOUNTRIES_LIBFUZZER` (see scripts/fuzz), this is a libFuzzer
// binary: libFuzzer's driver runs ``fuzzOne`` on generated inputs. Built plainly (as `swift
// build` does), it replays the files and directories it is given, one input per file, so a
// crashing input can be checked without libFuzzer: `countries-fuzz FILE_OR_DIR...`.

/// libFuzzer's entry point: one input, checked by ``FuzzHarness``.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let input = bytes.map { Data(bytes: $0, count: count) } ?? Data()
    FuzzHarness.check(input)
    return 0
}

#if COUNTRIES_LIBFUZZER
    // SwiftPM links an executable's `main` to this module's top-level code, so libFuzzer's own
    // `main` is never linked in; its driver is started from here instead.
    @_silgen_name("LLVMFuzzerRunDriver")
    func runFuzzerDriver(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ body: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32

    var argumentCount = CommandLine.argc
    var arguments = CommandLine.unsafeArgv
    exit(runFuzzerDriver(&argumentCount, &arguments, fuzzOne))
#else
    exit(FuzzReplay.run(Array(CommandLine.arguments.dropFirst())))
#endif
