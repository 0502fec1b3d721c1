import Foundation
@preconcurrency import Glibc
import LoadGeneration

/// A line of progress on stderr: stdout is for the results.
func progress(_ text: String) {
    FileHandle.standardError.write(Data("countries-bench: \(text)\n".utf8))
}

/// Sleeps until the monotonic clock reads `deadline` (nanoseconds).
func sleep(until deadline: UInt64) {
    let now = nowNanos()
    guard deadline > now else { return }
    let wait = deadline - now
    var request = timespec(tv_sec: Int(wait / 1_000_000_000), tv_nsec: Int(wait % 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}

/// The median of some nanosecond samples, in milliseconds.
func medianMilliseconds(_ samples: [UInt64]) -> Double {
    Percentiles(nanos: samples).p50 / 1000
}

/// Why a scenario could not run.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The unsigned number after `"seq":` in a JSON body, without decoding the whole of it.
func seqField(_ body: Data) -> UInt64? {
    let key = Array("\"seq\":".utf8)
    return body.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> UInt64? in
        let bytes = raw.bindMemory(to: UInt8.self)
        guard bytes.count > key.count else { return nil }
        var index = 0
        outer: while index + key.count < bytes.count {
            for offset in 0..<key.count where bytes[index + offset] != key[offset] {
                index += 1
                continue outer
            }
            var position = index + key.count
            while position < bytes.count && bytes[position] == UInt8(ascii: " ") { position += 1 }
            var value: UInt64 = 0
            var digits = 0
            while position < bytes.count, bytes[position] >= 48, bytes[position] <= 57 {
                value = value * 10 + UInt64(bytes[position] - 48)
                position += 1
                digits += 1
            }
            return digits > 0 ? value : nil
        }
        return nil
    }
}
