import CSodium
import CVault

/// The one SHA-256 of hubscript: the vault's object ids and the journal's recipe, body
/// and library digests. The x86 SHA extensions where the CPU has them (CVault, about
/// 1 GiB/s), else libsodium's `crypto_hash_sha256_*` (portable, 130–220 MiB/s). The same
/// digest either way (SHA256KitTests checks one against the other and against FIPS
/// 180-4's vectors).
public struct SHA256 {
    /// Whether this process hashes with the SHA extensions.
    static let accelerated = hs_sha256_ni_available() != 0

    /// The digest's length in bytes.
    public static let byteCount = 32

    private enum State {
        case accelerated(hs_sha256_ni_state)
        case sodium(crypto_hash_sha256_state)
    }

    private var state: State

    public init() { self.init(accelerated: SHA256.accelerated) }

    init(accelerated: Bool) {
        if accelerated {
            var s = hs_sha256_ni_state()
            hs_sha256_ni_init(&s)
            state = .accelerated(s)
        } else {
            var s = crypto_hash_sha256_state()
            crypto_hash_sha256_init(&s)
            state = .sodium(s)
        }
    }

    /// The 32-byte digest of `bytes` (an empty buffer, also with no base address, is the
    /// empty message).
    public static func digest(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finish()
    }

    /// Adds `bytes` to the message.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0, let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        switch state {
        case .accelerated(var s):
            hs_sha256_ni_update(&s, base, bytes.count)
            state = .accelerated(s)
        case .sodium(var s):
            _ = crypto_hash_sha256_update(&s, base, UInt64(bytes.count))
            state = .sodium(s)
        }
    }

    /// The digest of everything added (the hasher is spent).
    public mutating func finish() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Self.byteCount)
        switch state {
        case .accelerated(var s): hs_sha256_ni_final(&s, &digest)
        case .sodium(var s): crypto_hash_sha256_final(&s, &digest)
        }
        return digest
    }
}
