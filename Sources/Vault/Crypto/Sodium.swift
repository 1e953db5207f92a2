import CSodium
import SystemText

/// The vault's only door to libsodium's one-shot primitives (streams:
/// `SecretStream.swift`; locked memory: `SecretBytes.swift`). Sizes are the format's
/// (docs/vault-format.md) and are checked against the library once.
enum Sodium {
    /// `sodium_init()` once per process (idempotent and thread-safe); false if the
    /// library could not start (no entropy source), or its sizes are not the format's.
    static let ready: Bool = sodium_init() >= 0
        && crypto_aead_xchacha20poly1305_ietf_keybytes() == keyBytes
        && crypto_aead_xchacha20poly1305_ietf_npubbytes() == nonceBytes
        && crypto_aead_xchacha20poly1305_ietf_abytes() == tagBytes
        && crypto_pwhash_saltbytes() == saltBytes
        && crypto_secretstream_xchacha20poly1305_keybytes() == keyBytes
        && crypto_secretstream_xchacha20poly1305_headerbytes() == streamHeaderBytes
        && crypto_secretstream_xchacha20poly1305_abytes() == streamOverhead
        && crypto_hash_sha256_bytes() == sha256Bytes

    static let keyBytes = 32
    static let nonceBytes = 24
    static let tagBytes = 16
    static let saltBytes = 16
    static let streamHeaderBytes = 24
    static let streamOverhead = 17
    static let sha256Bytes = 32

    static func ensureReady() throws {
        guard ready else { throw VaultError(.internalError, "libsodium could not be initialised (no entropy source?)") }
    }

    /// `randombytes_buf`: the system's CSPRNG.
    static func randomBytes(into buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress else { return }
        randombytes_buf(base, buffer.count)
    }

    // MARK: XChaCha20-Poly1305 (IETF) AEAD

    /// Seals `plaintext` under `key`: ciphertext followed by the 16-byte tag.
    static func seal(_ plaintext: UnsafeRawBufferPointer, ad: [UInt8], nonce: [UInt8], key: SecretBytes) -> [UInt8] {
        precondition(nonce.count == nonceBytes && key.count == keyBytes)
        var sealed = [UInt8](repeating: 0, count: plaintext.count + tagBytes)
        var length: UInt64 = 0
        let status = key.withUnsafeBytes { k in
            crypto_aead_xchacha20poly1305_ietf_encrypt(
                &sealed, &length, plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                ad, UInt64(ad.count), nil, nonce, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        precondition(status == 0 && Int(length) == sealed.count, "crypto_aead_xchacha20poly1305_ietf_encrypt failed")
        return sealed
    }

    /// Opens `sealed` into `out` (whose capacity must be at least `sealed.count - 16`).
    /// False if the tag does not verify: wrong key, other associated data, or altered
    /// bytes. `out` then holds nothing.
    static func open(_ sealed: ArraySlice<UInt8>, ad: [UInt8], nonce: ArraySlice<UInt8>, key: SecretBytes, into out: SecretBytes) -> Bool {
        precondition(nonce.count == nonceBytes && key.count == keyBytes)
        guard sealed.count >= tagBytes, out.capacity >= sealed.count - tagBytes else { return false }
        var ok = false
        out.fill { buffer in
            var length: UInt64 = 0
            let status = sealed.withUnsafeBufferPointer { c in
                nonce.withUnsafeBufferPointer { n in
                    key.withUnsafeBytes { k in
                        crypto_aead_xchacha20poly1305_ietf_decrypt(
                            buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), &length, nil,
                            c.baseAddress!, UInt64(c.count), ad, UInt64(ad.count), n.baseAddress!,
                            k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
            ok = status == 0
            return ok ? Int(length) : 0
        }
        return ok
    }

    // MARK: Argon2id

    /// The bounds libsodium accepts for Argon2id13.
    static var opsLimitRange: ClosedRange<UInt64> {
        UInt64(crypto_pwhash_argon2id_opslimit_min())...UInt64(crypto_pwhash_argon2id_opslimit_max())
    }
    static var memLimitMinimum: UInt64 { UInt64(crypto_pwhash_argon2id_memlimit_min()) }

    /// Derives a 32-byte key from `passphrase` with Argon2id13 (`crypto_pwhash`). False
    /// if libsodium refused (limits, or not enough memory).
    static func deriveKey(into key: SecretBytes, passphrase: SecretBytes, salt: [UInt8], opsLimit: UInt64, memLimit: UInt64) -> Bool {
        precondition(key.count == keyBytes && salt.count == saltBytes)
        guard let mem = Int(exactly: memLimit) else { return false }
        return key.withUnsafeMutableBytes { out in
            passphrase.withUnsafeBytes { p in
                crypto_pwhash(out.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(keyBytes),
                              p.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(p.count), salt,
                              opsLimit, mem, crypto_pwhash_alg_argon2id13()) == 0
            }
        }
    }

    // MARK: Text forms

    /// Lowercase hex of ids and digests (never of a key: `createKeyFile` writes those in place).
    static func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

    /// Decodes exactly `key.count` bytes of hex or standard base64 from `text` into
    /// `key` (`sodium_hex2bin` / `sodium_base642bin`, no copies). False if `text` is
    /// anything else.
    static func decodeKey(_ text: UnsafeRawBufferPointer, into key: SecretBytes) -> Bool {
        guard let chars = text.baseAddress?.assumingMemoryBound(to: CChar.self) else { return false }
        return key.withUnsafeMutableBytes { out in
            let bin = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
            var length = 0
            var end: UnsafePointer<CChar>?
            if text.count == keyBytes * 2 {
                return sodium_hex2bin(bin, out.count, chars, text.count, nil, &length, &end) == 0
                    && length == out.count && end == chars + text.count
            }
            return sodium_base642bin(bin, out.count, chars, text.count, nil, &length, &end,
                                     sodium_base64_VARIANT_ORIGINAL) == 0
                && length == out.count && end == chars + text.count
        }
    }
}
