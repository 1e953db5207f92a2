import CSodium

/// One direction of `crypto_secretstream_xchacha20poly1305`. The state holds key
/// material, so it lives in `sodium_malloc` memory and is freed (zeroed) with the
/// object.
final class SecretStream {
    enum Tag { case message, final }

    private let state: UnsafeMutablePointer<crypto_secretstream_xchacha20poly1305_state>

    private init() throws {
        guard Sodium.ready,
              let raw = sodium_malloc(MemoryLayout<crypto_secretstream_xchacha20poly1305_state>.size) else {
            throw VaultError(.internalError, "cannot allocate locked memory for a stream state")
        }
        state = raw.bindMemory(to: crypto_secretstream_xchacha20poly1305_state.self, capacity: 1)
    }

    deinit {
        sodium_memzero(state, MemoryLayout<crypto_secretstream_xchacha20poly1305_state>.size)
        sodium_free(state)
    }

    /// A stream to encrypt with `key`; `header` receives the 24 bytes the reader needs.
    static func push(key: SecretBytes, header: inout [UInt8]) throws -> SecretStream {
        let stream = try SecretStream()
        header = [UInt8](repeating: 0, count: Sodium.streamHeaderBytes)
        let status = key.withUnsafeBytes { k in
            crypto_secretstream_xchacha20poly1305_init_push(stream.state, &header, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        guard status == 0 else { throw VaultError(.internalError, "crypto_secretstream_xchacha20poly1305_init_push failed") }
        return stream
    }

    /// A stream to decrypt with `key` from the writer's `header`; nil if the header is
    /// unusable.
    static func pull(key: SecretBytes, header: [UInt8]) throws -> SecretStream? {
        let stream = try SecretStream()
        guard header.count == Sodium.streamHeaderBytes else { return nil }
        let status = key.withUnsafeBytes { k in
            crypto_secretstream_xchacha20poly1305_init_pull(stream.state, header, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return status == 0 ? stream : nil
    }

    /// Encrypts `message` into `out` (`message.count + 17` bytes); returns that count.
    func push(_ message: UnsafeRawBufferPointer, ad: [UInt8], tag: Tag, into out: UnsafeMutableRawBufferPointer) -> Int {
        precondition(out.count >= message.count + Sodium.streamOverhead)
        var length: UInt64 = 0
        let t = tag == .final ? crypto_secretstream_xchacha20poly1305_tag_final() : crypto_secretstream_xchacha20poly1305_tag_message()
        let status = crypto_secretstream_xchacha20poly1305_push(
            state, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length,
            message.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(message.count), ad, UInt64(ad.count), t)
        precondition(status == 0, "crypto_secretstream_xchacha20poly1305_push failed")
        return Int(length)
    }

    /// Decrypts one chunk into `out`; nil if it does not authenticate (altered,
    /// reordered, or from another stream). Otherwise the plaintext length and the tag
    /// (a tag other than message or final is refused as nil).
    func pull(_ chunk: UnsafeRawBufferPointer, ad: [UInt8], into out: UnsafeMutableRawBufferPointer) -> (count: Int, tag: Tag)? {
        guard chunk.count >= Sodium.streamOverhead, out.count >= chunk.count - Sodium.streamOverhead else { return nil }
        var length: UInt64 = 0
        var tag: UInt8 = 0
        let status = crypto_secretstream_xchacha20poly1305_pull(
            state, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length, &tag,
            chunk.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(chunk.count), ad, UInt64(ad.count))
        guard status == 0 else { return nil }
        if tag == crypto_secretstream_xchacha20poly1305_tag_final() { return (Int(length), .final) }
        if tag == crypto_secretstream_xchacha20poly1305_tag_message() { return (Int(length), .message) }
        return nil
    }
}
