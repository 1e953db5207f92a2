#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's environment variables, read straight from `environ`.
///
/// `ProcessInfo.processInfo.environment` builds its dictionary through Foundation's
/// string bridging, about 10 000 instructions per variable, on every call; start-up read
/// it a dozen times (scripts/bench-runtime). This reads the C array each call (so a
/// `setenv` in a test is seen), in a few hundred instructions per variable.
public enum ProcessEnvironment {
    /// Every `NAME=value` pair; for a name given twice, the first wins (as `getenv`).
    public static var all: [String: String] {
        var result: [String: String] = [:]
        // `clearenv()` leaves `environ` NULL, which the imported type does not admit.
        guard var entry = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>(bitPattern: Int(bitPattern: environ)) else {
            return result
        }
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.utf8.firstIndex(of: UInt8(ascii: "=")) {
                let name = String(text[..<equals])
                if result[name] == nil { result[name] = String(text[text.utf8.index(after: equals)...]) }
            }
            entry += 1
        }
        return result
    }

    /// One variable, or nil when unset.
    public static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
