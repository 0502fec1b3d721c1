/// What `countries-bench` was asked to do.
enum BenchInvocation {
    /// Measure, with this configuration.
    case run(BenchConfiguration)
    /// `--summarize FILE...`: the median verdicts of earlier `--json` runs.
    case summarize([String])
    /// `--floor-server COMMAND EVENTS MODE`: be a floor server (the bench starts itself so).
    case floorServer(command: String, events: String, mode: String)
    /// `--etcd-shapes URLS [SECONDS]`: etcd's cost of a commit's transaction shapes.
    case etcdShapes(endpoints: [String], seconds: Double)
}
