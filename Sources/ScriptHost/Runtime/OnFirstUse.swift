import Foundation

/// A value made by `make` on the first read of `value` (from any thread; made once),
/// for work a run should do only if it needs it.
public final class OnFirstUse<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var made: Value?
    private let make: @Sendable () -> Value

    public init(_ make: @escaping @Sendable () -> Value) { self.make = make }

    /// The value if it was made already, without making it.
    var madeValue: Value? { lock.withLock { made } }

    public var value: Value {
        lock.withLock {
            if let made { return made }
            let value = make()
            made = value
            return value
        }
    }
}
