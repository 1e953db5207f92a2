import Foundation

/// Work run on a thread of its own while the caller does something else; `value()` waits
/// for it and returns its result (or rethrows its error). If no thread can be started,
/// the work runs in `value()` instead: never lost, only not overlapped.
final class BackgroundWork<Value: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var work: (@Sendable () throws -> Value)?
    private var result: Result<Value, any Error>?

    init(_ work: @escaping @Sendable () throws -> Value) {
        self.work = work
        _ = DetachedThread.start { [self] in runTaken() }
    }

    /// Waits for the work (or runs it here, if the thread never took it).
    func value() throws -> Value {
        runTaken()
        condition.lock()
        defer { condition.unlock() }
        while result == nil { condition.wait() }
        return try result!.get()
    }

    /// Runs the work if nobody has taken it yet, and publishes its result.
    private func runTaken() {
        condition.lock()
        let taken = work
        work = nil
        condition.unlock()
        guard let taken else { return }
        let outcome = Result { try taken() }
        condition.lock()
        result = outcome
        condition.broadcast()
        condition.unlock()
    }
}

/// A detached POSIX thread running `body` (not a Foundation `Thread`, whose start is
/// heavier). Returns false if none could be started.
enum DetachedThread {
    private final class Body: @unchecked Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(&thread, &attributes, { context in
            Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        if started != 0 { Unmanaged<Body>.fromOpaque(context).release() }
        return started == 0
    }
}
