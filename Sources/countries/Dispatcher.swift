import ArgumentParsing
import CountriesClient
import CountriesCore
import Foundation
import ZeroMQ

/// Runs the subcommand the user asked for and returns its exit code.
struct Dispatcher {
    let command: ParsedCommand
    let environment: [String: String]

    func run() throws -> Int32 {
        try CountriesCommandLine.registry.make(command).run()
    }
}
