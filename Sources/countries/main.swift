import ArgumentParsing
import CountriesCommands
import Foundation
@preconcurrency import Glibc
import SystemSupport

// The seed's view controller: parse what the user asked, run its subcommand (CountriesCommands),
// exit with the code scripts rely on (ExitCode.swift's table).

// Start from an empty signal mask: the mask is inherited, and a parent that launched us from a
// thread with signals blocked (a Dispatch worker, a Swift `Process`) would otherwise leave
// SIGTERM and SIGINT pending forever, so `serve` and the subscribers could only be SIGKILLed.
var unblocked = sigset_t()
sigemptyset(&unblocked)
pthread_sigmask(SIG_SETMASK, &unblocked, nil)
// A closed pipe (`countries events | head`) is a write error to handle, not a silent death.
SignalPipe.ignore(SIGPIPE)
let parser: CommandLineParser = CountriesCommandLine.parser
// As bytes: `CommandLine.arguments` would have repaired invalid UTF-8 out of sight.
let arguments = (1..<Int(CommandLine.argc)).map { index in
    CommandLine.unsafeArgv[index].map { Array(UnsafeBufferPointer(start: $0, count: strlen($0))) }
        .map { $0.map { UInt8(bitPattern: $0) } } ?? []
}
let environment = ProcessInfo.processInfo.environment

do {
    switch try parser.parse(bytes: arguments, environment: environment) {
    case .help(let text):
        print(text)
        exit(ExitCode.success)
    case .version:
        print(CountriesCommandLine.version)
        exit(ExitCode.success)
    case .run(let command):
        exit(try CountriesCommandLine.run(command))
    }
} catch {
    let failure = ExitCode.failure(for: error)
    Output.error(failure.message, prefixed: failure.prefixed)
    exit(failure.code)
}
