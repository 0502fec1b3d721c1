import Foundation

// countries-bench: the service against the bare-libzmq floor and Redis, in one run, each figure
// next to its baseline. Starts everything it measures itself, on loopback, and stops it by pid.
// This file only wires: the options (BenchOptions), the run (Bench) and its output.

switch BenchCommandLine.invocation(Array(CommandLine.arguments.dropFirst())) {
case .floorServer(let command, let events, let mode):
    serveFloor(command: command, events: events, mode: mode)
case .etcdShapes(let endpoints, let seconds):
    EtcdShapes.run(endpoints: endpoints, seconds: seconds)
case .summarize(let files):
    summarizeFiles(files)
case .run(let configuration):
    Cleanup.shared.installSignalHandlers()
    let bench: Bench
    do {
        bench = try Bench(configuration)
    } catch {
        progress("\(error)")
        exit(69)
    }
    bench.measure()
    try bench.printResults()
    exit(0)
}
