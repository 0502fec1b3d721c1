import Testing

extension Trait where Self == TimeLimitTrait {
    /// The time limit of a test that runs processes, waits on sockets or on etcd: a guard against
    /// a hang, never a measure of speed, and the one place such limits are set.
    ///
    /// Swift Testing counts a limit from a test's start, and on two cores the tests that block
    /// in a child process can hold every thread of the pool for minutes: in CI, tests that take
    /// 4 s alone passed after 116 to 195 s, and one was cut off at 120 s in a local run of the
    /// etcd suites. So no test gets less than five minutes; a longer test asks for more. Both
    /// scale with ``testSlowdown``.
    public static func hangGuard(minutes: Int = 5) -> Self {
        .timeLimit(.minutes(max(5, minutes) * testSlowdown))
    }
}
