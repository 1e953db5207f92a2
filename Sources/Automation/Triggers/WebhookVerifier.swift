import Foundation
import HTTPKit
import SystemText

/// Checks a Hub delivery's `Substratal-Signature: t=<unix>,v1=<hex>[,v1=<hex>]`
/// (docs/webhooks.md, "Delivery"): HMAC-SHA256 keyed with the signing secret over
/// `"{t}.{raw body}"`, compared in constant time against each `v1`, and `t` within
/// `tolerance` seconds of now (older or further in the future is refused).
public enum WebhookVerifier {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case missing
        case malformed
        case stale(seconds: Int)
        case mismatch

        public var description: String {
            switch self {
            case .missing: "no Substratal-Signature header"
            case .malformed: "the Substratal-Signature header is not t=<unix seconds>,v1=<hex>"
            case .stale(let s): "the signature's timestamp is \(abs(s)) s \(s > 0 ? "old" : "in the future") (at most 300 s either way)"
            case .mismatch: "the signature does not match the body with this trigger's secret"
            }
        }
    }

    /// The header's timestamp and `v1` signatures (raw bytes).
    public static func parse(_ header: String?) throws -> (t: Int, signatures: [[UInt8]]) {
        guard let header, !header.isEmpty else { throw Failure.missing }
        var t: Int?
        var signatures: [[UInt8]] = []
        for part in header.split(separator: ",") {
            let kv = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard kv.count == 2 else { throw Failure.malformed }
            switch kv[0] {
            case "t": t = Int(kv[1])
            case "v1":
                guard let bytes = Hex.decode(kv[1]), bytes.count == 32 else { throw Failure.malformed }
                signatures.append(bytes)
            default: continue   // other schemes are ignored, as the reference asks
            }
        }
        guard let t, !signatures.isEmpty else { throw Failure.malformed }
        return (t, signatures)
    }

    /// Throws `Failure` unless `header` signs `body` with `secret` within the window.
    public static func verify(header: String?, body: Data, secret: [UInt8], now: Date, tolerance: Int = 300) throws {
        let (t, signatures) = try parse(header)
        let age = Int(now.timeIntervalSince1970.rounded(.down)) - t
        guard abs(age) <= tolerance else { throw Failure.stale(seconds: age) }
        let expected = WebhookSignature.mac(secret: secret, timestamp: t, body: body)
        var matched = false
        for s in signatures where WebhookSignature.constantTimeEqual(s, expected) { matched = true }
        guard matched else { throw Failure.mismatch }
    }
}
