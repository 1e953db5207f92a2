import CSodium
import CVault

/// Incremental SHA-256: the x86 SHA extensions where the CPU has them (CVault,
/// about 1 GiB/s), else libsodium's `crypto_hash_sha256_*`. The same digest either way
/// (VaultTests checks one against the other).
struct SHA256 {
    /// Whether this process hashes with the SHA extensions.
    static let accelerated = hs_sha256_ni_available() != 0

    private enum State {
        case accelerated(hs_sha256_ni_state)
        case sodium(crypto_hash_sha256_state)
    }

    private var state: State

    init(accelerated: Bool = SHA256.accelerated) {
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

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        switch state {
        case .accelerated(var s):
            hs_sha256_ni_update(&s, base, bytes.count)
            state = .accelerated(s)
        case .sodium(var s):
            _ = crypto_hash_sha256_update(&s, base, UInt64(bytes.count))
            state = .sodium(s)
        }
    }

    mutating func finish() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Sodium.sha256Bytes)
        switch state {
        case .accelerated(var s): hs_sha256_ni_final(&s, &digest)
        case .sodium(var s): crypto_hash_sha256_final(&s, &digest)
        }
        return digest
    }
}
