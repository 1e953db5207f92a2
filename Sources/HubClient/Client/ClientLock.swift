import Foundation

/// A value guarded by a lock. Every access goes through `withLock`, so the value is
/// never read or written by two threads at once.
final class ClientLock<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value. `body` must not block on other
    /// client locks or do I/O.
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
