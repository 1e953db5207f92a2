import Foundation

/// Injected failures, applied around each Hub request (never to `GET /health`).
///
/// Spec syntax: comma-separated `key=value` pairs, e.g.
/// `error=0.1,unavailable=0.05,retry_after=1,latency=20ms,lost=0.1,seed=7`.
/// - `error`: probability of `500 internal_error`, returned before any change.
/// - `unavailable`: probability of `503 service_unavailable` with `Retry-After`, before any change.
/// - `retry_after`: seconds for that `Retry-After` (default 1).
/// - `latency`: added delay per request (`20ms`, `1s`, or a bare number of milliseconds).
/// - `lost`: probability that the change is committed and the response then dropped
///   (`HTTPResponseMessage.dropped == true`).
/// - `dup`: probability that a webhook event is delivered twice (two deliveries, one event id).
/// - `reorder`: probability that a webhook delivery is held back (0.3 s), so later events overtake it.
/// - `seed`: seed of the deterministic random source that draws the faults (default 0).
/// - `unimplemented`: route patterns, joined by `+`, whose requests all get
///   `501 not_implemented` (a Hub without that feature): a pattern matches every route
///   it is a segment-wise prefix of, e.g. `webhooks` (every webhook route),
///   `users/me/notifications`, `applications/:id/notifications`.
/// An empty string or `none` means no faults.
public struct FaultSpec: Sendable, Equatable {
    public var errorRate: Double
    public var unavailableRate: Double
    public var retryAfterSeconds: Int
    public var latency: Duration
    public var lostRate: Double
    public var duplicateRate: Double = 0
    public var reorderRate: Double = 0
    /// Route patterns answered `501 not_implemented` (see `unimplemented` above).
    public var unimplemented: [String] = []
    public var seed: UInt64

    public static let none = FaultSpec()

    public init(errorRate: Double = 0, unavailableRate: Double = 0, retryAfterSeconds: Int = 1,
                latency: Duration = .zero, lostRate: Double = 0, seed: UInt64 = 0) {
        self.errorRate = errorRate
        self.unavailableRate = unavailableRate
        self.retryAfterSeconds = retryAfterSeconds
        self.latency = latency
        self.lostRate = lostRate
        self.seed = seed
    }

    /// Whether any fault can happen.
    public var isNone: Bool {
        errorRate == 0 && unavailableRate == 0 && lostRate == 0 && latency == .zero && unimplemented.isEmpty
    }

    /// Whether `route` (a pattern's segments, `[":id", …]` for parameters) is switched off.
    func isUnimplemented(_ route: [String]) -> Bool {
        unimplemented.contains { pattern in
            let prefix = pattern.split(separator: "/").map(String.init)
            return prefix.count <= route.count && Array(route.prefix(prefix.count)) == prefix
        }
    }

    /// Parses the spec syntax above. Throws `FaultSpecError` naming the bad pair.
    public init(parsing spec: String) throws {
        self.init()
        let trimmed = spec.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty || trimmed == "none" { return }
        for pair in trimmed.split(separator: ",") {
            let kv = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard kv.count == 2, !kv[1].isEmpty else {
                throw FaultSpecError(message: "bad fault spec entry '\(pair)': expected key=value")
            }
            let key = kv[0], value = kv[1]
            switch key {
            case "error": errorRate = try Self.rate(key, value)
            case "unavailable": unavailableRate = try Self.rate(key, value)
            case "lost": lostRate = try Self.rate(key, value)
            case "dup": duplicateRate = try Self.rate(key, value)
            case "reorder": reorderRate = try Self.rate(key, value)
            case "retry_after":
                guard let n = Int(value), n >= 0 else {
                    throw FaultSpecError(message: "bad fault spec: retry_after=\(value) must be a whole number of seconds")
                }
                retryAfterSeconds = n
            case "latency": latency = try Self.duration(value)
            case "unimplemented":
                unimplemented = value.split(separator: "+", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " /")) }
                guard !unimplemented.contains(where: \.isEmpty) else {
                    throw FaultSpecError(message: "bad fault spec: unimplemented=\(value) must list route patterns joined by +, such as webhooks+organizations")
                }
            case "seed":
                guard let n = UInt64(value) else {
                    throw FaultSpecError(message: "bad fault spec: seed=\(value) must be a non-negative integer")
                }
                seed = n
            default:
                throw FaultSpecError(message: "unknown fault '\(key)'; known: error, unavailable, retry_after, latency, lost, dup, reorder, unimplemented, seed")
            }
        }
        if errorRate + unavailableRate > 1 {
            throw FaultSpecError(message: "bad fault spec: error + unavailable must not exceed 1")
        }
    }

    private static func rate(_ key: String, _ value: String) throws -> Double {
        guard let r = Double(value), r >= 0, r <= 1 else {
            throw FaultSpecError(message: "bad fault spec: \(key)=\(value) must be a probability between 0 and 1")
        }
        return r
    }

    private static func duration(_ value: String) throws -> Duration {
        var number = value
        var scale = 1.0  // milliseconds
        if value.hasSuffix("ms") { number = String(value.dropLast(2)) }
        else if value.hasSuffix("s") { number = String(value.dropLast()); scale = 1000 }
        guard let n = Double(number), n >= 0 else {
            throw FaultSpecError(message: "bad fault spec: latency=\(value) must look like 20ms or 1s")
        }
        return .microseconds(Int64(n * scale * 1000))
    }
}

/// A malformed fault spec; `message` says which entry and what is expected.
public struct FaultSpecError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { message }
}

/// SplitMix64: a small deterministic random source for faults and seeding.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// A uniform double in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
