import ArgumentParsing
import Foundation
@preconcurrency import Glibc
import SystemSupport

// The seed's view controller: parse what the user asked, wire the parts together, exit with
// the code scripts rely on.

// A closed pipe (`countries events | head`) is a write error to handle, not a silent death.
SignalPipe.ignore(SIGPIPE)
// A blocked signal mask is inherited across exec (Foundation's `Process` passes its own on): with
// SIGINT and SIGTERM blocked, `serve` and `events` could never stop cleanly. Take them back.
var stopSignals = sigset_t()
sigemptyset(&stopSignals)
sigaddset(&stopSignals, SIGINT)
sigaddset(&stopSignals, SIGTERM)
pthread_sigmask(SIG_UNBLOCK, &stopSignals, nil)
let parser = CommandLineParser(root: CountriesCommandLine.root, version: CountriesCommandLine.version)
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
} catch let error as CommandFailure {
    Output.error(error.message)
    exit(error.exitCode)
} catch {
    Output.error("\(error)")
    exit(ExitCode.software)
}
