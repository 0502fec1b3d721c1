import CZeroMQ

/// The version of the libzmq library loaded at run time (not the headers built against).
public enum ZMQVersion {
    /// The `(major, minor, patch)` triple from `zmq_version`.
    public static var current: (major: Int32, minor: Int32, patch: Int32) {
        var major: Int32 = 0
        var minor: Int32 = 0
        var patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return (major, minor, patch)
    }

    /// The version as `major.minor.patch`, e.g. `4.3.4`.
    public static var string: String {
        let version = current
        return "\(version.major).\(version.minor).\(version.patch)"
    }
}
