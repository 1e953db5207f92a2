import CSodium
import Foundation
import SystemText

/// The Hub's webhook signature (docs/webhooks.md, "Delivery"):
/// `Substratal-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "{t}.{raw body}")>`,
/// with one `v1=` per live secret (two during a rotation's 24-hour overlap). The sandbox
/// signs with it; `hubscript listen` verifies with it.
public enum WebhookSignature {
    /// HMAC-SHA256 of `"{timestamp}.{body}"` keyed with `secret`.
    public static func mac(secret: [UInt8], timestamp: Int, body: Data) -> [UInt8] {
        precondition(sodium_init() >= 0, "libsodium failed to initialize")
        var state = crypto_auth_hmacsha256_state()
        crypto_auth_hmacsha256_init(&state, secret, secret.count)
        let prefix = Array("\(timestamp).".utf8)
        crypto_auth_hmacsha256_update(&state, prefix, UInt64(prefix.count))
        body.withUnsafeBytes { raw in
            _ = crypto_auth_hmacsha256_update(&state, raw.bindMemory(to: UInt8.self).baseAddress, UInt64(raw.count))
        }
        var out = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_BYTES))
        crypto_auth_hmacsha256_final(&state, &out)
        return out
    }

    /// The lowercase hex HMAC of `"{timestamp}.{body}"` keyed with `secret`'s UTF-8 bytes.
    public static func hex(secret: String, timestamp: Int, body: Data) -> String {
        Hex.encode(mac(secret: Array(secret.utf8), timestamp: timestamp, body: body))
    }

    /// Whether `a` and `b` are equal, in time that depends only on their lengths.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && sodium_memcmp(a, b, a.count) == 0
    }

    /// The header value signed with every secret in `secrets` (newest first).
    public static func header(secrets: [String], timestamp: Int, body: Data) -> String {
        (["t=\(timestamp)"] + secrets.map { "v1=" + hex(secret: $0, timestamp: timestamp, body: body) }).joined(separator: ",")
    }
}
