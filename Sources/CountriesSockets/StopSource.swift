@preconcurrency import Glibc
import SystemSupport

/// Something that tells the service loop to stop by becoming readable: the signal pipe in the
/// executable, a plain pipe in tests.
public protocol StopSource: AnyObject {
    /// Readable when the service should stop.
    var fileDescriptor: Int32 { get }
    /// Consumes what made it readable; the values name the reasons (signal numbers).
    func drain() -> [Int32]
}

extension StopSource {
    /// A reason for the log line.
    public func describe(_ reason: Int32) -> String {
        switch reason {
        case SIGINT: return "SIGINT received"
        case SIGTERM: return "SIGTERM received"
        default: return "stop requested (\(reason))"
        }
    }
}

extension SignalPipe: StopSource {}
