import CSodium

/// Bytes that must not outlive their use: a key, a passphrase, a secret's value.
///
/// Contract:
/// - The bytes live in `sodium_malloc` memory: guard pages on both sides, the pages
///   locked with `mlock` where the system allows it (so they are not swapped out) and
///   left out of core dumps. They never sit in a Swift `String`, `Array` or `Data`
///   unless a caller copies them out of `withUnsafeBytes` itself.
/// - They are zeroed (`sodium_memzero`) and freed (`sodium_free`, which unlocks and
///   zeroes again) when the last reference goes.
/// - There is no string form, no equality and no hashing: `description` names only the
///   size. Read them inside `withUnsafeBytes`, and copy nothing out of the closure.
public final class SecretBytes: @unchecked Sendable {
    /// How many bytes are in use (`capacity` may be more).
    public private(set) var count: Int
    /// How many bytes the buffer holds.
    public let capacity: Int
    private let base: UnsafeMutableRawPointer

    /// A zeroed buffer of `count` bytes (`capacity` at least `count`).
    public init(count: Int, capacity: Int? = nil) throws {
        let capacity = max(capacity ?? count, count, 1)
        guard Sodium.ready, let pointer = sodium_malloc(capacity) else {
            throw VaultError(.internalError, "cannot allocate \(capacity) bytes of locked memory for key material")
        }
        sodium_memzero(pointer, capacity)
        base = pointer
        self.capacity = capacity
        self.count = count
    }

    /// Copies `bytes` (for tests and for values that already exist elsewhere).
    public convenience init(copying bytes: some Collection<UInt8>) throws {
        try self.init(count: bytes.count)
        var k = 0
        for b in bytes { base.storeBytes(of: b, toByteOffset: k, as: UInt8.self); k += 1 }
    }

    deinit {
        sodium_memzero(base, capacity)
        sodium_free(base)
    }

    /// Reads the bytes in place. Nothing should escape the closure.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Writes the bytes in place (the first `count` bytes).
    public func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeMutableRawBufferPointer(start: base, count: count))
    }

    /// Writes into the whole buffer; `body` returns how many bytes are now in use.
    func fill(_ body: (UnsafeMutableRawBufferPointer) throws -> Int) rethrows {
        let used = try body(UnsafeMutableRawBufferPointer(start: base, count: capacity))
        precondition(used >= 0 && used <= capacity)
        if used < count { sodium_memzero(base + used, count - used) }
        count = used
    }

    /// Writes after the bytes in use, into the free capacity; `body` returns how many
    /// bytes it wrote, which are then in use. Returns that count.
    @discardableResult
    public func append(_ body: (UnsafeMutableRawBufferPointer) throws -> Int) rethrows -> Int {
        let written = try body(UnsafeMutableRawBufferPointer(start: base + count, count: capacity - count))
        precondition(written >= 0 && written <= capacity - count)
        count += written
        return written
    }

    /// Shortens the bytes in use to `newCount`, zeroing what is dropped.
    public func truncate(to newCount: Int) {
        precondition(newCount >= 0 && newCount <= count)
        sodium_memzero(base + newCount, count - newCount)
        count = newCount
    }

    /// Compares in constant time (for equal counts).
    public func constantTimeEquals(_ other: SecretBytes) -> Bool {
        count == other.count && sodium_memcmp(base, other.base, count) == 0
    }

    var pointer: UnsafeMutableRawPointer { base }
}

extension SecretBytes: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "<secret, \(count) bytes>" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
