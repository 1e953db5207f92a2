import Synchronization

/// A value made by `make` on the first read of `value` (from any thread; made once),
/// for work a run should do only if it needs it.
public final class OnFirstUse<Value: Sendable>: Sendable {
    private let made = Mutex<Value?>(nil)
    private let make: @Sendable () -> Value

    public init(_ make: @escaping @Sendable () -> Value) { self.make = make }

    /// The value if it was made already, without making it.
    var madeValue: Value? { made.withLock { $0 } }

    public var value: Value {
        made.withLock { made in
            if let made { return made }
            let value = make()
            made = value
            return value
        }
    }
}
