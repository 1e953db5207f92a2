#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The process's environment variables, read straight from `environ`.
///
/// `ProcessInfo.processInfo.environment` builds its dictionary through Foundation's
/// string bridging, about 10 000 instructions per variable, on every call; start-up read
/// it a dozen times (scripts/bench-runtime). `all` builds the dictionary once and hands
/// it out again for as long as the raw `NAME=value` bytes are unchanged (compared on every
/// call, so a `setenv` in a test is seen at once).
public enum ProcessEnvironment {
    private static let cache = Mutex<(bytes: [UInt8], values: [String: String])?>(nil)

    /// Every `NAME=value` pair; for a name given twice, the first wins (as `getenv`).
    public static var all: [String: String] {
        let entries = rawEntries()
        let bytes = entries.reduce(into: [UInt8]()) { $0 += $1; $0.append(0) }
        return cache.withLock { cached in
            if let cached, cached.bytes == bytes { return cached.values }
            var values: [String: String] = [:]
            for entry in entries {
                guard let equals = entry.firstIndex(of: UInt8(ascii: "=")) else { continue }
                let name = String(decoding: entry[..<equals], as: UTF8.self)
                if values[name] == nil { values[name] = String(decoding: entry[(equals + 1)...], as: UTF8.self) }
            }
            cached = (bytes, values)
            return values
        }
    }

    /// One variable, or nil when unset.
    public static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The bytes of each `environ` entry, in order.
    private static func rawEntries() -> [[UInt8]] {
        // `clearenv()` leaves `environ` NULL, which the imported type does not admit.
        guard var entry = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>(bitPattern: Int(bitPattern: environ)) else {
            return []
        }
        var entries: [[UInt8]] = []
        while let pointer = entry.pointee {
            entries.append(Array(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer))))
            entry += 1
        }
        return entries
    }
}
