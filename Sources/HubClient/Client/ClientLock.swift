import Synchronization

/// A value guarded by a `Mutex`, in a reference that closures and threads can share
/// (a `Mutex` itself cannot be copied or captured). Every access goes through
/// `withLock`, so the value is never read or written by two threads at once.
final class ClientLock<Value>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: sending Value) { mutex = Mutex(value) }

    /// Runs `body` with exclusive access to the value. `body` must not block on other
    /// client locks or do I/O.
    func withLock<T>(_ body: (inout sending Value) throws -> sending T) rethrows -> sending T {
        try mutex.withLock(body)
    }
}
