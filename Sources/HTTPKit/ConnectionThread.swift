#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts a detached thread that runs a closure, and says whether it could: unlike
/// Foundation's `Thread.start()`, a failure (`EAGAIN` at a thread or memory limit) is
/// reported, so the server can refuse one connection instead of stopping.
enum ConnectionThread {
    /// Runs `body` on a new detached thread with an 8 MiB stack (the size the main
    /// thread's handlers are written for). Returns false, without running `body`, if no
    /// thread could be created.
    static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        let box = Unmanaged.passRetained(Box(body))
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        pthread_attr_setstacksize(&attributes, 8 << 20)
        #if canImport(Glibc)
        var thread = pthread_t()
        #else
        var thread: pthread_t?
        #endif
        let created = pthread_create(&thread, &attributes, { context in
            #if canImport(Glibc)
            let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
            #else
            let box = Unmanaged<Box>.fromOpaque(context).takeRetainedValue()
            #endif
            box.body()
            return nil
        }, box.toOpaque())
        guard created == 0 else {
            box.release()
            return false
        }
        return true
    }

    private final class Box: @unchecked Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
