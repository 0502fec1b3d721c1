import ArgumentParsing
import Foundation
@preconcurrency import Glibc
import SystemSupport
import ZeroMQ

// The seed's view controller: parse what the user asked, wire the parts together, exit with
// the code scripts rely on.

// Start from an empty signal mask: the mask is inherited, and a parent that launched us from a
// thread with signals blocked (a Dispatch worker, a Swift `Process`) would otherwise leave
// SIGTERM and SIGINT pending forever, so `serve` and the subscribers could only be SIGKILLed.
var unblocked = sigset_t()
sigemptyset(&unblocked)
pthread_sigmask(SIG_SETMASK, &unblocked, nil)
// A closed pipe (`countries events | head`) is a write error to handle, not a silent death.
SignalPipe.ignore(SIGPIPE)
let parser = CountriesCommandLine.parser
let arguments = Array(CommandLine.arguments.dropFirst())
let environment = ProcessInfo.processInfo.environment

do {
    switch try parser.parse(arguments, environment: environment) {
    case .help(let text):
        print(text)
        exit(ExitCode.success)
    case .version:
        print(CountriesCommandLine.version)
        exit(ExitCode.success)
    case .run(let command):
        exit(try Dispatcher(command: command, environment: environment).run())
    }
} catch let error as UsageError {
    Output.error(error.description, prefixed: false)
    exit(ExitCode.usage)
} catch let error as KeyFileError {
    let failure = CommandFailure(error)
    Output.error(failure.message)
    exit(failure.exitCode)
} catch let error as CommandFailure {
    Output.error(error.message)
    exit(error.exitCode)
} catch {
    Output.error("\(error)")
    exit(ExitCode.software)
}
