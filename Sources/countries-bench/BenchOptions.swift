import ArgumentParsing

/// The bench's command line, declared once: the parser, `--help` and the errors all come from
/// these. scripts/bench, scripts/test and Tests/profile pass them; their names and meanings are
/// the bench's interface.
struct BenchOptions: OptionGroup {
    /// The scenarios `--only` chooses among, in the order they run.
    static let scenarios = [
        "floor", "toggle", "redis", "replicated", "fanout", "late", "render", "cli", "memory", "web",
    ]

    let quick = Option(
        flag: "quick", help: "Small counts (CI proves the bench works; nothing about speed is asserted).")
    let json = Option(
        flag: "json", help: "Print the results as JSON on stdout (progress still goes to stderr).")
    let svg = Option<String?>(
        "svg", value: "file",
        help: "Write the latency chart (p50/p99 against the floor and Redis) to this file.")
    let only = Option<String?>(
        "only", value: "list",
        help: "Comma-separated scenarios to run: \(scenarios.joined(separator: ",")) (default: all).")
    let summarize = Option(
        flag: "summarize",
        help:
            "Print the targets' verdicts on the median ratios of earlier --json runs, the files given as "
            + "arguments (scripts/bench --runs N does this).")
    let floorServer = Option(
        flag: "floor-server",
        help:
            "Serve as a bare libzmq floor on the arguments COMMAND EVENTS MODE (MODE: reply, publish, "
            + "sync:FILE or group-sync:FILE; by hand: publish-work:MICROSECONDS, publish-after:MICROSECONDS, "
            + "publish-core) until SIGTERM: "
            + "how the bench starts its floors.")
    let etcdShapes = Option(
        flag: "etcd-shapes",
        help:
            "Measure what etcd takes for a replica's commit and the shapes it could have, on the cluster at the "
            + "arguments URLS [SECONDS] (SECONDS per measurement, default 5, and at least one transaction per "
            + "writer; rates are over the time each took; docs/BENCHMARKS.md, \"Stop 46\"). "
            + "Run it on a cluster nothing else uses; exits 1 when a transaction failed.")
    let values = Argument<[String]>(
        ArgumentSpec(
            name: "value",
            help:
                "With --summarize: the JSON files of runs. With --floor-server: COMMAND EVENTS MODE. With "
                + "--etcd-shapes: URLS [SECONDS].",
            isRepeating: true, isOptional: true)
    ) { command in command.arguments("value") }
}
