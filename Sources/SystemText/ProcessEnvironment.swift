#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The process's environment variables, read straight from `environ`.
///
/// `ProcessInfo.processInfo.environment` builds its dictionary through Foundation's
/// string bridging, every variable on every call, and start-up reads it many times
/// (docs/performance.md, "What start-up avoids"). `all` builds the dictionary once and hands
/// it out again for as long as the raw `NAME=value` bytes are unchanged (compared in place
/// on every call, so a `setenv` in a test is seen at once).
public enum ProcessEnvironment {
    private static let cache = Mutex<(bytes: [UInt8], values: [String: String])?>(nil)

    /// Every `NAME=value` pair; for a name given twice, the first wins (as `getenv`).
    public static var all: [String: String] {
        cache.withLock { cached in
            if let cached, environmentMatches(cached.bytes) { return cached.values }
            let entries = rawEntries()
            var values: [String: String] = [:]
            for entry in entries {
                guard let equals = entry.firstIndex(of: UInt8(ascii: "=")) else { continue }
                let name = String(decoding: entry[..<equals], as: UTF8.self)
                if values[name] == nil { values[name] = String(decoding: entry[(equals + 1)...], as: UTF8.self) }
            }
            cached = (entries.reduce(into: [UInt8]()) { $0 += $1; $0.append(0) }, values)
            return values
        }
    }

    /// Whether `environ` holds exactly `bytes` (each entry followed by a 0), compared in
    /// place: no copy of the environment per call.
    private static func environmentMatches(_ bytes: [UInt8]) -> Bool {
        guard var entry = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>(bitPattern: Int(bitPattern: environ)) else {
            return bytes.isEmpty
        }
        return bytes.withUnsafeBufferPointer { buffer in
            var offset = 0
            while let pointer = entry.pointee {
                let length = strlen(pointer)
                guard offset + length < buffer.count, buffer[offset + length] == 0,
                      memcmp(buffer.baseAddress! + offset, pointer, length) == 0 else { return false }
                offset += length + 1
                entry += 1
            }
            return offset == buffer.count
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
