import CSodium
import Foundation

/// SHA-256 digests (libsodium), as lowercase hex: recipe digests, body digests and
/// idempotency keys.
public enum Digest {
    /// `sodium_init()` once per process; it is idempotent and thread-safe, but a
    /// failure (no entropy source) would make every later call unsafe.
    private static let initialized: Bool = sodium_init() >= 0

    /// The SHA-256 of `data` as 64 lowercase hex characters.
    public static func sha256Hex(_ data: Data) -> String {
        precondition(initialized, "libsodium failed to initialize")
        var out = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        data.withUnsafeBytes { raw in
            let base = raw.bindMemory(to: UInt8.self).baseAddress
            // crypto_hash_sha256 accepts a null pointer for zero bytes.
            _ = crypto_hash_sha256(&out, base, UInt64(raw.count))
        }
        return hex(out)
    }

    /// The SHA-256 of the UTF-8 bytes of `text`.
    public static func sha256Hex(_ text: String) -> String {
        precondition(initialized, "libsodium failed to initialize")
        var out = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        var text = text   // its bytes in place: no `Data` (a dynamic cast at its first use)
        text.withUTF8 { bytes in _ = crypto_hash_sha256(&out, bytes.baseAddress, UInt64(bytes.count)) }
        return hex(out)
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
